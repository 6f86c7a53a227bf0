import { ERROR_CODES } from '../errors.js';
import { encodeBatchSync } from '../batch/index.js';
import { decodeRequest, decodeResponse, encodeRequest, encodeResponse, mq } from './index.js';

describe('wire schema', () => {
  it('lists exactly the error codes of errors.ts in the ErrorCode enum', () => {
    const wire = Object.entries(mq.ErrorCode as unknown as Record<string, number>).filter(([k]) => isNaN(Number(k)));
    const ours = Object.entries(ERROR_CODES).map(([k, v]) => [k, v.code]);
    expect(Object.fromEntries(wire)).toEqual(Object.fromEntries(ours));
  });

  it('a frame of more values than the budget is refused with its correlation id, before the rest is decoded (issue 22: multi-MB frames of tiny list items)', () => {
    const names = encodeRequest({ correlationId: 41, metadata: { topics: Array.from({ length: 200_000 }, (_, i) => `t${i % 10}`) } });
    expect(decodeRequest(names).metadata!.topics).toHaveLength(200_000);
    expect(() => decodeRequest(names, 1000)).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST', correlationId: 41 }));
    // A packed list counts each item (1-byte items: 50,000 in 50 KB).
    const packed = encodeRequest({ correlationId: 42, offsetFetch: { groupId: 'g', topics: [{ name: 't', partitions: Array.from({ length: 1_000_000 }, (_, i) => i % 100) }] } });
    expect(decodeRequest(packed).offsetFetch!.topics![0]!.partitions).toHaveLength(1_000_000);
    expect(() => decodeRequest(packed, 50_000)).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST', correlationId: 42 }));
    // Within the budget the decode is the same, packed lists included.
    const small = encodeRequest({ correlationId: 43, offsetFetch: { groupId: 'g', topics: [{ name: 't', partitions: [1, 2, 300_000] }] }, clientId: 'c' });
    expect(decodeRequest(small, 12)).toEqual(decodeRequest(small));
    expect(() => decodeRequest(small, 8)).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST', correlationId: 43 }));
  });

  it('round-trips a produce request with raw batch bytes and int64 offsets as numbers', () => {
    const records = encodeBatchSync([{ value: 'x' }]);
    const bytes = encodeRequest({
      correlationId: 7,
      produce: { acks: -1, timeoutMs: 100, topics: [{ name: 't', partitions: [{ partition: 2, records }] }] },
    });
    const frame = decodeRequest(bytes);
    expect(frame.body).toBe('produce');
    expect(frame.produce!.acks).toBe(-1);
    expect(Buffer.from(frame.produce!.topics![0]!.partitions![0]!.records!)).toEqual(records);
    const resp = decodeResponse(
      encodeResponse({
        correlationId: 7,
        produce: { topics: [{ name: 't', partitions: [{ partition: 2, baseOffset: 2 ** 40 }] }] },
      }),
    );
    expect(resp.produce!.topics![0]!.partitions![0]!.baseOffset).toBe(2 ** 40);
  });

  it('refuses bytes that are not a frame with INVALID_REQUEST', () => {
    expect(() => decodeRequest(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]))).toThrow(
      expect.objectContaining({ code: 'INVALID_REQUEST' }),
    );
  });
});
