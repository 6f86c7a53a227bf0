#!/usr/bin/env node
/**
 * Bundles @mq/client for browsers with esbuild (`--bundle --platform=browser`,
 * which applies the `browser` export condition: @mq/protocol/platform and
 * @mq/client/transport pick their browser modules). No stubs, no aliases, no
 * injected globals: if anything Node-only were reachable from the entry
 * (a `node:*` import, a native addon), the build would fail here.
 *
 *   node scripts/bundle-browser.mjs [--out FILE]   (after `npm run build`)
 *
 * prints the bundle's size (minified, and gzip -9 of that). The e2e test
 * e2e/browser-client.test.ts bundles its page the same way (bundleBrowser()).
 */
import { build } from 'esbuild';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * Bundles `contents` (an ES module that imports '@mq/client', resolved from
 * `resolveDir`) for browsers; returns the code as text.
 */
export async function bundleBrowser({ contents = "export * from '@mq/client';", resolveDir = here, minify = true } = {}) {
  const result = await build({
    stdin: { contents, resolveDir, sourcefile: 'entry.mjs', loader: 'js' },
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    minify,
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outIndex = process.argv.indexOf('--out');
  const out = outIndex > 0 ? process.argv[outIndex + 1] : path.join(here, '..', 'dist', 'mq-client.browser.min.js');
  const code = await bundleBrowser();
  await mkdir(path.dirname(out), { recursive: true });
  await writeFile(out, code);
  const min = Buffer.byteLength(code);
  const gz = gzipSync(code, { level: 9 }).length;
  console.log(`${path.relative(process.cwd(), out)}: ${(min / 1024).toFixed(1)} KiB minified, ${(gz / 1024).toFixed(1)} KiB gzip`);
}
