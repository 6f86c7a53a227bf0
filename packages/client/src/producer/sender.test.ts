import { MqError } from '@mq/protocol/errors';
import { decodeRequest } from '@mq/protocol/wire';
import { Cluster } from '../cluster.js';
import { parseClientOptions } from '../options.js';
import { memoryCluster } from '../../test/memory-cluster.js';
import { Retrier } from '../retrier.js';
import { DEFAULT_LINGER_MS } from './options.js';
import { Producer } from './producer.js';

interface Held {
  broker: number;
  partitions: Array<{ partition: number; records: number }>;
  answer(): void;
  /** Answers one partition alone (ProduceRequest.partial_answers), with an error code. */
  part(partition: number, errorCode: number): void;
}

/**
 * A cluster of one broker whose produce requests the test answers by hand:
 * each request is held until `answer()` is called, so a request "in flight"
 * stays in flight as long as the test wants.
 */
function stubCluster(partitions: number, retryInitialDelayMs = 1) {
  const held: Held[] = [];
  const next = new Map<number, number>();
  const state = { leader: 1, epoch: 1, dead: new Set<number>(), refreshes: 0, refreshMs: 0 };
  let nextCorrelationId = 1;
  const rejects = new Map<number, (err: unknown) => void>();
  const connTo = (broker: number) => ({
    address: `b${broker}`,
    brokerId: broker,
    /** As Connection.abandon: the request's promise fails now; a later answer or part is the broker's, as before. */
    abandon(correlationId: number, err: unknown) {
      rejects.get(correlationId)?.(err);
    },
    requestEncoded(_body: string, encode: (c: number, v: number, id: string) => Uint8Array, opts?: { onPartial?: (part: unknown) => void }) {
      if (state.dead.has(broker)) return Promise.reject(new MqError('CONNECTION_CLOSED', `broker ${broker} closed the connection`));
      const correlationId = nextCorrelationId++;
      const req = decodeRequest(encode(correlationId, 0, 'test')).produce!;
      const parts = req.topics![0]!.partitions!.map((p) => {
        const buf = Buffer.from(p.records!.buffer, p.records!.byteOffset, p.records!.byteLength);
        let records = 0;
        for (let pos = 0; pos < buf.length; pos += buf.readInt32BE(pos + 8) + 12) records += buf.readInt32BE(pos + 57);
        return { partition: p.partition ?? 0, records };
      });
      return new Promise((resolve, reject) => {
        rejects.set(correlationId, reject);
        held.push({
          broker,
          partitions: parts,
          part: (partition, errorCode) => opts?.onPartial?.({ topics: [{ name: 't', partitions: [{ partition, errorCode, baseOffset: -1 }] }] }),
          answer: () =>
            resolve({
              topics: [
                {
                  name: 't',
                  partitions: parts.map(({ partition, records }) => {
                    const base = next.get(partition) ?? 0;
                    next.set(partition, base + records);
                    return { partition, errorCode: 0, baseOffset: base };
                  }),
                },
              ],
            }),
        });
      });
    },
  });
  const conns = new Map([1, 2].map((id) => [id, connTo(id)]));
  const meta = () => ({
    name: 't',
    topicId: '',
    internal: false,
    partitions: Array.from({ length: partitions }, (_, partition) => ({ partition, leader: state.leader, leaderEpoch: state.epoch, replicas: [1, 2], isr: [1, 2], offlineReplicas: [] })),
  });
  const cluster = {
    options: { requestTimeoutMs: 30_000, retry: { initialDelayMs: retryInitialDelayMs, maxDelayMs: Math.max(retryInitialDelayMs, 30_000) } },
    retrier: new Retrier({ initialDelayMs: retryInitialDelayMs, maxDelayMs: Math.max(retryInitialDelayMs, 30_000) }),
    maxFrameBytes: 64 << 20,
    logger: { debug() {} },
    cachedTopic: () => meta(),
    leaderOf: () => state.leader,
    leaderEpochOf: () => state.epoch,
    openConnection: (id: number) => conns.get(id),
    brokerConnection: async (id: number) => conns.get(id),
    avoid() {},
    invalidate() {},
    refreshMetadata: async (_topics: string[], signal?: AbortSignal) => {
      // Answers after state.refreshMs (a loaded machine), honouring the caller's deadline as the real one does.
      if (state.refreshMs > 0) {
        await new Promise((resolve, reject) => {
          const t = setTimeout(resolve, state.refreshMs);
          signal?.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
        });
      }
      state.refreshes++;
    },
  } as unknown as Cluster;
  return { cluster, held, state };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function waitFor(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

describe('sender latency', () => {
  it('sends at once by default (lingerMs 0)', () => {
    expect(DEFAULT_LINGER_MS).toBe(0);
  });

  it('with lingerMs 0 hands the request to the connection in the same turn of the event loop', async () => {
    const { cluster, held } = stubCluster(1);
    const p = new Producer(cluster, { acks: 1 });
    const sent = p.send('t', { partition: 0, value: 'a' });
    // Immediates run in order: this one runs after the send pass the send scheduled.
    await nextTurn();
    for (let i = 0; i < 20 && held.length === 0; i++) await Promise.resolve();
    expect(held).toHaveLength(1);
    held[0]!.answer();
    await expect(sent).resolves.toEqual({ topic: 't', partition: 0, offset: 0 });
  });

  it('batches what arrives while a partition has a request in flight into the next request', async () => {
    const { cluster, held } = stubCluster(1);
    const p = new Producer(cluster, { acks: 1 });
    const first = p.send('t', { partition: 0, value: 'first' });
    await waitFor(() => held.length === 1);
    const rest = Array.from({ length: 100 }, (_, i) => p.send('t', { partition: 0, value: `v${i}` }));
    await nextTurn();
    expect(held).toHaveLength(1); // one request per partition in flight: the 100 wait, batched
    held[0]!.answer();
    await first;
    await waitFor(() => held.length === 2);
    expect(held[1]!.partitions).toEqual([{ partition: 0, records: 100 }]);
    held[1]!.answer();
    expect((await Promise.all(rest)).map((r) => r.offset)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
  });

  it('a partition whose request is slow does not hold another partition of the same broker', async () => {
    const { cluster, held } = stubCluster(2);
    const p = new Producer(cluster, { acks: 1 });
    const slow = p.send('t', { partition: 0, value: 'slow' });
    await waitFor(() => held.length === 1);
    const fast = p.send('t', { partition: 1, value: 'fast' });
    await waitFor(() => held.length === 2);
    expect(held.map((h) => h.partitions.map((x) => x.partition))).toEqual([[0], [1]]);
    held[1]!.answer();
    await expect(fast).resolves.toEqual({ topic: 't', partition: 1, offset: 0 });
    held[0]!.answer();
    await expect(slow).resolves.toEqual({ topic: 't', partition: 0, offset: 0 });
  });

  it('with a linger the batch waits for it, then goes', async () => {
    const { cluster, held } = stubCluster(1);
    const p = new Producer(cluster, { acks: 1, lingerMs: 30 });
    const t0 = Date.now();
    const sent = p.send('t', { partition: 0, value: 'a' });
    await nextTurn();
    expect(held).toHaveLength(0);
    await waitFor(() => held.length === 1);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(25);
    held[0]!.answer();
    await sent;
  });

  it('a request left unanswered by a leader that lost its partition (paused, fenced) is resent to the new leader without waiting out its timeout', async () => {
    const { cluster, held, state } = stubCluster(1);
    const p = new Producer(cluster, { acks: 'all', leaderCheckMs: 20 });
    const sent = p.send('t', { partition: 0, value: 'a' });
    await waitFor(() => held.length === 1);
    expect(held[0]!.broker).toBe(1);
    // Broker 1 never answers; the controller moves the partition to broker 2.
    state.leader = 2;
    state.epoch = 2;
    await waitFor(() => held.length === 2);
    expect(held[1]!.broker).toBe(2);
    held[1]!.answer();
    await expect(sent).resolves.toEqual({ topic: 't', partition: 0, offset: 0 });
    await p.close();
  });

  it('a batch whose leader was killed goes to the new leader as soon as the metadata names it, not after the retry backoff', async () => {
    // The backoff (60 s) is far beyond the test: only the leader search can move the batch in time.
    const { cluster, held, state } = stubCluster(1, 60_000);
    const p = new Producer(cluster, { acks: 'all' });
    state.dead.add(1); // killed: its connection closes
    const sent = p.send('t', { partition: 0, value: 'a' });
    // The metadata still names broker 1 for a while (the controller has not fenced it yet): polled meanwhile.
    await waitFor(() => state.refreshes >= 3);
    expect(held).toHaveLength(0);
    state.leader = 2;
    state.epoch = 2;
    await waitFor(() => held.length === 1);
    expect(held[0]!.broker).toBe(2);
    held[0]!.answer();
    await expect(sent).resolves.toEqual({ topic: 't', partition: 0, offset: 0 });
    await p.close();
  });

  it('a request abandoned by the leader check is resent at once, not after the retry backoff', async () => {
    const { cluster, held, state } = stubCluster(1, 60_000);
    const p = new Producer(cluster, { acks: 'all', leaderCheckMs: 20 });
    const sent = p.send('t', { partition: 0, value: 'a' });
    await waitFor(() => held.length === 1);
    state.leader = 2;
    state.epoch = 2;
    await waitFor(() => held.length === 2);
    expect(held[1]!.broker).toBe(2);
    held[1]!.answer();
    await expect(sent).resolves.toEqual({ topic: 't', partition: 0, offset: 0 });
    await p.close();
  });

  it('regression: a leader check whose metadata answer takes longer than leaderCheckMs (a loaded machine) still moves the request', async () => {
    const { cluster, held, state } = stubCluster(1, 60_000);
    state.refreshMs = 60; // three times leaderCheckMs
    const p = new Producer(cluster, { acks: 'all', leaderCheckMs: 20 });
    const sent = p.send('t', { partition: 0, value: 'a' });
    await waitFor(() => held.length === 1);
    state.leader = 2;
    state.epoch = 2;
    await waitFor(() => held.length === 2);
    expect(held[1]!.broker).toBe(2);
    held[1]!.answer();
    await expect(sent).resolves.toEqual({ topic: 't', partition: 0, offset: 0 });
    await p.close();
  });

  it('regression: a late part of the answer to an abandoned request does not settle its batches again (no second request in flight for the partition)', async () => {
    const { cluster, held, state } = stubCluster(2, 60_000);
    const p = new Producer(cluster, { acks: 'all', leaderCheckMs: 20 });
    const sent = [0, 1].map((partition) => p.send('t', { partition, value: `v${partition}` }));
    await waitFor(() => held.length === 1);
    expect(held[0]!.partitions.map((x) => x.partition)).toEqual([0, 1]);
    state.leader = 2;
    state.epoch = 2;
    await waitFor(() => held.length === 2); // abandoned, resent to broker 2, which holds it
    expect(held[1]!.broker).toBe(2);
    // The paused broker 1 runs again and answers a part of the abandoned request: it was fenced.
    held[0]!.part(0, 60 /* NOT_LEADER */);
    await new Promise((r) => setTimeout(r, 100));
    expect(held).toHaveLength(2);
    held[1]!.answer();
    await expect(Promise.all(sent)).resolves.toEqual([
      { topic: 't', partition: 0, offset: 0 },
      { topic: 't', partition: 1, offset: 0 },
    ]);
    await p.close();
  });

  it('a slow request is not moved by a broker whose view of the partition is older (a lower leader epoch)', async () => {
    const { cluster, held, state } = stubCluster(1);
    state.epoch = 5;
    const p = new Producer(cluster, { acks: 'all', leaderCheckMs: 10 });
    const sent = p.send('t', { partition: 0, value: 'a' });
    await waitFor(() => held.length === 1);
    state.leader = 2;
    state.epoch = 4;
    await new Promise((r) => setTimeout(r, 100));
    expect(held).toHaveLength(1);
    held[0]!.answer();
    await expect(sent).resolves.toEqual({ topic: 't', partition: 0, offset: 0 });
    await p.close();
  });

  it('a slow request whose leader did not move keeps waiting for its answer', async () => {
    const { cluster, held } = stubCluster(1);
    const p = new Producer(cluster, { acks: 'all', leaderCheckMs: 10 });
    const sent = p.send('t', { partition: 0, value: 'a' });
    await waitFor(() => held.length === 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(held).toHaveLength(1);
    held[0]!.answer();
    await expect(sent).resolves.toEqual({ topic: 't', partition: 0, offset: 0 });
    await p.close();
  });
});

describe('sender after a leader SIGSTOP (real Cluster, in-memory brokers)', () => {
  it('regression (issue 21): the pending batch moves to the new leader while a metadata refresh waits on the paused one, and a stale answer given when it runs again sends nothing back to it (no OUT_OF_ORDER_SEQUENCE_NUMBER)', async () => {
    const { brokers, connect } = memoryCluster(3, { topic: 't', partitions: [{ leader: 1, leaderEpoch: 1 }] });
    const [b1, b2, b3] = brokers;
    const cluster = new Cluster(parseClientOptions({ bootstrap: 'b1:1', requestTimeoutMs: 60_000 }), { connect });
    const p = new Producer(cluster, { acks: 'all', idempotent: true, leaderCheckMs: 20 });
    try {
      await expect(p.send('t', { partition: 0, value: 'before' })).resolves.toMatchObject({ offset: 0 });
      b1!.pause(); // SIGSTOP: its kernel takes requests, it answers none
      const stuck = p.send('t', { partition: 0, value: 'during' });
      await waitFor(() => (b1!.received.produce ?? 0) === 2);
      const background = cluster.refreshMetadata(['t']); // the producer's background refresh, to the paused broker
      await waitFor(() => (b1!.received.metadata ?? 0) === 2);
      // Fenced: broker 2 leads at epoch 2, and has what broker 1 acknowledged (it was in the ISR).
      b2!.replicate(b1!);
      for (const b of [b2!, b3!]) b.view = { topic: 't', partitions: [{ leader: 2, leaderEpoch: 2 }] };
      await expect(stuck).resolves.toMatchObject({ partition: 0, offset: 1 });
      expect(b2!.received.produce).toBe(1);
      const more = [p.send('t', { partition: 0, value: 'x' }), p.send('t', { partition: 0, value: 'y' })];
      await expect(Promise.all(more)).resolves.toMatchObject([{ offset: 2 }, { offset: 3 }]);
      // Broker 1 runs again, with its old view (leader of epoch 1): it answers the held metadata and produce.
      b1!.resume();
      await background;
      expect(cluster.leaderOf('t', 0)).toBe(2);
      await expect(p.send('t', { partition: 0, value: 'after' })).resolves.toMatchObject({ partition: 0, offset: 4 });
      expect(b1!.received.produce).toBe(2);
    } finally {
      await p.close();
      cluster.close();
    }
  });
});
