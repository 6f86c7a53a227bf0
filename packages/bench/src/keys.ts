import { MqError } from '@mq/protocol/errors';

/**
 * How records are keyed:
 * - `none`: no key (the client spreads records over partitions);
 * - `uniform:K`: one of K distinct keys, each equally likely;
 * - `hot`: a skewed load, 90% of records carry one hot key and the rest are
 *   spread uniformly over 1,000 other keys.
 */
export type KeySpec = { kind: 'none' } | { kind: 'uniform'; count: number } | { kind: 'hot'; hotShare: number; coldCount: number };

export const HOT_SHARE = 0.9;
export const HOT_COLD_KEYS = 1000;

export function parseKeySpec(text: string): KeySpec {
  const spec = text.trim();
  if (spec === 'none' || spec === '') return { kind: 'none' };
  if (spec === 'hot') return { kind: 'hot', hotShare: HOT_SHARE, coldCount: HOT_COLD_KEYS };
  const m = /^uniform:(\d+)$/.exec(spec);
  if (m) {
    const count = Number(m[1]);
    if (count >= 1 && Number.isSafeInteger(count)) return { kind: 'uniform', count };
  }
  throw new MqError('INVALID_ARGUMENT', `--keys "${text}" is not valid (use none, uniform:K with K >= 1, or hot)`);
}

export function formatKeySpec(spec: KeySpec): string {
  return spec.kind === 'uniform' ? `uniform:${spec.count}` : spec.kind;
}

/** A deterministic key source (a seeded xorshift), so two runs send the same keys. */
export type KeyGenerator = () => Buffer | undefined;

export function createKeyGenerator(spec: KeySpec, seed = 0x9e3779b9): KeyGenerator {
  if (spec.kind === 'none') return () => undefined;
  let state = seed >>> 0 || 1;
  const next = (): number => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 0x1_0000_0000;
  };
  const table = (n: number, prefix: string): Buffer[] => Array.from({ length: n }, (_, i) => Buffer.from(`${prefix}${i}`));
  if (spec.kind === 'uniform') {
    const keys = table(Math.min(spec.count, 1 << 16), 'k');
    if (spec.count <= keys.length) return () => keys[Math.floor(next() * spec.count)];
    return () => Buffer.from(`k${Math.floor(next() * spec.count)}`);
  }
  const hot = Buffer.from('hot');
  const cold = table(spec.coldCount, 'c');
  return () => (next() < spec.hotShare ? hot : cold[Math.floor(next() * cold.length)]);
}
