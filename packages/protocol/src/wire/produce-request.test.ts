import { mq } from '../gen/mq.js';
import { decodeRequest, encodeRequest } from './frames.js';
import { decodeProduceRequestFrame } from './produce-request.js';

/** A small deterministic generator (the frames must be the same on every run). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

function randomFrame(r: () => number): mq.IRequestFrame {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const topics = [];
  for (let t = pick([0, 1, 1, 2, 3]); t > 0; t--) {
    const partitions = [];
    for (let p = pick([0, 1, 1, 2, 4]); p > 0; p--) {
      partitions.push({ partition: pick([0, 1, 7, 300, 0xffffffff]), records: Buffer.alloc(pick([0, 1, 61, 200, 5000]), Math.floor(r() * 256)) });
    }
    topics.push({ name: pick(['', 't', 'orders', 'x'.repeat(249)]), partitions });
  }
  return {
    correlationId: pick([0, 1, 127, 128, 0xffffffff]),
    apiVersion: pick([0, 1, 2]),
    clientId: pick(['', 'mq-bench', 'c'.repeat(300)]),
    produce: {
      acks: pick([0, 1, -1, 2, -2147483648, 2147483647]),
      timeoutMs: pick([0, 30_000, 0xffffffff]),
      topics,
      transactionalId: pick(['', '', 'txn-1']),
      partialAnswers: pick([false, true]),
    },
  };
}

describe('decodeProduceRequestFrame', () => {
  it('decodes every produce frame to what protobufjs decodes it to (instances, own fields, record views)', () => {
    const r = rng(21);
    for (let i = 0; i < 2000; i++) {
      const bytes = encodeRequest(randomFrame(r));
      const ours = decodeProduceRequestFrame(bytes);
      expect(ours).toBeDefined();
      expect(ours).toStrictEqual(mq.RequestFrame.decode(bytes));
      expect(ours!.body).toBe('produce');
    }
  });

  it('treats fields written with their default value as protobufjs does (no own property)', () => {
    const partition = [0x08, 0x00, 0x12, 0x00];
    const topic = [0x0a, 0x00, 0x12, partition.length, ...partition];
    const produce = [0x08, 0x00, 0x10, 0x00, 0x1a, topic.length, ...topic, 0x22, 0x00, 0x28, 0x00];
    const bytes = Buffer.from([0x08, 0x00, 0x10, 0x00, 0x1a, 0x00, 0xa2, 0x01, produce.length, ...produce]);
    const ours = decodeProduceRequestFrame(bytes);
    expect(ours).toStrictEqual(mq.RequestFrame.decode(bytes));
    expect(Object.keys(ours!.produce!.topics![0]!.partitions![0]!)).toEqual([]);
  });

  it('merges a produce body given twice, as protobufjs does', () => {
    const a = Buffer.from(encodeRequest({ correlationId: 5, produce: { acks: -1, timeoutMs: 10, topics: [{ name: 'a', partitions: [{ partition: 1, records: Buffer.from('xy') }] }] } }));
    const b = Buffer.from(encodeRequest({ produce: { acks: 0, topics: [{ name: 'b', partitions: [] }], partialAnswers: true } }));
    const both = Buffer.concat([a, b]);
    const ours = decodeProduceRequestFrame(both);
    expect(ours).toStrictEqual(mq.RequestFrame.decode(both));
    expect(ours!.produce!.topics!.map((t) => t.name)).toEqual(['a', 'b']);
  });

  it('leaves to protobufjs what it does not take: other bodies, unknown fields, non-ASCII strings, bad lengths, the value budget', () => {
    const produce = { acks: 1, topics: [{ name: 't', partitions: [{ partition: 0, records: Buffer.from('abc') }] }] };
    const plain = Buffer.from(encodeRequest({ correlationId: 9, produce }));
    expect(decodeProduceRequestFrame(plain)).toBeDefined();
    expect(decodeProduceRequestFrame(encodeRequest({ correlationId: 9, metadata: {} }))).toBeUndefined();
    expect(decodeProduceRequestFrame(encodeRequest({ correlationId: 9 }))).toBeUndefined();
    expect(decodeProduceRequestFrame(encodeRequest({ correlationId: 9, clientId: 'clïent', produce }))).toBeUndefined();
    expect(decodeProduceRequestFrame(encodeRequest({ produce: { ...produce, topics: [{ name: 'tøpic', partitions: [] }] } }))).toBeUndefined();
    // An unknown field (99, varint) after the known ones.
    expect(decodeProduceRequestFrame(Buffer.concat([plain, Buffer.from([0x98, 0x06, 0x01])]))).toBeUndefined();
    // Cut short: the generic decoder raises the error.
    const cut = plain.subarray(0, plain.length - 2);
    expect(decodeProduceRequestFrame(cut)).toBeUndefined();
    expect(() => decodeRequest(cut)).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST' }));
    // Over the value budget: refused by decodeRequest as before, with the correlation id.
    expect(decodeProduceRequestFrame(plain, 3)).toBeUndefined();
    expect(() => decodeRequest(plain, 3)).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST', correlationId: 9 }));
    expect(decodeRequest(plain, 100)).toStrictEqual(mq.RequestFrame.decode(plain));
  });
});
