import { parseFollowerFetcherOptions, parsePartitionLeaderOptions, DEFAULT_REPLICA_LAG_TIME_MAX_MS } from './options.js';

const base = { topic: 't', partition: 0, brokerId: 1, leaderEpoch: 0, partitionEpoch: 0, replicas: [1, 2, 3], isr: [1, 2] };

describe('parsePartitionLeaderOptions', () => {
  it('fills defaults and copies so callers cannot change it later', () => {
    const replicas = [1, 2, 3];
    const parsed = parsePartitionLeaderOptions({ ...base, replicas });
    replicas.push(4);
    expect(parsed.replicas).toEqual([1, 2, 3]);
    expect(parsed.replicaLagTimeMaxMs).toBe(DEFAULT_REPLICA_LAG_TIME_MAX_MS);
    expect(parsed.isrCheckIntervalMs).toBe(DEFAULT_REPLICA_LAG_TIME_MAX_MS / 2);
    expect(Object.isFrozen(parsed)).toBe(true);
  });

  it.each([
    [{ isr: [2, 3] }, /not in the ISR/],
    [{ replicas: [2, 3], isr: [1] }, /not in the replica set/],
    [{ isr: [1, 4] }, /ISR member 4/],
    [{ replicas: [1, 1, 2] }, /twice/],
    [{ minInsyncReplicas: 4 }, /never succeed/],
    [{ partition: -1 }, /partition/],
    [{ topic: '' }, /topic/],
  ])('rejects %j', (over, message) => {
    expect(() => parsePartitionLeaderOptions({ ...base, ...over })).toThrow(message);
  });
});

describe('parseFollowerFetcherOptions', () => {
  it('refuses fetching from itself and a backoff cap below the backoff', () => {
    expect(() => parseFollowerFetcherOptions({ brokerId: 1, leaderId: 1 })).toThrow(/itself/);
    expect(() => parseFollowerFetcherOptions({ brokerId: 1, leaderId: 2, backoffMs: 100, maxBackoffMs: 10 })).toThrow(/maxBackoffMs/);
    expect(parseFollowerFetcherOptions({ brokerId: 1, leaderId: 2, maxBytes: 100 }).partitionMaxBytes).toBe(100);
  });
});
