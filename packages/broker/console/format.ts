/** How the console shows bytes (a record's key, value, header values): as text, JSON or hex. */
export type ViewMode = 'text' | 'json' | 'hex';

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Up to `limit` bytes as hex pairs, 16 to a line, with "…" when cut. */
export function hex(bytes: Uint8Array, limit = 256): string {
  const lines: string[] = [];
  const n = Math.min(bytes.length, limit);
  for (let i = 0; i < n; i += 16) {
    const row: string[] = [];
    for (let j = i; j < Math.min(i + 16, n); j++) row.push(bytes[j]!.toString(16).padStart(2, '0'));
    lines.push(row.join(' '));
  }
  if (bytes.length > limit) lines.push(`… ${bytes.length - limit} more bytes`);
  return lines.join('\n');
}

/**
 * Bytes shown in `mode`: `text` decodes UTF-8 (falling back to hex for bytes that are not UTF-8), `json`
 * pretty-prints when the text parses as JSON (else the text), `hex` always hex. Null is "null".
 */
export function showBytes(bytes: Uint8Array | null, mode: ViewMode): string {
  if (bytes === null) return 'null';
  if (mode === 'hex') return hex(bytes);
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return hex(bytes); // not UTF-8: show what it is
  }
  if (mode === 'json') {
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      return text;
    }
  }
  return text;
}

/** A record count or offset with thousands separators. */
export function count(n: number | null | undefined): string {
  return n === null || n === undefined ? '–' : n.toLocaleString('en-US');
}

/** Bytes as B / KiB / MiB / GiB. */
export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined || n < 0) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(1)} ${units[u]}`;
}

/** Records/s from two samples of a high watermark; null until there are two. */
export function rate(prev: { at: number; high: number } | undefined, now: { at: number; high: number }): number | null {
  if (!prev || now.at <= prev.at) return null;
  return Math.max(0, ((now.high - prev.high) * 1000) / (now.at - prev.at));
}
