/**
 * Hot-key salting: the records of a key that is hot (named, or seen more
 * often than a rate threshold) get a salt appended to their key
 * (`key` + U+001F + n, n in 0..salts-1, round robin), so Kafka's default
 * partitioner (murmur2 of the key) spreads them over up to `salts`
 * partitions instead of one. The cost, plainly: per-key order no longer
 * holds for a salted key (its records sit in several partitions), and its
 * consumers must merge them (`unsaltKey` gives back the original key). Keys
 * that are not hot are left exactly as they are.
 */

import { Buffer } from '@mq/protocol/platform';

/** The byte between a key and its salt (ASCII unit separator: not in ordinary keys). */
export const SALT_SEPARATOR = 0x1f;
const SEP = String.fromCharCode(SALT_SEPARATOR);

export interface KeySalterOptions {
  /** Keys always salted. */
  hotKeys?: ReadonlyArray<string>;
  /** How many salts (partitions at most) a hot key is spread over; default 8. */
  salts?: number;
  /** A key seen more than this many times in one second is salted for the next second too (0 / absent: only `hotKeys`). */
  hotRecordsPerSec?: number;
  /** For tests: the clock. */
  now?: () => number;
  /** The most keys counted per second (beyond it new keys are not counted); default 10,000. */
  maxTrackedKeys?: number;
}

export interface KeySalter {
  /** The key to send: salted when hot, else `key` itself. */
  salt<K extends string | Uint8Array | null | undefined>(key: K): K;
  /** Keys salted since the last second (named ones and detected ones). */
  hot(): string[];
}

function keyText(key: string | Uint8Array): string {
  return typeof key === 'string' ? key : Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('latin1');
}

export function createKeySalter(options: KeySalterOptions = {}): KeySalter {
  const salts = options.salts ?? 8;
  if (!Number.isInteger(salts) || salts < 1 || salts > 1000) throw new RangeError(`salts must be an integer from 1 to 1000, got ${salts}`);
  const named = new Set(options.hotKeys ?? []);
  const threshold = options.hotRecordsPerSec ?? 0;
  const now = options.now ?? Date.now;
  const maxTracked = options.maxTrackedKeys ?? 10_000;
  let window = Math.floor(now() / 1000);
  let counts = new Map<string, number>();
  let detected = new Set<string>();
  const next = new Map<string, number>();

  function roll(): void {
    const w = Math.floor(now() / 1000);
    if (w === window) return;
    detected = new Set(w === window + 1 ? [...counts].filter(([, n]) => n > threshold).map(([k]) => k) : []);
    counts = new Map();
    window = w;
  }

  return {
    salt<K extends string | Uint8Array | null | undefined>(key: K): K {
      if (key === null || key === undefined) return key;
      const text = keyText(key);
      let hot = named.has(text);
      if (threshold > 0) {
        roll();
        const n = counts.get(text);
        if (n !== undefined || counts.size < maxTracked) counts.set(text, (n ?? 0) + 1);
        hot ||= detected.has(text);
      }
      if (!hot) return key;
      const i = next.get(text) ?? 0;
      next.set(text, (i + 1) % salts);
      if (next.size > maxTracked) next.clear();
      if (typeof key === 'string') return `${key}${SEP}${i}` as K;
      const suffix = Buffer.from(`${SEP}${i}`, 'latin1');
      const out = new Uint8Array(key.byteLength + suffix.length);
      out.set(key, 0);
      out.set(suffix, key.byteLength);
      return out as K;
    },
    hot(): string[] {
      if (threshold > 0) roll();
      return [...new Set([...named, ...detected])];
    },
  };
}

/** The original key of a record whose key may have been salted (unsalted keys come back unchanged). */
export function unsaltKey<K extends string | Uint8Array | null | undefined>(key: K): K {
  if (key === null || key === undefined) return key;
  if (typeof key === 'string') {
    const at = key.lastIndexOf(SEP);
    const digits = at >= 0 ? key.slice(at + 1) : '';
    return (at >= 0 && digits.length >= 1 && digits.length <= 4 && /^\d+$/.test(digits) ? key.slice(0, at) : key) as K;
  }
  const bytes = key as Uint8Array;
  for (let i = bytes.byteLength - 1, digits = 0; i >= 0 && digits <= 4; i--, digits++) {
    const b = bytes[i]!;
    if (b === SALT_SEPARATOR) return (digits > 0 ? bytes.subarray(0, i) : bytes) as K;
    if (b < 0x30 || b > 0x39) break;
  }
  return key;
}
