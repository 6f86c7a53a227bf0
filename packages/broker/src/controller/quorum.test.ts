/**
 * Membership changes of the metadata quorum, in process: real
 * RaftControllers (real Raft nodes, the real state machine) on an in-memory
 * network. A 4th controller joins (learner, caught up, voter) with its
 * address recorded in the log and the snapshot; a voter leaves; the active
 * controller removes itself and steps down; bad requests are refused with
 * their codes. The real-process version is e2e/cluster-quorum-voters.test.ts.
 */
import { pino } from 'pino';
import { MemoryNetwork, MemoryStorage } from '@mq/consensus';
import { isMqError } from '@mq/protocol/errors';
import { RaftController } from './controller.js';
import { MetadataState } from './metadata-state.js';
import { parseControllerOptions } from './options.js';
import { decodeVoterContext, encodeVoterContext } from './quorum.js';
import type { CommandResult, MetadataCommand } from './commands.js';

const logger = pino({ level: 'silent' });
const VOTERS = '1@127.0.0.1:19091,2@127.0.0.1:19092,3@127.0.0.1:19093';

async function waitFor<T>(fn: () => T | undefined | false, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('metadata quorum membership', () => {
  const net = new MemoryNetwork();
  const ctrls = new Map<number, RaftController>();
  const start = async (id: number, raftAddress?: string): Promise<RaftController> => {
    const c: RaftController = new RaftController(
      { brokerId: id, voters: VOTERS, ...(raftAddress ? { raftAddress } : {}), tickMs: 10, sessionTimeoutMs: 1000, fsync: false },
      {
        logger,
        raft: { transport: net.transport(id), storage: new MemoryStorage() },
        // Requests reach the active controller the way brokers forward them.
        forward: (to: number, cmd: MetadataCommand, timeoutMs: number): Promise<CommandResult> => ctrls.get(to)!.handleForward(cmd, timeoutMs),
      },
    );
    ctrls.set(id, c);
    await c.start('/nonexistent');
    return c;
  };
  const active = () => waitFor(() => [...ctrls.values()].find((c) => c.isActive), 'an active controller');
  const submitError = async (cmd: MetadataCommand, timeoutMs = 3000): Promise<string> => {
    try {
      await (await active()).submit(cmd, timeoutMs);
    } catch (err) {
      if (isMqError(err)) return `${err.code}: ${err.message}`;
      throw err;
    }
    throw new Error(`${cmd.type} was not refused`);
  };

  afterAll(async () => {
    await Promise.all([...ctrls.values()].map((c) => c.close()));
  });

  it('adds a learner that catches up, then a voter; removes voters; refuses bad changes', async () => {
    for (const id of [1, 2, 3]) await start(id);
    const first = await active();
    await first.submit({ type: 'setReplicationThrottle', bytesPerSec: 1234 });

    // A joining controller: no vote, no membership until it is added.
    const four = await start(4, '127.0.0.1:19094');
    expect(four.status().quorumVoters).toEqual([]);

    expect(await submitError({ type: 'addVoter', id: 2, host: '127.0.0.1', port: 19092 })).toBe('DUPLICATE_VOTER: controller 2 is already a voter of the metadata quorum (voters: 1, 2, 3)');
    expect(await submitError({ type: 'removeVoter', id: 9 })).toBe('UNKNOWN_NODE: controller 9 is not in the metadata quorum (voters: 1, 2, 3)');

    const cs = await (await active()).submit({ type: 'addVoter', id: 4, host: '127.0.0.1', port: 19094 }, 5000);
    expect(cs).toEqual({ voters: [1, 2, 3, 4], learners: [] });
    // Every member learned 4's address from the log, 4 included, and holds the metadata from before it joined.
    await waitFor(() => [...ctrls.values()].every((c) => c.metadata.quorumAddress(4)?.port === 19094), 'every controller knows 4\'s address');
    await waitFor(() => four.metadata.replicationThrottle === 1234, 'controller 4 has the metadata from before it joined');
    await waitFor(() => four.status().quorumVoters?.length === 4, 'controller 4 applied its promotion');
    const view = (await (await active()).submit({ type: 'describeQuorum' })) as { members: Array<{ id: number; voter: boolean; address: string }> };
    expect(view.members.map((m) => [m.id, m.voter, m.address])).toEqual([
      [1, true, '127.0.0.1:19091'],
      [2, true, '127.0.0.1:19092'],
      [3, true, '127.0.0.1:19093'],
      [4, true, '127.0.0.1:19094'],
    ]);

    // A controller that never answers: a second change meanwhile is refused (retriable), the first is undone.
    const leader = await active();
    const pending = leader.submit({ type: 'addVoter', id: 5, host: '127.0.0.1', port: 19095 }, 1500).then(
      () => 'added',
      (err: unknown) => (isMqError(err) ? `${err.code}: ${err.message}` : String(err)),
    );
    await waitFor(() => leader.status().quorumVoters && leader.metadata.quorumAddress(5), 'learner 5 recorded');
    expect(await submitError({ type: 'removeVoter', id: 1 })).toBe('VOTER_CHANGE_IN_PROGRESS: a change of the controller quorum is in progress (adding controller 5); retry once it is done');
    expect(await pending).toMatch(/^ABORTED: controller 5 at 127\.0\.0\.1:19095 did not catch up with the metadata log within \d+ ms .*It was removed again/);
    await waitFor(() => leader.metadata.quorumAddress(5) === undefined, 'learner 5 removed again');

    // The active controller removes itself: it steps down and the others elect one of them.
    const self = (await active()).options.brokerId;
    expect(await (await active()).submit({ type: 'removeVoter', id: self }, 5000)).toEqual({ voters: [1, 2, 3, 4].filter((id) => id !== self), learners: [] });
    const next = await waitFor(() => [...ctrls.values()].find((c) => c.isActive && c.options.brokerId !== self), 'a new active controller');
    await waitFor(() => next.status().quorumVoters?.length === 3, 'the new active controller applied the removal');
    expect(next.status().quorumVoters).toEqual([1, 2, 3, 4].filter((id) => id !== self));
    await next.submit({ type: 'setReplicationThrottle', bytesPerSec: 5678 });
    await waitFor(() => four.metadata.replicationThrottle === 5678 || self === 4, 'the quorum without the old controller commits');

    // Down to one voter; the last one stays.
    const rest = [1, 2, 3, 4].filter((id) => id !== self);
    for (const id of rest.slice(0, 2)) await (await active()).submit({ type: 'removeVoter', id }, 5000);
    const last = rest[2]!;
    await waitFor(() => ctrls.get(last)!.isActive, `controller ${last} alone is active`);
    expect(await submitError({ type: 'removeVoter', id: last })).toBe(`INVALID_REQUEST: refusing to remove controller ${last}, the last voter: the metadata log would have no quorum (add another voter first)`);
  }, 30_000);
});

describe('voter addresses', () => {
  it('travel in the ConfChange context and survive a snapshot of the metadata', () => {
    const ctx = encodeVoterContext({ host: '10.0.0.4', port: 19094 });
    expect(decodeVoterContext(4, ctx)).toEqual({ id: 4, host: '10.0.0.4', port: 19094 });
    for (const bad of ['', 'x', '{"host":"","port":1}', '{"host":"h","port":0}', '{"host":"h","port":70000}', '{"host":1,"port":1}']) {
      expect(decodeVoterContext(4, Buffer.from(bad))).toBeUndefined();
    }
    const s = new MetadataState();
    s.applyQuorumChange(4, false, { id: 4, host: '10.0.0.4', port: 19094 });
    s.applyQuorumChange(5, false, { id: 5, host: '10.0.0.5', port: 19095 });
    s.applyQuorumChange(5, true, undefined);
    const copy = new MetadataState();
    copy.restore(s.snapshot(), 10);
    expect(copy.quorumAddress(4)).toEqual({ id: 4, host: '10.0.0.4', port: 19094 });
    expect(copy.quorumAddress(5)).toBeUndefined();
    // Quorum requests are never entries of the log.
    expect(s.applyCommand({ type: 'addVoter', id: 6, host: 'h', port: 1 }, 11)).toMatchObject({ ok: false, code: 'INVALID_REQUEST' });
  });

  it('a joining controller names its Raft listener; a founding one may not contradict its place', () => {
    const joining = parseControllerOptions({ brokerId: 4, voters: VOTERS, raftAddress: '127.0.0.1:19094' });
    expect(joining).toMatchObject({ founding: false, self: { id: 4, host: '127.0.0.1', port: 19094 } });
    expect(parseControllerOptions({ brokerId: 2, voters: VOTERS })).toMatchObject({ founding: true, self: { id: 2, port: 19092 } });
    expect(() => parseControllerOptions({ brokerId: 4, voters: VOTERS })).toThrow(/not in controller.quorum.voters .*set controller.raft.address=host:port and run mq controller add-voter/);
    expect(() => parseControllerOptions({ brokerId: 2, voters: VOTERS, raftAddress: '127.0.0.1:1' })).toThrow(/contradicts broker 2's place/);
  });
});
