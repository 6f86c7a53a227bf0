import { ERROR_CODES } from '../errors.js';
import { encodeBatchSync } from '../batch/index.js';
import { decodeRequest, decodeResponse, encodeRequest, encodeResponse, mq } from './index.js';

describe('wire schema', () => {
  it('lists exactly the error codes of errors.ts in the ErrorCode enum', () => {
    const wire = Object.entries(mq.ErrorCode as unknown as Record<string, number>).filter(([k]) => isNaN(Number(k)));
    const ours = Object.entries(ERROR_CODES).map(([k, v]) => [k, v.code]);
    expect(Object.fromEntries(wire)).toEqual(Object.fromEntries(ours));
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
