import { errorNumber } from '@mq/protocol/errors';
import { groupByTopic, peerFetch, peerOffsetForLeaderEpoch } from './replica-requests.js';

/** A peer connection that records what is sent and answers what it is given. */
function peers(answer: unknown) {
  const sent: Array<{ id: number; body: string; payload: unknown; options: unknown }> = [];
  return {
    sent,
    request: async (id: number, body: string, payload: unknown, options: unknown) => {
      sent.push({ id, body, payload, options });
      return answer;
    },
  };
}

describe('replica requests over the inter-broker connections', () => {
  it('groups partitions by topic name and topic id, in first-seen order', () => {
    const items = [
      { topic: 'a', topicId: 'A1', partition: 0 },
      { topic: 'b', partition: 3 },
      { topic: 'a', topicId: 'A2', partition: 1 },
      { topic: 'a', topicId: 'A1', partition: 2 },
    ];
    expect(groupByTopic(items, (i) => i.partition)).toEqual([
      { name: 'a', topicId: 'A1', partitions: [0, 2] },
      { name: 'b', topicId: '', partitions: [3] },
      { name: 'a', topicId: 'A2', partitions: [1] },
    ]);
  });

  it('sends a replica fetch as the wire Fetch and flattens the answer per partition', async () => {
    const records = new Uint8Array([9, 8, 7, 6]);
    const p = peers({
      topics: [
        {
          name: 't',
          topicId: 'T1',
          partitions: [
            { partition: 1, errorCode: 0, highWatermark: 10, logStartOffset: 2, logEndOffset: 12, records: records.subarray(1, 3), currentLeaderId: 3, currentLeaderEpoch: 5 },
            { partition: 2, errorCode: errorNumber('FENCED_LEADER_EPOCH'), errorMessage: 'stale', divergingEpoch: { epoch: 4, endOffset: 77 } },
          ],
        },
      ],
    });
    const signal = new AbortController().signal;
    const res = await peerFetch(p as never)(
      3,
      {
        replicaId: 2,
        replicaEpoch: 11,
        maxWaitMs: 500,
        minBytes: 1,
        maxBytes: 1000,
        partitions: [
          { topic: 't', topicId: 'T1', partition: 1, fetchOffset: 5, partitionMaxBytes: 100, currentLeaderEpoch: 5, logStartOffset: 0, lastFetchedEpoch: 4 },
          { topic: 't', topicId: 'T1', partition: 2, fetchOffset: 6, partitionMaxBytes: 100, currentLeaderEpoch: 5 },
        ],
      },
      signal,
    );
    expect(p.sent).toEqual([
      {
        id: 3,
        body: 'fetch',
        payload: {
          replicaId: 2,
          replicaEpoch: 11,
          maxWaitMs: 500,
          minBytes: 1,
          maxBytes: 1000,
          topics: [
            {
              name: 't',
              topicId: 'T1',
              partitions: [
                { partition: 1, fetchOffset: 5, partitionMaxBytes: 100, currentLeaderEpoch: 5, logStartOffset: 0, lastFetchedEpoch: 4 },
                { partition: 2, fetchOffset: 6, partitionMaxBytes: 100, currentLeaderEpoch: 5, logStartOffset: -1, lastFetchedEpoch: -1 },
              ],
            },
          ],
        },
        // The long poll plus a margin.
        options: { signal, timeoutMs: 10_500 },
      },
    ]);
    const [ok, fenced] = res.partitions;
    expect(ok).toEqual({ topic: 't', topicId: 'T1', partition: 1, errorCode: 'NONE', errorMessage: '', highWatermark: 10, logStartOffset: 2, logEndOffset: 12, records: Buffer.from([8, 7]), currentLeaderId: 3, currentLeaderEpoch: 5 });
    // The records are a view of the answer's bytes, not a copy.
    expect(ok!.records.buffer).toBe(records.buffer);
    expect(fenced).toMatchObject({ partition: 2, errorCode: 'FENCED_LEADER_EPOCH', errorMessage: 'stale', highWatermark: -1, records: Buffer.alloc(0), divergingEpoch: { epoch: 4, endOffset: 77 }, currentLeaderId: -1 });
    expect(ok).not.toHaveProperty('divergingEpoch');
  });

  it('asks OffsetForLeaderEpoch with the replica id and reads each partition back', async () => {
    const p = peers({ topics: [{ name: 't', topicId: 'T1', partitions: [{ partition: 0, errorCode: 0, leaderEpoch: 3, endOffset: 40 }, { partition: 1 }] }] });
    const res = await peerOffsetForLeaderEpoch(p as never)(
      5,
      {
        replicaId: 2,
        partitions: [
          { topic: 't', topicId: 'T1', partition: 0, currentLeaderEpoch: 4, leaderEpoch: 3 },
          { topic: 't', topicId: 'T1', partition: 1, currentLeaderEpoch: 4, leaderEpoch: 2 },
        ],
      },
      new AbortController().signal,
    );
    expect(p.sent[0]).toMatchObject({
      id: 5,
      body: 'offsetForLeaderEpoch',
      payload: { replicaId: 2, topics: [{ name: 't', topicId: 'T1', partitions: [{ partition: 0, currentLeaderEpoch: 4, leaderEpoch: 3 }, { partition: 1, currentLeaderEpoch: 4, leaderEpoch: 2 }] }] },
      options: { timeoutMs: 10_000 },
    });
    expect(res.partitions).toEqual([
      { topic: 't', topicId: 'T1', partition: 0, errorCode: 'NONE', leaderEpoch: 3, endOffset: 40 },
      { topic: 't', topicId: 'T1', partition: 1, errorCode: 'NONE', leaderEpoch: -1, endOffset: -1 },
    ]);
  });
});
