import fc from 'fast-check';
import { ProducerState, PRODUCER_BATCHES_KEPT, lastSequence, nextSequence, type ProducerBatchHeader } from './producer-state.js';

const INT32_MAX = 0x7fff_ffff;

function h(producerId: number, producerEpoch: number, baseSequence: number, records = 1, maxTimestamp = 1000): ProducerBatchHeader {
  return { producerId, producerEpoch, baseSequence, lastOffsetDelta: records - 1, maxTimestamp };
}

/** Checks and, when admitted, records the batch at the next offset, as the log does. */
function appendTo(s: ProducerState, b: ProducerBatchHeader, next: { offset: number }): { offset: number; duplicate: boolean } {
  const v = s.check(b);
  if (v) return { offset: v.firstOffset, duplicate: true };
  const first = next.offset;
  s.update(b, first, first + b.lastOffsetDelta);
  next.offset += b.lastOffsetDelta + 1;
  return { offset: first, duplicate: false };
}

describe('sequence arithmetic', () => {
  test('wraps from 2^31-1 to 0 as Kafka does', () => {
    expect(nextSequence(5)).toBe(6);
    expect(nextSequence(INT32_MAX)).toBe(0);
    expect(lastSequence(10, 4)).toBe(14);
    expect(lastSequence(INT32_MAX, 0)).toBe(INT32_MAX);
    expect(lastSequence(INT32_MAX, 1)).toBe(0);
    expect(lastSequence(INT32_MAX - 1, 3)).toBe(1);
  });

  test('lastSequence(b, d) is d steps of nextSequence from b', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: INT32_MAX }), fc.integer({ min: 0, max: 50 }), (b, d) => {
        let s = b;
        for (let i = 0; i < d; i++) s = nextSequence(s);
        expect(lastSequence(b, d)).toBe(s);
      }),
    );
  });
});

describe('ProducerState checks', () => {
  test('a new producer must start at 0; then each batch must follow the last', () => {
    const s = new ProducerState();
    expect(() => s.check(h(7, 0, 3))).toThrow(expect.objectContaining({ code: 'UNKNOWN_PRODUCER_ID' }));
    expect(s.check(h(7, 0, 0, 3))).toBeNull();
    s.update(h(7, 0, 0, 3), 0, 2);
    expect(s.check(h(7, 0, 3, 2))).toBeNull();
    expect(() => s.check(h(7, 0, 4))).toThrow(expect.objectContaining({ code: 'OUT_OF_ORDER_SEQUENCE_NUMBER' }));
    expect(() => s.check(h(7, 0, 2))).toThrow(expect.objectContaining({ code: 'OUT_OF_ORDER_SEQUENCE_NUMBER' }));
  });

  test('a repeat of a cached batch is a duplicate answering the original offsets', () => {
    const s = new ProducerState();
    s.update(h(1, 0, 0, 3), 10, 12);
    s.update(h(1, 0, 3, 2), 20, 21);
    expect(s.check(h(1, 0, 0, 3))).toEqual({ firstOffset: 10, lastOffset: 12 });
    expect(s.check(h(1, 0, 3, 2))).toEqual({ firstOffset: 20, lastOffset: 21 });
    // Same first sequence, different length: not the same batch.
    expect(() => s.check(h(1, 0, 3, 1))).toThrow(expect.objectContaining({ code: 'OUT_OF_ORDER_SEQUENCE_NUMBER' }));
  });

  test('only the last 5 batches are remembered', () => {
    const s = new ProducerState();
    for (let i = 0; i < PRODUCER_BATCHES_KEPT + 1; i++) s.update(h(1, 0, i), i, i);
    expect(() => s.check(h(1, 0, 0))).toThrow(expect.objectContaining({ code: 'OUT_OF_ORDER_SEQUENCE_NUMBER' }));
    expect(s.check(h(1, 0, 1))).toEqual({ firstOffset: 1, lastOffset: 1 });
    expect(s.get(1)!.batches).toHaveLength(PRODUCER_BATCHES_KEPT);
  });

  test('epochs: older refused, newer must restart at 0 and resets the batches', () => {
    const s = new ProducerState();
    s.update(h(1, 3, 0, 2), 0, 1);
    expect(() => s.check(h(1, 2, 2))).toThrow(expect.objectContaining({ code: 'INVALID_PRODUCER_EPOCH' }));
    expect(() => s.check(h(1, 2, 0, 2))).toThrow(expect.objectContaining({ code: 'INVALID_PRODUCER_EPOCH' }));
    expect(() => s.check(h(1, 4, 2))).toThrow(expect.objectContaining({ code: 'OUT_OF_ORDER_SEQUENCE_NUMBER' }));
    expect(s.check(h(1, 4, 0))).toBeNull();
    s.update(h(1, 4, 0), 2, 2);
    expect(s.get(1)).toMatchObject({ epoch: 4, batches: [{ firstSeq: 0, lastSeq: 0, firstOffset: 2 }] });
  });

  test('the sequence wraps past 2^31-1', () => {
    const s = new ProducerState();
    s.update(h(1, 0, INT32_MAX - 1, 2), 0, 1); // sequences 2^31-2, 2^31-1
    expect(s.check(h(1, 0, 0, 5))).toBeNull();
    expect(() => s.check(h(1, 0, INT32_MAX + 1))).toThrow();
    s.update(h(1, 0, INT32_MAX, 3), 5, 7); // a batch that itself wraps: 2^31-1, 0, 1
    expect(s.get(1)!.batches.at(-1)!.lastSeq).toBe(1);
    expect(s.check(h(1, 0, 2))).toBeNull();
  });

  test('a producer id without a sequence is refused', () => {
    expect(() => new ProducerState().check(h(1, 0, -1))).toThrow(expect.objectContaining({ code: 'INVALID_RECORD' }));
  });

  test('checkAll checks several batches in order, each against what the earlier ones leave', () => {
    const s = new ProducerState();
    s.update(h(1, 0, 0, 2), 0, 1);
    expect(s.checkAll([h(1, 0, 2), h(1, 0, 3, 2), h(-1, -1, -1), h(2, 0, 0)])).toEqual([null, null, null, null]);
    expect(() => s.checkAll([h(1, 0, 2), h(1, 0, 4)])).toThrow(expect.objectContaining({ code: 'OUT_OF_ORDER_SEQUENCE_NUMBER' }));
    expect(s.checkAll([h(1, 0, 0, 2), h(1, 0, 2)])).toEqual([{ firstOffset: 0, lastOffset: 1 }, null]);
    // checkAll changes nothing.
    expect(s.get(1)!.batches).toHaveLength(1);
  });
});

describe('expiry and snapshots', () => {
  test('producers idle longer than the expiration are forgotten', () => {
    const s = new ProducerState();
    s.update(h(1, 0, 0, 1, 1000), 0, 0);
    s.update(h(2, 0, 0, 1, 5000), 1, 1);
    expect(s.expire(5000, 4000)).toBe(0);
    expect(s.expire(5001, 4000)).toBe(1);
    expect(s.get(1)).toBeUndefined();
    expect(s.get(2)).toBeDefined();
    // An expired producer is unknown: it must start again at 0.
    expect(() => s.check(h(1, 0, 1))).toThrow(expect.objectContaining({ code: 'UNKNOWN_PRODUCER_ID' }));
  });

  test('a snapshot round-trips the whole state', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ pid: fc.integer({ min: 0, max: 4 }), epoch: fc.integer({ min: 0, max: 2 }), n: fc.integer({ min: 1, max: 5 }) }), { maxLength: 40 }),
        (ops) => {
          const s = new ProducerState();
          const seqs = new Map<number, number>();
          let offset = 0;
          for (const { pid, epoch, n } of ops) {
            const e = s.get(pid);
            const seq = e && e.epoch === epoch ? nextSequence(e.batches.at(-1)!.lastSeq) : 0;
            seqs.set(pid, seq);
            s.update(h(pid, Math.max(epoch, e?.epoch ?? 0), e && epoch < e.epoch ? nextSequence(e.batches.at(-1)!.lastSeq) : seq, n, offset), offset, offset + n - 1);
            offset += n;
          }
          const back = ProducerState.fromSnapshot(s.toSnapshot(offset));
          expect(back.offset).toBe(offset);
          expect([...back.state.all()].sort((a, b) => a.producerId - b.producerId)).toEqual([...s.all()].sort((a, b) => a.producerId - b.producerId));
        },
      ),
    );
  });

  test('a damaged snapshot is refused with CORRUPT_MESSAGE', () => {
    expect(() => ProducerState.fromSnapshot(Buffer.from('{"version":1,"offset":3,"produc'))).toThrow(expect.objectContaining({ code: 'CORRUPT_MESSAGE' }));
    expect(() => ProducerState.fromSnapshot(Buffer.from('{"version":1,"offset":3,"producers":[[1,0,0,[]]]}'))).toThrow(expect.objectContaining({ code: 'CORRUPT_MESSAGE' }));
  });
});

describe('model: a retrying producer against the state', () => {
  // A producer sends batches; any send may be repeated (a retry after a lost
  // answer) as long as it is among the last 5. The log must hold each batch
  // once, and every repeat must answer the original offset. The producer's
  // first batch may sit just below the int32 wrap.
  test('retries of any of the last 5 batches never duplicate and answer the original offset', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({ kind: fc.constant('new' as const), n: fc.integer({ min: 1, max: 4 }) }),
            fc.record({ kind: fc.constant('retry' as const), back: fc.integer({ min: 0, max: PRODUCER_BATCHES_KEPT - 1 }) }),
          ),
          { maxLength: 60 },
        ),
        fc.oneof(fc.constant(-1), fc.integer({ min: INT32_MAX - 20, max: INT32_MAX })),
        (ops, start) => {
          const s = new ProducerState();
          const next = { offset: 0 };
          const sent: Array<{ b: ProducerBatchHeader; offset: number }> = [];
          let seq = 0;
          if (start >= 0) {
            // A first batch (as if recovered) ending at `start`, close to the wrap.
            s.update(h(1, 0, start, 1), 0, 0);
            next.offset = 1;
            seq = nextSequence(start);
          }
          let records = next.offset;
          for (const op of ops) {
            if (op.kind === 'new' || sent.length === 0) {
              const n = op.kind === 'new' ? op.n : 1;
              const b = h(1, 0, seq, n);
              const r = appendTo(s, b, next);
              expect(r.duplicate).toBe(false);
              sent.push({ b, offset: r.offset });
              records += n;
              seq = nextSequence(lastSequence(seq, n - 1));
            } else {
              const { b, offset } = sent[Math.max(0, sent.length - 1 - op.back)]!;
              expect(appendTo(s, b, next)).toEqual({ offset, duplicate: true });
            }
          }
          expect(next.offset).toBe(records);
        },
      ),
    );
  });
});
