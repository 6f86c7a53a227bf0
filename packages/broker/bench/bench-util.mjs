// What the broker's benchmark scripts share: the built CLI, `--name value`
// arguments and the statistics they print.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built `mq` CLI (run `npm run build` first). */
export const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../cli/dist/bin.js');

/** The number after `--name` on the command line, or `def`. */
export function arg(name, def) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
}

/** The median (the mean of the two middle values for an even count). */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** The `q` quantile (0..1) of values sorted ascending. */
export function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** Polls `fn` every `intervalMs` until it returns something truthy (thrown errors count as not yet); throws after `timeoutMs`. */
export async function waitFor(fn, timeoutMs, what, intervalMs = 100) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch {
      // not yet
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
