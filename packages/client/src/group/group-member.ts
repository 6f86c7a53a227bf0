/**
 * The member side of the group protocol: join, sync, heartbeat and leave,
 * the leader's assignment, and the rebalance listener calls, for both the
 * eager and the cooperative incremental protocol.
 *
 * One loop does the joins and calls every listener, one at a time; the
 * heartbeat runs on its own timer (also while a listener runs), and when it
 * learns of a rebalance or a loss it only flags the loop. Time comes from
 * injected clock and timers.
 *
 * Eager: before each join every owned partition is revoked; after the sync
 * the whole new assignment is assigned.
 * Cooperative: the member keeps its partitions while rejoining and reports
 * them as owned; after the sync only the difference moves: revoked ones are
 * revoked, added ones assigned, and if anything was revoked the member
 * rejoins at once so the new owner gets it in a follow-up rebalance.
 */
import { MqError, errorCodeFromNumber, isMqError, type ErrorCode } from '@mq/protocol/errors';
import { Retrier, isProgrammerError } from '../retrier.js';
import { rebalanceProtocolOf, resolveAssignors } from './assignors/index.js';
import {
  CONSUMER_PROTOCOL_TYPE,
  compareTp,
  decodeAssignment,
  decodeSubscription,
  encodeAssignment,
  encodeSubscription,
  tpKey,
} from './consumer-protocol.js';
import { parseGroupMemberOptions, type GroupMemberOptions, type ParsedGroupMemberOptions } from './options.js';
import { silentLogger, systemClock, systemTimers, type Clock, type Logger, type TimerHandle, type Timers } from '@mq/protocol/components';
import type {
  Assignor,
  AssignorMember,
  Generation,
  GroupMetadataSource,
  GroupRpc,
  MemberState,
  RebalanceListener,
  RebalanceProtocol,
  TopicPartition,
} from './types.js';

export interface GroupMemberComponents {
  rpc: GroupRpc;
  metadata: GroupMetadataSource;
  listener?: RebalanceListener;
  clock?: Clock;
  timers?: Timers;
  logger?: Logger;
  random?: () => number;
  /** A fatal error (fenced, misconfigured): the member stops; the consumer surfaces it. */
  onFatal?: (err: MqError) => void;
  /** A rebalance listener threw: logged, and handed here so the application can see it. */
  onListenerError?: (err: unknown, callback: keyof RebalanceListener) => void;
}


/** Join errors that end the member: retrying cannot help. */
const FATAL: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'FENCED_INSTANCE_ID',
  'INVALID_SESSION_TIMEOUT',
  'INCONSISTENT_GROUP_PROTOCOL',
  'GROUP_MAX_SIZE_REACHED',
  'INVALID_GROUP_ID',
  'UNSUPPORTED_VERSION',
]);

function codeOf(r: { errorCode?: number | null }): ErrorCode {
  return errorCodeFromNumber(r.errorCode ?? 0);
}

function responseError(code: ErrorCode, r: { errorMessage?: string | null }, what: string): MqError {
  return new MqError(code, `${what}: ${r.errorMessage || code}`);
}

export class GroupMember {
  readonly options: ParsedGroupMemberOptions;
  readonly protocol: RebalanceProtocol;
  private readonly assignors: Assignor[];
  private readonly rpc: GroupRpc;
  private readonly metadata: GroupMetadataSource;
  private readonly listener: RebalanceListener;
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly logger: Logger;
  private readonly retrier: Retrier;
  private readonly components: GroupMemberComponents;

  private stateValue: MemberState = 'unjoined';
  private memberId = '';
  private generationId = -1;
  private protocolName = '';
  private leaderId = '';
  private owned: TopicPartition[] = [];
  /** The last assignment, sent as owned with eager sticky so stickiness survives the revocation. */
  private previous: TopicPartition[] = [];
  private pendingLost: TopicPartition[] = [];
  private subscription: readonly string[] | RegExp | null = null;
  private joinedTopics: string[] = [];
  private leaderCounts = new Map<string, number>();
  private rejoinReason: string | null = 'initial join';
  /** Counts rejoin requests, so one that arrives during a round is not lost when the round ends. */
  private rejoinRequests = 0;
  private attempt = 0;
  private loopDone: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private heartbeatTimer: TimerHandle | null = null;
  private metadataTimer: TimerHandle | null = null;
  private lastHeartbeatOk = 0;
  private lastPoll: number;
  private leftForPollTimeout = false;
  private abort = new AbortController();
  private closing = false;
  private fatalError: MqError | null = null;
  private readonly stableWaiters = new Set<() => void>();
  private rebalances = 0;

  constructor(options: GroupMemberOptions, components: GroupMemberComponents) {
    this.options = parseGroupMemberOptions(options);
    this.assignors = resolveAssignors(this.options.partitionAssigners);
    this.protocol = rebalanceProtocolOf(this.assignors);
    this.components = components;
    this.rpc = components.rpc;
    this.metadata = components.metadata;
    this.listener = components.listener ?? {};
    this.clock = components.clock ?? systemClock;
    this.timers = components.timers ?? systemTimers;
    this.logger = components.logger ?? silentLogger;
    this.retrier = new Retrier(
      { initialDelayMs: this.options.retryBackoffMs, maxDelayMs: this.options.maxRetryBackoffMs, retries: Number.MAX_SAFE_INTEGER },
      { random: components.random },
    );
    this.lastPoll = this.clock();
  }

  get state(): MemberState {
    return this.stateValue;
  }

  /** Partitions this member owns now. */
  assignment(): TopicPartition[] {
    return [...this.owned];
  }

  /** The generation to commit with, or null while the member is not in a generation. */
  generation(): Generation | null {
    if (this.generationId < 0 || this.memberId === '') return null;
    return { generationId: this.generationId, memberId: this.memberId, groupInstanceId: this.options.groupInstanceId, protocolName: this.protocolName };
  }

  isLeader(): boolean {
    return this.memberId !== '' && this.memberId === this.leaderId;
  }

  /** Completed rebalances (for metrics and tests). */
  get rebalanceCount(): number {
    return this.rebalances;
  }

  get fatal(): MqError | null {
    return this.fatalError;
  }

  /** Sets or replaces the subscription; a change rejoins the group. */
  subscribe(topics: readonly string[] | RegExp): void {
    if (this.closing) throw new MqError('CLOSED', 'the group member is closed');
    if (Array.isArray(topics)) {
      if (topics.length === 0 || topics.some((t) => typeof t !== 'string' || t === '')) {
        throw new MqError('INVALID_ARGUMENT', 'subscribe to at least one non-empty topic name, or a RegExp');
      }
      this.subscription = [...new Set(topics)].sort();
    } else if (topics instanceof RegExp) {
      this.subscription = new RegExp(topics.source, topics.flags.replace('g', '').replace('y', ''));
    } else {
      throw new MqError('INVALID_ARGUMENT', 'subscribe takes an array of topic names or a RegExp');
    }
    this.requestRejoin('subscription changed');
    this.start();
  }

  /** Starts the join loop (idempotent; subscribe() starts it too). */
  start(): void {
    if (this.loopDone || this.closing) return;
    this.loopDone = this.loop();
    this.scheduleMetadataCheck();
  }

  /** The application polled: keeps the member within maxPollIntervalMs, and rejoins after a poll timeout. */
  notePoll(): void {
    this.lastPoll = this.clock();
    if (this.leftForPollTimeout) {
      this.leftForPollTimeout = false;
      this.requestRejoin('polling resumed after the poll interval expired');
    }
  }

  /** Asks for a rebalance (e.g. after a subscription or metadata change). */
  requestRejoin(reason: string): void {
    this.rejoinRequests++;
    if (this.rejoinReason === null) this.rejoinReason = reason;
    if (this.stateValue === 'stable') this.stateValue = 'unjoined';
    this.stopHeartbeat();
    this.wakeLoop();
  }

  /** Resolves once the member is stable (has an assignment, possibly empty). */
  waitForStable(signal?: AbortSignal): Promise<void> {
    if (this.stateValue === 'stable') return Promise.resolve();
    if (this.fatalError) return Promise.reject(this.fatalError);
    if (this.closing) return Promise.reject(new MqError('CLOSED', 'the group member is closed'));
    return new Promise((resolve, reject) => {
      const done = () => {
        this.stableWaiters.delete(done);
        signal?.removeEventListener('abort', onAbort);
        if (this.stateValue === 'stable') resolve();
        else reject(this.fatalError ?? new MqError('CLOSED', 'the group member is closed'));
      };
      const onAbort = () => {
        this.stableWaiters.delete(done);
        reject(new MqError('ABORTED', 'waiting for the group assignment was aborted', { cause: signal!.reason }));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.stableWaiters.add(done);
    });
  }

  /**
   * Leaves the group: revokes the owned partitions (the listener commits
   * there), then sends LeaveGroup so the others rebalance at once. A static
   * member does not leave (its restart within the session timeout keeps the
   * assignment), unless `leave: true` is passed.
   */
  async close(options: { leave?: boolean } = {}): Promise<void> {
    if (this.closing) return this.loopDone ?? undefined;
    this.closing = true;
    this.abort.abort(new MqError('CLOSED', 'the group member is closing'));
    this.stopHeartbeat();
    if (this.metadataTimer) this.timers.clearTimeout(this.metadataTimer);
    this.wakeLoop();
    await this.loopDone?.catch(() => {});
    if (this.pendingLost.length > 0) await this.callListener('onPartitionsLost', this.takeLost());
    if (this.owned.length > 0) {
      const revoked = this.owned;
      await this.callListener('onPartitionsRevoked', revoked);
      this.owned = [];
    }
    const leave = options.leave ?? this.options.groupInstanceId === null;
    if (leave && this.memberId !== '' && !this.fatalError) {
      try {
        await this.rpc.leaveGroup({
          groupId: this.options.groupId,
          members: [{ memberId: this.memberId, groupInstanceId: this.options.groupInstanceId ?? '', reason: 'the consumer closed' }],
        });
      } catch (err) {
        this.logger.warn({ group: this.options.groupId, err }, 'leaving the group failed; the coordinator will expire the member');
      }
    }
    this.stateValue = 'closed';
    this.notifyStable();
  }

  // ------------------------------------------------------------- the loop

  private wakeLoop() {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.timers.setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = () => {
        this.timers.clearTimeout(timer);
        resolve();
      };
    });
  }

  private idle(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
    });
  }

  private async loop(): Promise<void> {
    while (!this.closing && !this.fatalError) {
      if (this.pendingLost.length > 0) {
        await this.callListener('onPartitionsLost', this.takeLost());
        continue;
      }
      if (this.rejoinReason === null || this.subscription === null || this.leftForPollTimeout) {
        await this.idle();
        continue;
      }
      try {
        const backoff = await this.joinRound();
        if (backoff) await this.sleep(this.retrier.delayMs(this.attempt++));
        else if (this.stateValue === 'stable') this.attempt = 0;
      } catch (err) {
        if (this.closing) break;
        if (isProgrammerError(err) || (isMqError(err) && !err.retriable && err.code !== 'CORRUPT_MESSAGE')) {
          this.fail(isMqError(err) ? err : new MqError('UNKNOWN', `group member failed: ${(err as Error).message}`, { cause: err }));
          break;
        }
        this.logger.warn({ group: this.options.groupId, err }, 'group request failed; retrying');
        if (this.stateValue !== 'stable') this.stateValue = 'unjoined';
        if (isMqError(err) && (err.code === 'NOT_COORDINATOR' || err.code === 'COORDINATOR_NOT_AVAILABLE')) this.rpc.coordinatorLost?.();
        await this.sleep(this.retrier.delayMs(this.attempt++));
      }
    }
    // A fatal error may have taken partitions with it: the application hears of them.
    if (this.pendingLost.length > 0 && !this.closing) await this.callListener('onPartitionsLost', this.takeLost());
  }

  private takeLost(): TopicPartition[] {
    const lost = this.pendingLost;
    this.pendingLost = [];
    return lost;
  }

  private fail(err: MqError) {
    this.fatalError = err;
    this.stateValue = 'failed';
    this.stopHeartbeat();
    this.logger.error({ group: this.options.groupId, err }, 'group member stopped');
    this.components.onFatal?.(err);
    this.notifyStable();
  }

  private notifyStable() {
    for (const w of [...this.stableWaiters]) w();
  }

  /** The partitions are gone without an orderly revoke (the generation is no longer ours). */
  private markLost(reason: string) {
    if (this.owned.length > 0) {
      this.logger.warn({ group: this.options.groupId, partitions: this.owned.length, reason }, 'partitions lost');
      this.pendingLost.push(...this.owned);
    }
    this.owned = [];
    this.previous = [];
  }

  private resetGeneration(forgetMemberId: boolean) {
    this.generationId = -1;
    this.leaderId = '';
    if (forgetMemberId) this.memberId = '';
  }

  private async resolveTopics(): Promise<string[]> {
    const sub = this.subscription!;
    if (!(sub instanceof RegExp)) return [...sub];
    const all = await this.metadata.listTopics(this.abort.signal);
    return all.filter((t) => !t.startsWith('__') && sub.test(t)).sort();
  }

  /** One join + sync. Returns true when the next attempt should back off. */
  private async joinRound(): Promise<boolean> {
    if (this.protocol === 'eager' && this.owned.length > 0) {
      const revoked = this.owned;
      this.previous = revoked;
      this.owned = [];
      await this.callListener('onPartitionsRevoked', revoked);
      if (this.closing) return false;
    }
    const requests = this.rejoinRequests;
    const topics = await this.resolveTopics();
    const reason = this.rejoinReason ?? 'rejoin';
    this.stateValue = 'joining';
    const subscription = encodeSubscription({
      topics,
      ownedPartitions: this.protocol === 'cooperative' ? this.owned : this.previous,
      generationId: this.generationId,
      rack: this.options.rack,
    });
    const join = await this.rpc.joinGroup(
      {
        groupId: this.options.groupId,
        sessionTimeoutMs: this.options.sessionTimeoutMs,
        rebalanceTimeoutMs: this.options.rebalanceTimeoutMs,
        memberId: this.memberId,
        groupInstanceId: this.options.groupInstanceId ?? '',
        protocolType: CONSUMER_PROTOCOL_TYPE,
        protocols: this.assignors.map((a) => ({ name: a.name, metadata: subscription })),
        reason,
      },
      this.abort.signal,
    );
    if (this.closing) return false;
    const joinCode = codeOf(join);
    if (joinCode !== 'NONE') return this.onJoinOrSyncError(joinCode, join, 'join');
    this.memberId = join.memberId ?? '';
    this.generationId = join.generationId ?? -1;
    this.protocolName = join.protocolName ?? '';
    this.leaderId = join.leader ?? '';
    this.joinedTopics = topics;
    let assignments: Array<{ memberId: string; assignment: Uint8Array }> = [];
    if (this.isLeader() && !join.skipAssignment) assignments = await this.assign(join.members ?? [], join.protocolName ?? '');
    this.stateValue = 'syncing';
    const sync = await this.rpc.syncGroup(
      {
        groupId: this.options.groupId,
        generationId: this.generationId,
        memberId: this.memberId,
        groupInstanceId: this.options.groupInstanceId ?? '',
        protocolType: CONSUMER_PROTOCOL_TYPE,
        protocolName: this.protocolName,
        assignments,
      },
      this.abort.signal,
    );
    if (this.closing) return false;
    const syncCode = codeOf(sync);
    if (syncCode !== 'NONE') return this.onJoinOrSyncError(syncCode, sync, 'sync');
    const assigned = decodeAssignment(sync.assignment).sort(compareTp);
    // A rejoin asked for while this round was in flight still has to happen.
    if (this.rejoinRequests === requests) this.rejoinReason = null;
    await this.install(assigned);
    return false;
  }

  private onJoinOrSyncError(code: ErrorCode, r: { errorMessage?: string | null; memberId?: string | null }, what: 'join' | 'sync'): boolean {
    switch (code) {
      case 'MEMBER_ID_REQUIRED':
        this.memberId = r.memberId ?? '';
        return false;
      case 'UNKNOWN_MEMBER_ID':
        this.markLost(`${what}: ${r.errorMessage ?? code}`);
        this.resetGeneration(true);
        return false;
      case 'ILLEGAL_GENERATION':
        this.markLost(`${what}: ${r.errorMessage ?? code}`);
        this.resetGeneration(false);
        return false;
      case 'REBALANCE_IN_PROGRESS':
        return false;
      case 'NOT_COORDINATOR':
      case 'COORDINATOR_NOT_AVAILABLE':
        this.rpc.coordinatorLost?.();
        return true;
      case 'INVALID_ASSIGNMENT':
        // The leader's assignor produced something the broker refused: a bug in the assignor; retrying after a backoff regenerates it.
        this.logger.error({ group: this.options.groupId, message: r.errorMessage }, 'the coordinator refused the assignment');
        return true;
      default: {
        const err = responseError(code, r, `${what} group "${this.options.groupId}"`);
        if (FATAL.has(code) || !err.retriable) {
          if (code === 'FENCED_INSTANCE_ID') this.markLost('fenced by a newer instance');
          this.fail(err);
          return false;
        }
        return true;
      }
    }
  }

  /** The leader computes everyone's assignment with the selected assignor. */
  private async assign(
    members: ReadonlyArray<{ memberId?: string | null; groupInstanceId?: string | null; metadata?: Uint8Array | null }>,
    protocolName: string,
  ): Promise<Array<{ memberId: string; assignment: Uint8Array }>> {
    const assignor = this.assignors.find((a) => a.name === protocolName);
    if (!assignor) throw new MqError('INCONSISTENT_GROUP_PROTOCOL', `the group chose assignor "${protocolName}", which this member does not have`);
    const decoded: AssignorMember[] = members.map((m) => {
      const s = decodeSubscription(m.metadata);
      return {
        memberId: m.memberId ?? '',
        groupInstanceId: m.groupInstanceId || null,
        topics: s.topics,
        ownedPartitions: s.ownedPartitions,
        generationId: s.generationId,
        userData: s.userData,
      };
    });
    const topics = [...new Set(decoded.flatMap((m) => m.topics))].sort();
    const counts = await this.metadata.partitionCounts(topics, this.abort.signal);
    this.leaderCounts = new Map(counts);
    const result = assignor.assign(decoded, counts, { protocol: this.protocol });
    this.logger.info(
      { group: this.options.groupId, generation: this.generationId, members: decoded.length, assignor: assignor.name },
      'computed the group assignment',
    );
    return decoded.map((m) => ({ memberId: m.memberId, assignment: encodeAssignment(result.get(m.memberId) ?? []) }));
  }

  private async install(assigned: TopicPartition[]): Promise<void> {
    this.rebalances++;
    if (this.protocol === 'cooperative') {
      const now = new Set(assigned.map(tpKey));
      const before = new Set(this.owned.map(tpKey));
      const revoked = this.owned.filter((tp) => !now.has(tpKey(tp)));
      const added = assigned.filter((tp) => !before.has(tpKey(tp)));
      this.owned = this.owned.filter((tp) => now.has(tpKey(tp)));
      this.becomeStable();
      if (revoked.length > 0) await this.callListener('onPartitionsRevoked', revoked);
      this.owned = assigned;
      this.previous = assigned;
      await this.callListener('onPartitionsAssigned', added);
      // The partitions given up go to their new owners in a follow-up rebalance.
      if (revoked.length > 0) this.requestRejoin(`revoked ${revoked.length} partition(s) for a follow-up rebalance`);
    } else {
      this.owned = assigned;
      this.previous = assigned;
      this.becomeStable();
      await this.callListener('onPartitionsAssigned', assigned);
    }
    this.notifyStable();
  }

  private becomeStable() {
    if (this.closing || this.fatalError) return;
    this.stateValue = 'stable';
    this.lastHeartbeatOk = this.clock();
    this.scheduleHeartbeat(this.options.heartbeatIntervalMs);
  }

  private async callListener(name: keyof RebalanceListener, partitions: TopicPartition[]): Promise<void> {
    const fn = this.listener[name];
    if (!fn) return;
    try {
      await fn.call(this.listener, [...partitions]);
    } catch (err) {
      this.logger.error({ group: this.options.groupId, err, callback: name }, 'rebalance listener failed');
      this.components.onListenerError?.(err, name);
    }
  }

  // ------------------------------------------------------------ heartbeat

  private stopHeartbeat() {
    if (this.heartbeatTimer) this.timers.clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = null;
  }

  private scheduleHeartbeat(ms: number) {
    this.stopHeartbeat();
    this.heartbeatTimer = this.timers.setTimeout(() => {
      this.heartbeatTimer = null;
      void this.heartbeat();
    }, ms);
  }

  private async heartbeat(): Promise<void> {
    if (this.stateValue !== 'stable' || this.closing) return;
    const { maxPollIntervalMs } = this.options;
    if (maxPollIntervalMs > 0 && this.clock() - this.lastPoll > maxPollIntervalMs) {
      await this.leaveForPollTimeout();
      return;
    }
    const generationId = this.generationId;
    let code: ErrorCode;
    let message = '';
    try {
      const r = await this.rpc.heartbeat(
        { groupId: this.options.groupId, generationId, memberId: this.memberId, groupInstanceId: this.options.groupInstanceId ?? '' },
        this.abort.signal,
      );
      code = codeOf(r);
      message = r.errorMessage ?? '';
    } catch (err) {
      code = isMqError(err) && err.retriable ? err.code : 'UNKNOWN';
      message = (err as Error).message;
    }
    if (this.stateValue !== 'stable' || this.closing || generationId !== this.generationId) return;
    switch (code) {
      case 'NONE':
        this.lastHeartbeatOk = this.clock();
        this.scheduleHeartbeat(this.options.heartbeatIntervalMs);
        return;
      case 'REBALANCE_IN_PROGRESS':
        this.lastHeartbeatOk = this.clock();
        this.requestRejoin('the group is rebalancing');
        return;
      case 'ILLEGAL_GENERATION':
        this.markLost(message);
        this.resetGeneration(false);
        this.requestRejoin('generation is stale');
        return;
      case 'UNKNOWN_MEMBER_ID':
        this.markLost(message);
        this.resetGeneration(true);
        this.requestRejoin('the coordinator no longer knows this member');
        return;
      case 'FENCED_INSTANCE_ID':
        this.markLost('fenced by a newer instance');
        this.fail(new MqError('FENCED_INSTANCE_ID', `heartbeat: ${message}`));
        this.wakeLoop();
        return;
      default:
        if (code === 'NOT_COORDINATOR' || code === 'COORDINATOR_NOT_AVAILABLE') this.rpc.coordinatorLost?.();
        if (this.clock() - this.lastHeartbeatOk >= this.options.sessionTimeoutMs) {
          // The coordinator has expired us by now: the partitions may have new owners.
          this.markLost(`no successful heartbeat within the session timeout (${message})`);
          this.resetGeneration(false);
          this.requestRejoin('session timed out');
          return;
        }
        this.scheduleHeartbeat(Math.min(this.options.retryBackoffMs, this.options.heartbeatIntervalMs));
    }
  }

  private async leaveForPollTimeout(): Promise<void> {
    this.logger.warn(
      { group: this.options.groupId, maxPollIntervalMs: this.options.maxPollIntervalMs },
      'no poll within maxPollIntervalMs: leaving the group so the partitions go to a live consumer',
    );
    this.leftForPollTimeout = true;
    this.stopHeartbeat();
    const memberId = this.memberId;
    this.markLost('poll interval expired');
    this.resetGeneration(this.options.groupInstanceId === null);
    this.stateValue = 'unjoined';
    this.wakeLoop();
    try {
      await this.rpc.leaveGroup({
        groupId: this.options.groupId,
        members: [{ memberId, groupInstanceId: this.options.groupInstanceId ?? '', reason: 'poll interval expired' }],
      });
    } catch (err) {
      this.logger.warn({ group: this.options.groupId, err }, 'leaving the group failed');
    }
  }

  // ------------------------------------------------------------- metadata

  private scheduleMetadataCheck() {
    this.metadataTimer = this.timers.setTimeout(() => {
      this.metadataTimer = null;
      void this.checkMetadata().finally(() => {
        if (!this.closing && !this.fatalError) this.scheduleMetadataCheck();
      });
    }, this.options.metadataMaxAgeMs);
  }

  /** Rejoins when a pattern now matches other topics, or (leader) when partition counts changed. */
  async checkMetadata(): Promise<void> {
    if (this.stateValue !== 'stable' || this.subscription === null) return;
    try {
      const topics = await this.resolveTopics();
      if (topics.join('\u0000') !== this.joinedTopics.join('\u0000')) {
        this.requestRejoin('the subscribed topics changed');
        return;
      }
      if (this.isLeader() && this.leaderCounts.size > 0) {
        const counts = await this.metadata.partitionCounts([...this.leaderCounts.keys()], this.abort.signal);
        for (const [t, n] of this.leaderCounts) {
          if (counts.get(t) !== n) {
            this.requestRejoin(`partition count of "${t}" changed`);
            return;
          }
        }
      }
    } catch (err) {
      this.logger.warn({ group: this.options.groupId, err }, 'metadata check failed');
    }
  }
}
