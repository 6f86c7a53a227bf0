/**
 * The controller as a broker-only process (process.roles=broker) sees it: it
 * does not vote; it follows the committed metadata log by fetching it from
 * the active controller (long-polled MetadataFetch requests, a snapshot when
 * it is further behind than the controller keeps entries) and applies it to
 * its own MetadataState with the same state machine as the voters. Each
 * fetch also carries its registration's incarnation, which makes it the
 * broker's heartbeat: when fetches stop for `broker.session.timeout.ms` the
 * active controller fences it. Commands go to the active controller as
 * ControllerForward requests over the same channel.
 */
import type { Logger } from 'pino';
import { MqError, errorCodeFromNumber, isMqError, type ErrorCode } from '@mq/protocol/errors';
import { EntryType } from '@mq/consensus';
import { sleep, systemClock, systemTimers, type Clock, type Timers } from '@mq/protocol/components';
import type { CommandResult, MetadataCommand } from './commands.js';
import type { ControllerChannel } from './controller-channel.js';
import type { Controller, ControllerStatus, MetadataFetch } from './controller.js';
import type { FeedRead } from './metadata-feed.js';
import { MetadataState } from './metadata-state.js';
import { submitWithRetry } from './submit.js';

export interface ObserverOptions {
  brokerId: number;
  /** This process's run; the fetches of the registered run are its heartbeats. */
  incarnation: string;
  sessionTimeoutMs: number;
  /** Long-poll time of a metadata fetch (kept well below the session timeout). */
  fetchMaxWaitMs?: number;
  fetchMaxEntries?: number;
}

export const DEFAULT_OBSERVER_FETCH_MAX_WAIT_MS = 500;
export const DEFAULT_OBSERVER_FETCH_MAX_ENTRIES = 1000;

export interface ObserverComponents {
  logger: Logger;
  channel: ControllerChannel;
  clock?: Clock;
  timers?: Timers;
}

export class ObserverController implements Controller {
  readonly metadata = new MetadataState();
  readonly options: { readonly brokerId: number; readonly sessionTimeoutMs: number };
  private readonly incarnation: string;
  private readonly fetchMaxWaitMs: number;
  private readonly fetchMaxEntries: number;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly channel: ControllerChannel;
  private readonly watchers = new Set<(leader: number) => void>();
  private controller = -1;
  private lastContact: number;
  /** When the last answer arrived and the controller's committed index in it. */
  private lastAnswer = { at: -1, committed: -1 };
  private closed = false;
  private loop: Promise<void> | undefined;
  private readonly abort = new AbortController();
  private failures = 0;
  private controllerChanges = 0;

  constructor(o: ObserverOptions, c: ObserverComponents) {
    this.options = Object.freeze({ brokerId: o.brokerId, sessionTimeoutMs: o.sessionTimeoutMs });
    this.incarnation = o.incarnation;
    this.fetchMaxWaitMs = Math.max(0, Math.min(o.fetchMaxWaitMs ?? DEFAULT_OBSERVER_FETCH_MAX_WAIT_MS, Math.floor(o.sessionTimeoutMs / 4)));
    this.fetchMaxEntries = o.fetchMaxEntries ?? DEFAULT_OBSERVER_FETCH_MAX_ENTRIES;
    this.logger = c.logger.child({ component: 'metadata-observer' });
    this.clock = c.clock ?? systemClock;
    this.timers = c.timers ?? systemTimers;
    this.channel = c.channel;
    this.lastContact = this.clock();
  }

  start(): void {
    this.loop ??= this.run();
  }

  get controllerId(): number {
    return this.leaderlessMs > this.options.sessionTimeoutMs ? -1 : this.controller;
  }

  get isActive(): boolean {
    return false;
  }

  get leaderlessMs(): number {
    const silent = this.clock() - this.lastContact;
    // A long poll answers within fetchMaxWaitMs: silence beyond a few of them means no controller.
    return silent <= this.fetchMaxWaitMs * 2 + 1000 ? 0 : silent;
  }

  onControllerChange(fn: (leader: number) => void): () => void {
    this.watchers.add(fn);
    return () => this.watchers.delete(fn);
  }

  private async run(): Promise<void> {
    while (!this.closed) {
      try {
        const r = await this.channel.request(
          {
            brokerId: this.options.brokerId,
            timeoutMs: this.fetchMaxWaitMs,
            metadataFetch: { brokerId: this.options.brokerId, incarnation: this.incarnation, fetchIndex: this.metadata.lastApplied, maxWaitMs: this.fetchMaxWaitMs, maxEntries: this.fetchMaxEntries },
          },
          this.fetchMaxWaitMs + 5000,
          this.abort.signal,
        );
        const code = r.errorCode ? errorCodeFromNumber(r.errorCode) : 'NONE';
        if (code !== 'NONE') throw new MqError(code as ErrorCode, r.errorMessage || 'metadata fetch refused', { controllerId: r.controllerId ?? -1 });
        this.applyAnswer(r.metadataFetch ?? {}, r.controllerId ?? -1);
        this.failures = 0;
      } catch (err) {
        if (this.closed) return;
        this.failures++;
        const code = isMqError(err) ? err.code : 'UNKNOWN';
        if (this.failures === 1 || this.failures % 50 === 0) this.logger.warn({ code, err: (err as Error).message, failures: this.failures }, 'metadata fetch from the controller failed; retrying');
        // A redirect goes at once; anything else waits a little (the controller may be electing).
        if (code !== 'NOT_CONTROLLER' || this.failures > 3) await this.sleep(Math.min(50 * this.failures, 500));
      }
    }
  }

  /** Applies one fetch answer: a snapshot first when there is one, then the entries after what is applied. */
  private applyAnswer(f: { entries?: { index?: number | null; data?: Uint8Array | null }[] | null; snapshot?: Uint8Array | null; snapshotIndex?: number | null; committedIndex?: number | null }, controllerId: number): void {
    this.lastContact = this.clock();
    if (controllerId !== this.controller) {
      if (controllerId > 0) this.controllerChanges++;
      this.controller = controllerId;
      this.logger.info({ controller: controllerId }, 'following the metadata log from the active controller');
      for (const w of [...this.watchers]) w(controllerId);
    }
    const snapIndex = Number(f.snapshotIndex ?? 0);
    if (f.snapshot && f.snapshot.length > 0 && snapIndex > 0) {
      this.logger.info({ index: snapIndex, applied: this.metadata.lastApplied }, 'loading a metadata snapshot from the controller');
      this.metadata.restore(f.snapshot, snapIndex);
    }
    for (const e of f.entries ?? []) {
      const index = Number(e.index ?? 0);
      if (index <= this.metadata.lastApplied) continue;
      this.metadata.apply({ index, term: 0, type: EntryType.Normal, data: e.data ?? new Uint8Array() });
    }
    this.lastAnswer = { at: this.clock(), committed: Number(f.committedIndex ?? -1) };
  }

  /** Waits for an answer that arrives after the call and for the metadata to reach the controller's committed index in it. */
  async catchUp(timeoutMs = 5000): Promise<void> {
    const since = this.clock();
    const deadline = since + timeoutMs;
    for (;;) {
      const a = this.lastAnswer;
      if (a.at >= since && this.metadata.lastApplied >= a.committed) return;
      if (this.clock() >= deadline) throw new MqError('REQUEST_TIMED_OUT', 'the cluster metadata did not catch up (no active controller reachable?)');
      await this.sleep(20);
    }
  }

  submit(command: MetadataCommand, timeoutMs = 10_000): Promise<unknown> {
    return submitWithRetry(
      command,
      (left): Promise<CommandResult> => this.channel.forward(this.options.brokerId, command, left),
      { timeoutMs, clock: this.clock, timers: this.timers, closed: () => this.closed },
    );
  }

  async handleForward(): Promise<CommandResult> {
    return { ok: false, code: 'NOT_CONTROLLER', message: `broker ${this.options.brokerId} is a broker-only process, not a controller (the active controller is ${this.controllerId})` };
  }

  async handleMetadataFetch(_f: MetadataFetch): Promise<FeedRead> {
    throw new MqError('NOT_CONTROLLER', `broker ${this.options.brokerId} is a broker-only process, not a controller (the active controller is ${this.controllerId})`, { controllerId: this.controllerId });
  }

  status(): ControllerStatus {
    return {
      controllerId: this.controllerId,
      active: false,
      raftTerm: -1,
      raftCommit: this.lastAnswer.committed,
      applied: this.metadata.lastApplied,
      raftElections: 0,
      controllerChanges: this.controllerChanges,
      brokers: this.metadata.brokers().map((b) => ({ id: b.id, fenced: b.fenced, lastSeenMsAgo: -1 })),
    };
  }

  private sleep(ms: number): Promise<void> {
    return sleep(this.timers, ms);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.abort.abort();
    this.channel.close();
    await this.loop?.catch(() => undefined);
  }
}
