import { createRequire } from 'node:module';
import fc from 'fast-check';
import { StickyPartitions, defaultPartitioner, murmur2, murmur2Partition, toPositive } from './partitioner.js';

const require = createRequire(import.meta.url);
// kafkajs (a dev dependency) ships Kafka's Java-compatible murmur2 and default partitioner.
const kafkajsMurmur2 = require('kafkajs/src/producer/partitioners/default/murmur2.js') as (key: Buffer | string) => number;
const { Partitioners } = require('kafkajs') as {
  Partitioners: {
    DefaultPartitioner: () => (a: { topic: string; partitionMetadata: Array<{ partitionId: number; leader: number }>; message: { key: Buffer | string } }) => number;
  };
};

// Known values of Java's Utils.murmur2 (Kafka's UtilsTest, also used by kafka-go and sarama).
const JAVA_MURMUR2: Array<[string, number]> = [
  ['21', -973932308],
  ['foobar', -790332482],
  ['a-little-bit-long-string', -985981536],
  ['a-little-bit-longer-string', -1486304829],
  ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
  ['abc', 479470107],
];

const KEYS = ['', 'a', 'ab', 'abc', 'abcd', 'order-1', 'order-42', 'user:1001', 'ключ', '日本語キー', 'a'.repeat(300), '\u0000\u00ff'];

describe('murmur2 partitioner', () => {
  it.each(JAVA_MURMUR2)('murmur2(%j) equals Java Utils.murmur2', (key, expected) => {
    expect(murmur2(Buffer.from(key))).toBe(expected);
    expect(kafkajsMurmur2(Buffer.from(key))).toBe(expected);
  });

  it('places a table of known keys where kafkajs\'s default (Kafka-compatible) partitioner does', () => {
    const kafkajs = Partitioners.DefaultPartitioner();
    for (const n of [1, 2, 3, 7, 12, 64, 1000]) {
      const partitionMetadata = Array.from({ length: n }, (_, i) => ({ partitionId: i, leader: 0 }));
      for (const key of KEYS) {
        const expected = kafkajs({ topic: 't', partitionMetadata, message: { key: Buffer.from(key) } });
        expect(murmur2Partition(key, n)).toBe(expected);
        expect(murmur2Partition(Buffer.from(key), n)).toBe(expected);
        expect(defaultPartitioner({ topic: 't', key, numPartitions: n })).toBe(expected);
      }
    }
  });

  it('agrees with kafkajs on arbitrary byte keys', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.integer({ min: 1, max: 500 }), (bytes, n) => {
        const b = Buffer.from(bytes);
        expect(murmur2(b)).toBe(kafkajsMurmur2(b));
        expect(murmur2Partition(b, n)).toBe(toPositive(kafkajsMurmur2(b)) % n);
      }),
      { numRuns: 500 },
    );
  });

  it('hashes long string keys (beyond the scratch buffer) the same as their bytes', () => {
    const key = 'x'.repeat(5000) + 'ü';
    expect(murmur2Partition(key, 17)).toBe(murmur2Partition(Buffer.from(key), 17));
  });

  it('toPositive clears the sign bit like Java (not Math.abs)', () => {
    expect(toPositive(-1)).toBe(0x7fffffff);
    expect(toPositive(-2147483648)).toBe(0);
    expect(toPositive(5)).toBe(5);
  });

  it('leaves unkeyed records to the sticky choice', () => {
    expect(defaultPartitioner({ topic: 't', key: null, numPartitions: 3 })).toBe(-1);
    expect(defaultPartitioner({ topic: 't', key: undefined, numPartitions: 3 })).toBe(-1);
  });
});

describe('StickyPartitions', () => {
  it('keeps one partition until its batch closes, then moves to another', () => {
    let r = 0;
    const seq = [0.1, 0.1, 0.9];
    const sticky = new StickyPartitions(() => seq[r++ % seq.length]!);
    const p = sticky.partition('t', 4);
    expect(sticky.partition('t', 4)).toBe(p);
    sticky.onBatchClosed('t', 4, p);
    const q = sticky.partition('t', 4);
    expect(q).not.toBe(p);
    expect(q).toBeGreaterThanOrEqual(0);
    expect(q).toBeLessThan(4);
  });

  it('ignores a closed batch of a partition it no longer sticks to', () => {
    const sticky = new StickyPartitions(() => 0.5);
    const p = sticky.partition('t', 4);
    sticky.onBatchClosed('t', 4, (p + 1) % 4);
    expect(sticky.partition('t', 4)).toBe(p);
  });
});
