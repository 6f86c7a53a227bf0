/**
 * Broker liveness as the active controller judges it, in process: three real
 * RaftControllers (real Raft nodes, the real state machine) on an in-memory
 * network whose deliveries and per-node stalls the test scripts. A stall is
 * what a blocked event loop does to a process: its timers and the messages
 * sent to it wait until it ends, while its clock runs on.
 *
 * Regression (issue 21, fencings of live brokers in the 10-minute full-load
 * runs): the controller counted its own stall as the brokers' silence. It
 * sends no heartbeat while stalled, so no one answers; a broker owes it an
 * answer only from the first message sent to it after it was last heard from.
 */
import { pino } from 'pino';
import { MemoryStorage, MessageType, type Message, type RaftTransport } from '@mq/consensus';
import type { TimerHandle, Timers } from '@mq/protocol/components';
import { waitFor } from '../test-support/net.js';
import { RaftController } from './controller.js';
import type { CommandResult, MetadataCommand } from './commands.js';

const logger = pino({ level: 'silent' });
const VOTERS = '1@127.0.0.1:19191,2@127.0.0.1:19192,3@127.0.0.1:19193';
const TICK = 50;
const SESSION = 800;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One process's event loop as far as the test controls it: while stalled, its timers and incoming messages wait. */
class Loop {
  private until = 0;
  private readonly deferred: Array<() => void> = [];
  private readonly inbox: Message[] = [];
  constructor(private readonly deliver: (m: Message) => void) {}

  get stalled(): boolean {
    return Date.now() < this.until;
  }

  readonly timers: Timers = {
    setTimeout: (fn, ms) => {
      const h = { cancelled: false, t: undefined as unknown as NodeJS.Timeout };
      h.t = setTimeout(() => (this.stalled ? this.deferred.push(() => h.cancelled || fn()) : fn()), ms);
      return h as unknown as TimerHandle;
    },
    clearTimeout: (handle) => {
      const h = handle as unknown as { cancelled: boolean; t: NodeJS.Timeout };
      h.cancelled = true;
      clearTimeout(h.t);
    },
  };

  receive(m: Message): void {
    if (this.stalled) this.inbox.push(m);
    else this.deliver(m);
  }

  /** Blocks this loop for `ms`; afterwards its due timers run first, then the messages that arrived meanwhile (as Node does). */
  stall(ms: number): void {
    this.until = Date.now() + ms;
    setTimeout(() => {
      this.until = 0;
      for (const fn of this.deferred.splice(0)) fn();
      const inbox = this.inbox.splice(0);
      setImmediate(() => inbox.forEach((m) => this.deliver(m)));
    }, ms);
  }
}

/** A metadata log disk that can turn slow (an fsync behind a flood of other writes). */
class SlowDisk extends MemoryStorage {
  delayMs = 0;
  override async save(update: Parameters<MemoryStorage['save']>[0]): Promise<void> {
    if (this.delayMs > 0) await sleep(this.delayMs);
    return super.save(update);
  }
}

class Network {
  readonly loops = new Map<number, Loop>();
  private readonly handlers = new Map<number, (m: Message) => void>();
  private readonly cut = new Set<string>();
  /** Called on each message before it is delivered. */
  onDeliver: (m: Message) => void = () => undefined;

  loop(id: number): Loop {
    let l = this.loops.get(id);
    if (!l) this.loops.set(id, (l = new Loop((m) => this.handlers.get(id)?.(m))));
    return l;
  }

  transport(id: number): RaftTransport {
    return {
      send: (messages) => {
        for (const m of messages) {
          const copy = structuredClone(m);
          setImmediate(() => {
            if (this.cut.has(`${copy.from}>${copy.to}`)) return;
            this.onDeliver(copy);
            this.loop(copy.to).receive(copy);
          });
        }
      },
      listen: (h) => void this.handlers.set(id, h),
      close: async () => void this.handlers.delete(id),
    };
  }

  /** Drops messages from `a` to `b` for `ms`. */
  cutFor(a: number, b: number, ms: number): void {
    this.cut.add(`${a}>${b}`);
    setTimeout(() => this.cut.delete(`${a}>${b}`), ms);
  }
}

describe('broker liveness on the active controller', () => {
  const net = new Network();
  const ctrls = new Map<number, RaftController>();
  const disks = new Map<number, SlowDisk>();

  afterAll(async () => {
    await Promise.all([...ctrls.values()].map((c) => c.close()));
  });

  beforeAll(async () => {
    for (const id of [1, 2, 3]) {
      const c: RaftController = new RaftController(
        // (Besides its round every 200 ms, the controller runs one just after the first session that can run out.)
        { brokerId: id, voters: VOTERS, tickMs: TICK, sessionTimeoutMs: SESSION, livenessCheckMs: 200, fsync: false },
        {
          logger,
          timers: net.loop(id).timers,
          raft: { transport: net.transport(id), storage: disks.set(id, new SlowDisk()).get(id)! },
          forward: (to: number, cmd: MetadataCommand, timeoutMs: number): Promise<CommandResult> => ctrls.get(to)!.handleForward(cmd, timeoutMs),
        },
      );
      ctrls.set(id, c);
      await c.start('/nonexistent');
    }
    const leader = await activeController();
    for (const id of [1, 2, 3]) await leader.submit({ type: 'registerBroker', id, host: '127.0.0.1', port: 9000 + id, httpPort: 8000 + id, rack: '', incarnation: `run-${id}` }, 5000);
  }, 30_000);

  const activeController = () => waitFor(() => [...ctrls.values()].find((c) => c.isActive));
  /** The active controller once every broker is unfenced. */
  const healthy = async (): Promise<RaftController> => {
    const leader = await activeController();
    await waitFor(() => [1, 2, 3].every((id) => leader.metadata.broker(id)?.fenced === false), 15_000);
    return leader;
  };
  /** The brokers the active controller fenced within `ms` (a live one is unfenced again within a round: this watches for the fencing itself). */
  const fencedWithin = async (leader: RaftController, ms: number): Promise<number[]> => {
    const fenced = new Set<number>();
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      for (const id of [1, 2, 3]) if (leader.metadata.broker(id)?.fenced) fenced.add(id);
      await sleep(5);
    }
    return [...fenced];
  };

  it('a controller stalled for most of a session does not count its stall as a live broker\'s silence (issue 21)', async () => {
    const leader = await healthy();
    const L = leader.options.brokerId;
    const F = [1, 2, 3].find((id) => id !== L)!;
    // Right after the leader hears F answer a heartbeat (nothing owed), its loop stalls for 300 ms; then F's answers
    // are lost for 600 ms more (a slow follower). F was heard from 900 ms before its answers get through again, but
    // it was asked only 600 ms before: live by its session (800 ms), and the controller must not fence it.
    let started = 0;
    net.onDeliver = (m) => {
      if (started || m.from !== F || m.to !== L || m.type !== MessageType.HeartbeatResp) return;
      started = Date.now();
      setImmediate(() => {
        net.loop(L).stall(300);
        net.cutFor(F, L, 900);
      });
    };
    await waitFor(() => started > 0);
    expect(await fencedWithin(leader, 1_800)).toEqual([]);
    expect(leader.isActive).toBe(true);
  }, 40_000);

  it('a controller that stalled past a session reads the answers waiting on its sockets before fencing for silence (issue 21)', async () => {
    const leader = await healthy();
    const L = leader.options.brokerId;
    // The whole machine stalls for 1.2 sessions while a follower's answer to a heartbeat is on its way to the
    // leader. When the stall ends, the leader's due round runs before that answer is read (timers first, as in
    // Node's event loop); the follower is live and must not be fenced.
    let started = 0;
    net.onDeliver = (m) => {
      if (started || m.to !== L || m.type !== MessageType.HeartbeatResp) return;
      started = Date.now();
      for (const l of net.loops.values()) l.stall(SESSION * 1.2);
    };
    await waitFor(() => started > 0);
    expect(await fencedWithin(leader, SESSION * 2)).toEqual([]);
    expect(leader.isActive).toBe(true);
  }, 40_000);

  it('a follower whose metadata log write takes longer than a session still answers heartbeats and is not fenced (issue 21)', async () => {
    const leader = await healthy();
    net.onDeliver = () => undefined;
    const F = [1, 2, 3].find((id) => id !== leader.options.brokerId)!;
    // F's next write of the metadata log takes 1.2 sessions; the command commits on the other two meanwhile.
    disks.get(F)!.delayMs = SESSION * 1.2;
    const fenced = fencedWithin(leader, SESSION * 2);
    await leader.submit({ type: 'setReplicationThrottle', bytesPerSec: 4321 }, 5000);
    expect(await fenced).toEqual([]);
    disks.get(F)!.delayMs = 0;
    await waitFor(() => ctrls.get(F)!.metadata.replicationThrottle === 4321);
  }, 40_000);
});
