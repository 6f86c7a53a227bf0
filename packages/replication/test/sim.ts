/**
 * A deterministic in-memory cluster for one partition: brokers with
 * MemoryLogs, a controller that commits ISR changes and elects leaders only
 * from the ISR, and a network that routes follower fetches to the leader's
 * handleFetch. Time moves only through ManualTimers.advance.
 */
import { MqError } from '@mq/protocol/errors';
import { encodeBatchSync, iterateBatches } from '@mq/protocol/batch';
import {
  createFollowerFetcher,
  createPartitionLeader,
  handleFetch,
  handleOffsetForLeaderEpoch,
  type AlterPartitionRequest,
  type FetchRequest,
  type FollowerFetcher,
  type OffsetForLeaderEpochRequest,
  type PartitionLeader,
  type PartitionState,
  type ReplicaLog,
} from '../src/index.js';
import type { Logger } from '@mq/protocol/components';
import { ManualTimers, MemoryCheckpoint, MemoryLog, settle } from '../src/testing/index.js';

export const TOPIC = 't';
export const PARTITION = 0;

export interface Trace {
  lines: string[];
}

/** A log the simulation can hold: MemoryLog or a real @mq/log-store Log. */
export type SimLog = ReplicaLog & { close(): Promise<void> };

export interface SimBroker {
  id: number;
  alive: boolean;
  log: SimLog;
  checkpoint: MemoryCheckpoint;
  leader: PartitionLeader | null;
  fetcher: FollowerFetcher | null;
}

export interface SimOptions {
  brokers: number;
  minInsyncReplicas?: number;
  replicaLagTimeMaxMs?: number;
  maxWaitMs?: number;
  /** Records a line per protocol event (ISR changes, truncations, elections). */
  trace?: string[];
  seed?: number;
  /**
   * Opens broker `id`'s log (default: a MemoryLog). With real on-disk logs,
   * set `realIo` so waits also give the file system real time.
   */
  openLog?: (id: number) => Promise<SimLog>;
  realIo?: boolean;
  /** MemoryLogs offer assignLeaderEpoch (default), or record epochs only with appends, like @mq/log-store. */
  assignLeaderEpoch?: boolean;
  /** Default 0: every HW change is checkpointed at once. */
  highWatermarkCheckpointIntervalMs?: number;
}

function traceLogger(id: number, trace: string[] | undefined): Logger | undefined {
  if (!trace) return undefined;
  const keep = new Set(['truncating divergent tail', 'truncating below the high watermark: records this replica saw committed are discarded', 'ISR changed', 'proposing ISR shrink', 'proposing ISR expand', "replica is behind the leader's log start: truncating fully and restarting from it"]);
  const write = (obj: object, msg?: string): void => {
    if (!msg || !keep.has(msg)) return;
    const o = obj as Record<string, unknown>;
    const detail = ['from', 'to', 'isr', 'proposed']
      .filter((k) => o[k] !== undefined)
      .map((k) => `${k}=${Array.isArray(o[k]) ? `[${(o[k] as number[]).join(',')}]` : String(o[k])}`)
      .join(' ');
    trace.push(`b${id}: ${msg}${detail ? ' ' + detail : ''}`);
  };
  return { debug: write, info: write, warn: write, error: write };
}

/** A deterministic PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function batch(value: string, count = 1): Buffer {
  const records = Array.from({ length: count }, (_, i) => ({ value: count === 1 ? value : `${value}#${i}` }));
  return encodeBatchSync(records, { now: 1_700_000_000_000 });
}

export class SimCluster {
  readonly timers = new ManualTimers(1_000_000);
  readonly brokers = new Map<number, SimBroker>();
  readonly options: Required<Omit<SimOptions, 'trace' | 'openLog'>> & { trace?: string[]; openLog?: SimOptions['openLog'] };
  state: PartitionState & { leader: number; replicas: number[] };
  /** Links cut between pairs of brokers ("a-b"). */
  readonly cut = new Set<string>();
  readonly #random: () => number;

  constructor(options: SimOptions) {
    this.options = {
      minInsyncReplicas: 1,
      replicaLagTimeMaxMs: 10_000,
      maxWaitMs: 500,
      seed: 1,
      realIo: false,
      assignLeaderEpoch: true,
      highWatermarkCheckpointIntervalMs: 0,
      ...options,
    };
    this.#random = prng(this.options.seed);
    const ids = Array.from({ length: options.brokers }, (_, i) => i + 1);
    for (const id of ids) {
      this.brokers.set(id, {
        id,
        alive: true,
        log: new MemoryLog({ clock: this.timers.clock, assignLeaderEpoch: this.options.assignLeaderEpoch }),
        checkpoint: new MemoryCheckpoint(),
        leader: null,
        fetcher: null,
      });
    }
    this.state = { leader: ids[0]!, leaderEpoch: 0, partitionEpoch: 0, isr: [...ids], replicas: ids };
  }

  broker(id: number): SimBroker {
    const b = this.brokers.get(id);
    if (!b) throw new Error(`no broker ${id}`);
    return b;
  }

  get leader(): PartitionLeader {
    const l = this.broker(this.state.leader).leader;
    if (!l) throw new Error('no leader');
    return l;
  }

  trace(line: string): void {
    this.options.trace?.push(line);
  }

  async start(): Promise<void> {
    if (this.options.openLog) {
      for (const b of this.brokers.values()) b.log = this.#tracked(await this.options.openLog(b.id));
    }
    await this.#applyRoles();
    await settle();
  }

  #reachable(a: number, b: number): boolean {
    return this.broker(a).alive && this.broker(b).alive && !this.cut.has(`${a}-${b}`) && !this.cut.has(`${b}-${a}`);
  }

  /** The controller's AlterPartition: checks the leader epoch and the partition epoch. */
  async alterPartition(request: AlterPartitionRequest): Promise<PartitionState> {
    await Promise.resolve();
    if (!this.broker(request.leaderId).alive) throw new MqError('BROKER_NOT_AVAILABLE', 'leader is down');
    if (request.leaderEpoch !== this.state.leaderEpoch || request.leaderId !== this.state.leader) {
      throw new MqError('FENCED_LEADER_EPOCH', `leader epoch ${request.leaderEpoch} is not ${this.state.leaderEpoch}`);
    }
    if (request.partitionEpoch !== this.state.partitionEpoch) {
      throw new MqError('INCONSISTENT_PARTITION_EPOCH', `partition epoch ${request.partitionEpoch} is not ${this.state.partitionEpoch}`);
    }
    this.state = { ...this.state, isr: [...request.isr], partitionEpoch: this.state.partitionEpoch + 1 };
    return { leaderEpoch: this.state.leaderEpoch, partitionEpoch: this.state.partitionEpoch, isr: [...this.state.isr], replicas: this.state.replicas };
  }

  async #fetch(from: number, to: number, request: FetchRequest, signal: AbortSignal) {
    await Promise.resolve();
    if (!this.#reachable(from, to)) throw new MqError('CONNECTION_ERROR', `broker ${to} unreachable from ${from}`);
    const target = this.broker(to);
    const response = await handleFetch(
      request,
      { timers: this.timers, leaders: () => target.leader ?? undefined },
      signal,
    );
    if (!this.#reachable(from, to)) throw new MqError('CONNECTION_ERROR', `broker ${to} unreachable from ${from}`);
    return response;
  }

  async #offsetForLeaderEpoch(from: number, to: number, request: OffsetForLeaderEpochRequest) {
    await Promise.resolve();
    if (!this.#reachable(from, to)) throw new MqError('CONNECTION_ERROR', `broker ${to} unreachable from ${from}`);
    const target = this.broker(to);
    return handleOffsetForLeaderEpoch(request, { leaders: () => target.leader ?? undefined });
  }

  /** Makes every live broker play the role the controller's state gives it. */
  async #applyRoles(): Promise<void> {
    for (const b of this.brokers.values()) {
      if (!b.alive) continue;
      if (b.id === this.state.leader) {
        if (b.leader && b.leader.leaderEpoch === this.state.leaderEpoch) continue;
        if (b.fetcher) {
          await b.fetcher.close();
          b.fetcher = null;
        }
        if (b.leader) await b.leader.resign();
        b.leader = await createPartitionLeader(
          {
            topic: TOPIC,
            partition: PARTITION,
            brokerId: b.id,
            leaderEpoch: this.state.leaderEpoch,
            partitionEpoch: this.state.partitionEpoch,
            replicas: this.state.replicas,
            isr: this.state.isr,
            minInsyncReplicas: this.options.minInsyncReplicas,
            replicaLagTimeMaxMs: this.options.replicaLagTimeMaxMs,
            highWatermarkCheckpointIntervalMs: this.options.highWatermarkCheckpointIntervalMs,
          },
          {
            log: b.log,
            clock: this.timers.clock,
            timers: this.timers,
            checkpoint: b.checkpoint,
            alterPartition: (req) => this.alterPartition(req),
            logger: traceLogger(b.id, this.options.trace),
          },
        );
      } else {
        if (b.leader) {
          await b.leader.resign();
          b.leader = null;
        }
        if (b.fetcher && b.fetcher.leaderId === this.state.leader) {
          b.fetcher.updateLeaderEpoch(TOPIC, PARTITION, this.state.leaderEpoch);
          continue;
        }
        if (b.fetcher) await b.fetcher.close();
        const fetcher = createFollowerFetcher(
          {
            brokerId: b.id,
            leaderId: this.state.leader,
            maxWaitMs: this.options.maxWaitMs,
            backoffMs: 50,
            maxBackoffMs: 400,
            requestTimeoutMs: 5_000,
            highWatermarkCheckpointIntervalMs: this.options.highWatermarkCheckpointIntervalMs,
          },
          {
            fetch: (to, req, signal) => this.#fetch(b.id, to, req, signal),
            offsetForLeaderEpoch: (to, req) => this.#offsetForLeaderEpoch(b.id, to, req),
            clock: this.timers.clock,
            timers: this.timers,
            random: this.#random,
            logger: traceLogger(b.id, this.options.trace),
          },
        );
        b.fetcher = fetcher;
        await fetcher.addPartition({ topic: TOPIC, partition: PARTITION, log: b.log, leaderEpoch: this.state.leaderEpoch, checkpoint: b.checkpoint });
      }
    }
  }

  /**
   * Elects a new leader from the live ISR members (clean election), bumps
   * both epochs, and tells every live broker. Returns false when no ISR
   * member is alive (the partition is offline).
   */
  async elect(preferred?: number): Promise<boolean> {
    const candidates = this.state.isr.filter((id) => this.broker(id).alive);
    if (candidates.length === 0) return false;
    const next = preferred !== undefined && candidates.includes(preferred) ? preferred : candidates.find((id) => id !== this.state.leader) ?? candidates[0]!;
    this.state = {
      ...this.state,
      leader: next,
      leaderEpoch: this.state.leaderEpoch + 1,
      partitionEpoch: this.state.partitionEpoch + 1,
      isr: this.state.isr.filter((id) => this.broker(id).alive),
    };
    this.trace(`controller: elected b${next} epoch ${this.state.leaderEpoch} isr [${this.state.isr.join(',')}]`);
    await this.#applyRoles();
    await settle();
    return true;
  }

  /** A process crash: the log survives (flushed, or in the page cache), the process state does not. */
  async crash(id: number): Promise<void> {
    const b = this.broker(id);
    if (!b.alive) return;
    b.alive = false;
    this.trace(`b${id}: crashed`);
    if (b.leader) {
      await b.leader.resign();
      b.leader = null;
    }
    if (b.fetcher) {
      await b.fetcher.close();
      b.fetcher = null;
    }
    if (this.state.leader === id) {
      await this.elect();
    } else if (this.state.isr.includes(id) && this.state.isr.length > 1) {
      // The controller fences the broker and drops it from the ISR.
      this.state = { ...this.state, isr: this.state.isr.filter((x) => x !== id), partitionEpoch: this.state.partitionEpoch + 1 };
      this.trace(`controller: fenced b${id} isr [${this.state.isr.join(',')}]`);
      await this.broker(this.state.leader).leader?.applyPartitionState(this.state);
    }
    await settle();
  }

  /**
   * A follower's disk is replaced: it crashes, comes back with an empty log
   * (and no checkpoint), and the controller, seeing the new incarnation
   * register, has dropped it from the ISR (as crash() does).
   */
  async wipe(id: number): Promise<void> {
    const b = this.broker(id);
    if (!b.alive || id === this.state.leader) return;
    await this.crash(id);
    await b.log.close();
    b.log = this.options.openLog
      ? this.#tracked(await this.options.openLog(id))
      : new MemoryLog({ clock: this.timers.clock, assignLeaderEpoch: this.options.assignLeaderEpoch });
    b.checkpoint = new MemoryCheckpoint();
    this.trace(`b${id}: disk wiped`);
    await this.restart(id);
  }

  async restart(id: number): Promise<void> {
    const b = this.broker(id);
    if (b.alive) return;
    b.alive = true;
    this.trace(`b${id}: restarted`);
    if (!this.broker(this.state.leader).alive) {
      // The partition was offline: an ISR member coming back can lead again.
      if (this.state.isr.includes(id)) await this.elect(id);
      return;
    }
    await this.#applyRoles();
    await settle();
  }

  async produce(value: string, acks: -1 | 1 | 0 = -1, timeoutMs = 30_000): Promise<{ baseOffset: number; lastOffset: number }> {
    return this.leader.append(batch(value), { acks, timeoutMs });
  }

  async advance(ms: number, step = 100): Promise<void> {
    await this.#settle();
    for (let t = 0; t < ms; t += step) {
      await this.timers.advance(Math.min(step, ms - t));
      await this.#settle();
    }
  }

  /** Advances time until `cond` holds, or throws after `limitMs` of simulated time. */
  async until(cond: () => boolean, limitMs = 60_000, what = 'condition'): Promise<void> {
    await this.#settle();
    for (let t = 0; !cond(); t += 100) {
      if (t >= limitMs) throw new Error(`${what} not reached within ${limitMs} ms of simulated time`);
      await this.timers.advance(100);
      await this.#settle();
    }
  }

  /** Log operations in flight on real logs: simulated time waits for them. */
  #ioInFlight = 0;

  #tracked(log: SimLog): SimLog {
    const io = ['append', 'read', 'truncateTo', 'deleteRecordsBefore', 'flush'];
    return new Proxy(log, {
      get: (target, prop) => {
        const value: unknown = Reflect.get(target, prop, target);
        if (typeof value !== 'function') return value;
        if (!io.includes(String(prop))) return value.bind(target);
        return (...args: unknown[]) => {
          this.#ioInFlight++;
          return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args).finally(() => this.#ioInFlight--);
        };
      },
    });
  }

  /** Lets pending work run; with real logs, until no log operation is in flight. */
  async #settle(): Promise<void> {
    await settle();
    if (!this.options.realIo) return;
    for (let quiet = 0; quiet < 2; ) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      await settle();
      quiet = this.#ioInFlight === 0 ? quiet + 1 : 0;
    }
  }

  /** The broker's log as a MemoryLog (in-memory simulations only). */
  memoryLog(id: number): MemoryLog {
    const log = this.broker(id).log;
    if (!(log instanceof MemoryLog)) throw new Error(`broker ${id} does not use a MemoryLog`);
    return log;
  }

  async close(): Promise<void> {
    for (const b of this.brokers.values()) {
      await b.fetcher?.close();
      await b.leader?.close();
      b.fetcher = null;
      b.leader = null;
      await b.log.close();
    }
  }

  /** Offsets → batch bytes of a broker's log, read through the Log API. */
  async contents(id: number): Promise<Map<number, Buffer>> {
    const log = this.broker(id).log;
    const out = new Map<number, Buffer>();
    let offset = log.logStartOffset;
    while (offset < log.logEndOffset) {
      const { records, nextOffset } = await log.read(offset, 1 << 20);
      for (const span of iterateBatches(records)) {
        out.set(span.header.baseOffset, Buffer.from(records.subarray(span.position, span.position + span.size)));
      }
      if (nextOffset <= offset) break;
      offset = nextOffset;
    }
    return out;
  }
}
