import { MqError } from '@mq/protocol/errors';
import { onLeader } from './leader-retry.js';
import { fakeDeps, fakeMetadata, flush } from '../../../test-support/http-backend-fakes.js';

/** Runs onLeader to its end, moving the manual time on 100 ms at a time. */
async function settle<T>(time: { advance(ms: number): void }, p: Promise<T>): Promise<{ value?: T; error?: MqError }> {
  const out: { value?: T; error?: MqError; done?: boolean } = {};
  p.then(
    (value) => Object.assign(out, { value, done: true }),
    (error: MqError) => Object.assign(out, { error, done: true }),
  );
  for (let i = 0; i < 1000 && !out.done; i++) {
    await flush();
    if (!out.done) time.advance(100);
  }
  return out;
}

describe('HTTP backend: the call on the partition leader', () => {
  const signal = new AbortController().signal;

  it('tries the new leader once the metadata names it after NOT_LEADER', async () => {
    const md = fakeMetadata('t', [2]);
    const { d, time } = fakeDeps(md);
    const tried: number[] = [];
    const p = onLeader(d, 't', 0, signal, async (leader) => {
      tried.push(leader);
      if (leader === 2) throw new MqError('NOT_LEADER', 'moved');
      return 'written';
    });
    await flush();
    md.lead(0, 3);
    expect(await settle(time, p)).toEqual({ value: 'written', done: true });
    expect(tried).toEqual([2, 3]);
  });

  it('gives up after leaderWaitMs with the last error: polling every 100 ms for a moved leader, every 500 ms for an unreachable one', async () => {
    for (const [code, attempts] of [
      ['NOT_LEADER', 11],
      ['CONNECTION_ERROR', 3],
    ] as const) {
      const { d, time } = fakeDeps(fakeMetadata('t', [2]));
      let n = 0;
      const r = await settle(
        time,
        onLeader(d, 't', 0, signal, async () => {
          n++;
          throw new MqError(code, 'no');
        }),
      );
      expect(r.error?.code).toBe(code);
      expect(n).toBe(attempts);
    }
  });

  it('answers LEADER_NOT_AVAILABLE when no leader appears in time', async () => {
    const { d, time } = fakeDeps(fakeMetadata('t', [-1]));
    let n = 0;
    const r = await settle(time, onLeader(d, 't', 0, signal, async () => void n++));
    expect(r.error?.code).toBe('LEADER_NOT_AVAILABLE');
    expect(r.error?.message).toBe('t-0 has no leader: no in-sync replica is alive');
    expect(n).toBe(0);
  });

  it('does not retry other errors, unknown topics or partitions', async () => {
    const { d, time } = fakeDeps(fakeMetadata('t', [2]));
    let n = 0;
    const r = await settle(
      time,
      onLeader(d, 't', 0, signal, async () => {
        n++;
        throw new MqError('CORRUPT_MESSAGE', 'bad batch');
      }),
    );
    expect([r.error?.code, n]).toEqual(['CORRUPT_MESSAGE', 1]);
    const unknown = await settle(time, onLeader(d, 'nope', 0, signal, async () => 1));
    expect(unknown.error?.code).toBe('UNKNOWN_TOPIC_OR_PARTITION');
    expect(unknown.error?.retriable).toBe(false);
    expect(unknown.error?.message).toBe('topic "nope" does not exist (create it with: mq topic create nope)');
    const partition = await settle(time, onLeader(d, 't', 4, signal, async () => 1));
    expect(partition.error?.message).toBe('topic "t" has no partition 4 (it has 1)');
  });
});
