import { decodeResponse, encodeResponse } from '@mq/protocol/wire';
import { encodeFetchResponseFrame, wsBinaryFrameHeader } from './fetch-frame.js';

const bytes = (n: number, fill: number) => Buffer.alloc(n, fill);

describe('encodeFetchResponseFrame', () => {
  it('produces exactly the frame protobufjs would, without copying the records', () => {
    const big = bytes(70_000, 7);
    const mid = bytes(200, 9);
    const fetch = {
      topics: [
        {
          name: 'orders',
          partitions: [
            { partition: 0, errorCode: 0, highWatermark: 5_000_000_000, lastStableOffset: 5_000_000_000, logStartOffset: 3, logEndOffset: 5_000_000_001, records: big, currentLeaderId: 1, currentLeaderEpoch: 4 },
            { partition: 1, errorCode: 0, highWatermark: 0, logStartOffset: 0, records: Buffer.alloc(0) },
            { partition: 2, errorCode: 6, errorMessage: 'not the leader', highWatermark: -1, records: Buffer.alloc(0), currentLeaderId: -1 },
          ],
        },
        { name: 'é-topic', partitions: [{ partition: 7, records: mid, divergingEpoch: { epoch: 2, endOffset: 10 } }] },
        { name: 'empty', partitions: [] },
      ],
    };
    const parts = encodeFetchResponseFrame(123456, fetch);
    const joined = Buffer.concat(parts);
    expect(decodeResponse(joined)).toEqual(decodeResponse(encodeResponse({ correlationId: 123456, fetch })));
    // The record buffers themselves are in the list (no copy).
    expect(parts).toContain(big);
    expect(parts).toContain(mid);
    const r = decodeResponse(joined);
    expect(r.correlationId).toBe(123456);
    expect(Buffer.from(r.fetch!.topics![0]!.partitions![0]!.records!)).toEqual(big);
    expect(Number(r.fetch!.topics![0]!.partitions![0]!.highWatermark)).toBe(5_000_000_000);
  });

  it('encodes a response with no topics', () => {
    const joined = Buffer.concat(encodeFetchResponseFrame(1, { topics: [] }));
    expect(decodeResponse(joined)).toEqual(decodeResponse(encodeResponse({ correlationId: 1, fetch: { topics: [] } })));
    expect(decodeResponse(joined).body).toBe('fetch');
  });
});

describe('wsBinaryFrameHeader', () => {
  it.each([
    [0, '8200'],
    [125, '827d'],
    [126, '827e007e'],
    [65535, '827effff'],
    [65536, '827f0000000000010000'],
    [2 ** 32 + 5, '827f0000000100000005'],
  ])('length %d', (len, hex) => {
    expect(wsBinaryFrameHeader(len).toString('hex')).toBe(hex);
  });
});
