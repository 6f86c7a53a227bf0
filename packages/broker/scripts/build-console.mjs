#!/usr/bin/env node
/**
 * Builds the web console (console/) into dist/console/: one ES module bundle (Preact, uPlot and the browser
 * build of @mq/client, with esbuild's `browser` platform, so nothing Node-only can get in), one stylesheet,
 * the page. The broker serves them at /console; nothing is fetched from elsewhere at run time.
 * Run by `npm run build` (after tsc); prints the sizes.
 */
import { build } from 'esbuild';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'dist', 'console');
await mkdir(out, { recursive: true });

await build({
  entryPoints: [path.join(root, 'console', 'main.tsx')],
  outfile: path.join(out, 'console.js'),
  bundle: true,
  platform: 'browser',
  format: 'esm',
  target: 'es2022',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  minify: true,
  legalComments: 'linked',
  logLevel: 'warning',
});
const require = createRequire(import.meta.url);
const uplotCss = await readFile(require.resolve('uplot/dist/uPlot.min.css'), 'utf8');
await writeFile(path.join(out, 'console.css'), `${uplotCss}\n${await readFile(path.join(root, 'console', 'styles.css'), 'utf8')}`);
await copyFile(path.join(root, 'console', 'index.html'), path.join(out, 'index.html'));

const js = await readFile(path.join(out, 'console.js'));
console.log(`dist/console/console.js: ${(js.length / 1024).toFixed(1)} KiB minified, ${(gzipSync(js, { level: 9 }).length / 1024).toFixed(1)} KiB gzip`);
