/**
 * A resent transaction marker is appended again with acks=all. It used to be skipped when the partition's
 * producer state showed the transaction closed at the same epoch; but that state is the leader's own log, and a
 * marker there may not be replicated yet: the coordinator would complete a transaction that a new leader still
 * has open (read_committed stuck at its LSO for good).
 */
import type { HandlerDeps } from './deps.js';
import { appendTxnMarkers } from './write-txn-markers.js';

it('appends a resent marker with acks=all although the leader already shows the transaction closed', async () => {
  const appends: Array<{ acks: number; coordinator: boolean }> = [];
  const leader = { append: async (_batch: Uint8Array, o: { acks: number; coordinator: boolean }) => void appends.push({ acks: o.acks, coordinator: o.coordinator }) };
  // The leader's log already has this producer's marker: nothing open, same epoch.
  const hosted = { log: { producer: () => ({ epoch: 3, txnFirstOffset: -1 }) } };
  const d = { replicas: { leaderOf: () => leader, hostedPartition: () => hosted } } as unknown as HandlerDeps;
  const marker = { producerId: 42, producerEpoch: 3, committed: true, coordinatorEpoch: 1, topics: [{ name: 't', partitions: [0, 1] }] };
  const results = await appendTxnMarkers(d, [marker], 1000, 0);
  expect(results).toEqual([
    { producerId: 42, topic: 't', partition: 0 },
    { producerId: 42, topic: 't', partition: 1 },
  ]);
  expect(appends).toEqual([
    { acks: -1, coordinator: true },
    { acks: -1, coordinator: true },
  ]);
});
