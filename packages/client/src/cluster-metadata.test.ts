/**
 * The metadata cache under answers arriving out of order (issue 21): a broker
 * that was paused answers, once it runs again, from the view it had; that
 * answer must not move a partition back to the leader it had before. And a
 * refresh does not wait on one in flight to a paused broker.
 */
import { MAX_METADATA_REFRESHES, Cluster, newestLeaders, type TopicDescription } from './cluster.js';
import { parseClientOptions } from './options.js';
import { memoryCluster, type View } from '../test/memory-cluster.js';

const view = (leader: number, leaderEpoch: number): View => ({ topic: 't', partitions: [{ leader, leaderEpoch }] });

const settled = async (p: Promise<unknown>): Promise<boolean> => {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  return done;
};

function cluster(n = 3) {
  const mem = memoryCluster(n, view(1, 5));
  const c = new Cluster(parseClientOptions({ bootstrap: 'b1:1' }), { connect: mem.connect });
  return { c, ...mem };
}

describe('Cluster metadata cache', () => {
  it('regression (issue 21, 121 OUT_OF_ORDER_SEQUENCE_NUMBER failures after a leader SIGSTOP): an answer from a paused broker, arriving after a newer one, does not move a partition back to the old leader', async () => {
    const { c, brokers } = cluster();
    await c.refreshMetadata(['t']);
    expect(c.leaderOf('t', 0)).toBe(1);
    const [b1, b2, b3] = brokers;
    b1!.pause(); // still leader in its own view, epoch 5
    c.invalidate('t');
    const stale = c.refreshMetadata(['t']); // goes to b1, the open connection
    await new Promise((r) => setImmediate(r));
    b2!.view = view(2, 6);
    b3!.view = view(2, 6);
    c.avoid(c.openConnection(1)!);
    const fresh = c.refreshMetadata(['t']);
    expect(await settled(fresh)).toBe(true);
    expect(c.leaderOf('t', 0)).toBe(2);
    expect(c.leaderEpochOf('t', 0)).toBe(6);
    b1!.resume();
    await stale;
    expect(c.leaderOf('t', 0)).toBe(2);
    expect(c.leaderEpochOf('t', 0)).toBe(6);
    c.close();
  });

  it('a refresh joins one in flight to a broker that is not avoided (one request for both)', async () => {
    const { c, brokers } = cluster();
    await c.refreshMetadata(['t']);
    brokers[0]!.pause();
    c.invalidate('t');
    const first = c.refreshMetadata(['t']);
    const second = c.refreshMetadata(['t']);
    await new Promise((r) => setImmediate(r));
    brokers[0]!.resume();
    await Promise.all([first, second]);
    expect(brokers[0]!.received.metadata).toBe(2);
    expect(brokers[1]!.received.metadata ?? 0).toBe(0);
    c.close();
  });

  it(`keeps at most ${MAX_METADATA_REFRESHES} metadata requests in flight when every one waits on a paused broker`, async () => {
    const { c, brokers } = cluster(MAX_METADATA_REFRESHES + 1);
    await c.refreshMetadata(['t']);
    for (const b of brokers) b.pause();
    c.invalidate('t');
    const calls: Array<Promise<void>> = [];
    for (let i = 0; i < MAX_METADATA_REFRESHES + 2; i++) {
      calls.push(c.refreshMetadata(['t']));
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      // Each paused broker is avoided as a leader check would after its request went unanswered.
      for (const b of brokers) {
        const conn = c.openConnection(b.id);
        if (conn && (b.received.metadata ?? 0) > (b.id === 1 ? 1 : 0)) c.avoid(conn);
      }
    }
    const sent = () => brokers.reduce((n, b) => n + (b.received.metadata ?? 0), 0) - 1;
    expect(sent()).toBe(MAX_METADATA_REFRESHES);
    for (const b of brokers) b.resume();
    await Promise.all(calls);
    c.close();
  });
});

describe('newestLeaders', () => {
  const topic = (topicId: string, partitions: Array<[leader: number, leaderEpoch: number, partitionEpoch?: number]>): TopicDescription => ({
    name: 't',
    topicId,
    internal: false,
    partitions: partitions.map(([leader, leaderEpoch, partitionEpoch = 0], partition) => ({
      partition,
      leader,
      leaderEpoch,
      partitionEpoch,
      replicas: [1, 2, 3],
      isr: [1, 2, 3],
      offlineReplicas: [],
      error: 'NONE',
    })),
  });

  it('keeps each partition at the newest leader epoch, then partition epoch', () => {
    const cached = topic('a', [
      [2, 6],
      [1, 3, 4],
      [3, 1],
    ]);
    const answer = topic('a', [
      [1, 5],
      [1, 3, 2],
      [2, 2],
    ]);
    expect(newestLeaders(cached, answer).partitions.map((p) => [p.leader, p.leaderEpoch, p.partitionEpoch])).toEqual([
      [2, 6, 0],
      [1, 3, 4],
      [2, 2, 0],
    ]);
  });

  it('takes the answer as it is for a topic created again (another topic id), or when either epoch is unknown', () => {
    expect(newestLeaders(topic('a', [[2, 6]]), topic('b', [[1, 0]])).partitions[0]!.leader).toBe(1);
    expect(newestLeaders(topic('a', [[2, 6]]), topic('a', [[1, -1]])).partitions[0]!.leader).toBe(1);
    expect(newestLeaders(topic('a', [[2, -1]]), topic('a', [[1, 0]])).partitions[0]!.leader).toBe(1);
  });

  it('keeps partitions an older answer does not know yet', () => {
    const merged = newestLeaders(topic('a', [[1, 1], [2, 1]]), topic('a', [[1, 1]]));
    expect(merged.partitions.map((p) => p.leader)).toEqual([1, 2]);
  });
});
