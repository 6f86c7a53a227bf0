/**
 * Partitioners. A keyed record goes to `toPositive(murmur2(key)) % n`, byte
 * for byte what Kafka's default partitioner (Java `Utils.murmur2` and
 * `Utils.toPositive`) computes, so a key lands where Kafka would put it. A
 * record without a key sticks to one partition until its batch completes.
 * The broker's HTTP produce imports `murmur2Partition` from
 * `@mq/client/partitioner`.
 */
import { Buffer, utf8Write } from '@mq/protocol/platform';

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/** Kafka's murmur2 (seed 0x9747b28c) over raw bytes (the first `length` of them); a signed 32-bit result like Java's. */
export function murmur2(data: Uint8Array, length = data.length): number {
  let h = (SEED ^ length) | 0;
  const length4 = length >>> 2;
  for (let i = 0; i < length4; i++) {
    const i4 = i << 2;
    let k = data[i4]! | (data[i4 + 1]! << 8) | (data[i4 + 2]! << 16) | (data[i4 + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M);
    h ^= k;
  }
  const tail = length & ~3;
  const rest = length & 3;
  if (rest === 3) h ^= data[tail + 2]! << 16;
  if (rest >= 2) h ^= data[tail + 1]! << 8;
  if (rest >= 1) {
    h ^= data[tail]!;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** Java's `Utils.toPositive`: clears the sign bit (not Math.abs). */
export function toPositive(n: number): number {
  return n & 0x7fffffff;
}

const scratch = Buffer.allocUnsafe(256);

/** The partition Kafka's default partitioner gives `key` among `numPartitions`. Strings hash as UTF-8. */
export function murmur2Partition(key: Uint8Array | string, numPartitions: number): number {
  if (typeof key === 'string') return toPositive(murmur2String(key)) % numPartitions;
  return toPositive(murmur2(key)) % numPartitions;
}

/** murmur2 of a string's UTF-8 bytes; short ASCII strings are read in place, others through a scratch buffer. */
function murmur2String(key: string): number {
  const n = key.length;
  if (n <= 64) {
    let i = 0;
    while (i < n) {
      const c = key.charCodeAt(i);
      if (c >= 0x80) break;
      scratch[i++] = c;
    }
    if (i === n) return murmur2(scratch, n);
  }
  if (n * 3 <= scratch.length) return murmur2(scratch, utf8Write(scratch, key, 0));
  return murmur2(Buffer.from(key, 'utf8'));
}

export interface PartitionerContext {
  topic: string;
  key: Uint8Array | string | null | undefined;
  numPartitions: number;
}

/** Picks a partition; returning -1 means "no opinion" (the sticky choice for unkeyed records). */
export type Partitioner = (ctx: PartitionerContext) => number;

/** Kafka's default: murmur2 for keyed records, -1 (sticky) for the rest. */
export const defaultPartitioner: Partitioner = ({ key, numPartitions }) =>
  key === null || key === undefined ? -1 : murmur2Partition(key, numPartitions);

/**
 * Sticky partition choice for unkeyed records (KIP-480): one partition per
 * topic until the batch it fills is closed, then another one at random.
 */
export class StickyPartitions {
  private readonly current = new Map<string, number>();

  constructor(private readonly random: () => number = Math.random) {}

  partition(topic: string, numPartitions: number): number {
    const p = this.current.get(topic);
    if (p !== undefined && p < numPartitions) return p;
    return this.next(topic, numPartitions, -1);
  }

  /** Called when a batch of `topic` on `previous` closed: move on to another partition. */
  onBatchClosed(topic: string, numPartitions: number, previous: number): void {
    if (this.current.get(topic) === previous) this.next(topic, numPartitions, previous);
  }

  private next(topic: string, numPartitions: number, previous: number): number {
    let p = Math.floor(this.random() * numPartitions);
    if (numPartitions > 1 && p === previous) p = (p + 1) % numPartitions;
    this.current.set(topic, p);
    return p;
  }
}
