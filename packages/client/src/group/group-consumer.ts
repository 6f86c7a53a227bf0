/**
 * A consumer in a consumer group: `subscribe(topics | RegExp)` and the group
 * assigns partitions; each starts at the group's committed offset (or
 * `autoOffsetReset` when the group has none); offsets are committed to the
 * group's coordinator.
 *
 * Delivery semantics:
 * - at-least-once (default): an offset is committed only after its record
 *   was processed. With `poll()`, the records a poll returned count as
 *   processed when the application polls again (or commits, or closes);
 *   with `run()`, when the handler for them has returned. A crash before the
 *   commit redelivers them; nothing is skipped.
 * - at-most-once: `poll()` / `run()` commit the offsets of the records they
 *   hand out before handing them out. A crash while processing skips them;
 *   nothing is delivered twice.
 */
import { MqError, isMqError } from '@mq/protocol/errors';
import type { Cluster } from '../cluster.js';
import { Consumer, type PollOptions } from '../consumer/consumer.js';
import type { TopicPartitionOffset } from '../consumer/fetcher.js';
import type { ConsumerOptions } from '../consumer/options.js';
import type { ConsumerRecord } from '../consumer/record-decoder.js';
import { tpKey } from './consumer-protocol.js';
import { CoordinatorClient, clusterMetadataSource, type CommittedOffset, type TopicPartitionOffsetAndMetadata } from './coordinator-client.js';
import type { Logger } from '@mq/protocol/components';
import { GroupMember } from './group-member.js';
import { channels, type RebalanceMessage } from '../diagnostics.js';
import type { GroupMemberOptions } from './options.js';
import type { GroupRpc, RebalanceListener, TopicPartition } from './types.js';

export type DeliverySemantics = 'at-least-once' | 'at-most-once';

export interface GroupConsumerOptions extends ConsumerOptions, Omit<GroupMemberOptions, 'groupId'> {
  groupId: string;
  /** Commit processed offsets periodically and on rebalance and close (default true). */
  autoCommit?: boolean;
  /** Default 5000 ms. */
  autoCommitIntervalMs?: number;
  /** Default at-least-once. */
  delivery?: DeliverySemantics;
}

export const DEFAULT_AUTO_COMMIT_INTERVAL_MS = 5_000;

/** What the group consumer needs of its coordinator (a CoordinatorClient; tests pass a fake). */
export type GroupCoordinatorClient = GroupRpc & Pick<CoordinatorClient, 'commit' | 'committed'>;

export interface GroupConsumerComponents {
  logger?: Logger;
  coordinator?: GroupCoordinatorClient;
}

export interface EachMessagePayload {
  topic: string;
  partition: number;
  message: ConsumerRecord;
}

export interface EachBatchPayload {
  topic: string;
  partition: number;
  messages: ConsumerRecord[];
  /** Marks a message processed (the batch's last message is marked when the handler returns). */
  resolveOffset(offset: number): void;
}

export interface RunOptions {
  eachMessage?: (payload: EachMessagePayload) => Promise<void> | void;
  eachBatch?: (payload: EachBatchPayload) => Promise<void> | void;
  /** Stops the loop (run() then resolves). */
  signal?: AbortSignal;
  /** poll() timeout of each round (default 1000 ms). */
  pollTimeoutMs?: number;
}

interface ParsedGroupConsumerOptions {
  autoCommit: boolean;
  autoCommitIntervalMs: number;
  delivery: DeliverySemantics;
}

function parseGroupConsumerOptions(o: GroupConsumerOptions): ParsedGroupConsumerOptions {
  const delivery = o.delivery ?? 'at-least-once';
  if (delivery !== 'at-least-once' && delivery !== 'at-most-once') {
    throw new MqError('INVALID_ARGUMENT', `delivery must be at-least-once or at-most-once, got ${String(delivery)}`);
  }
  const interval = o.autoCommitIntervalMs ?? DEFAULT_AUTO_COMMIT_INTERVAL_MS;
  if (!Number.isSafeInteger(interval) || interval < 1) {
    throw new MqError('INVALID_ARGUMENT', `autoCommitIntervalMs must be an integer >= 1, got ${String(o.autoCommitIntervalMs)}`);
  }
  return { autoCommit: o.autoCommit ?? true, autoCommitIntervalMs: interval, delivery };
}

export class GroupConsumer extends Consumer {
  readonly groupId: string;
  readonly group: ParsedGroupConsumerOptions;
  private readonly coordinator: GroupCoordinatorClient;
  private readonly member: GroupMember;
  private userListener: RebalanceListener = {};
  private subscribed = false;
  private closing = false;
  /** Next offset to commit per partition: what the application has processed (or, with poll(), been given). */
  private readonly consumed = new Map<string, { topic: string; partition: number; offset: number }>();
  /** Offsets handed out by the last poll(), processed once the application polls again. */
  private inFlight = new Map<string, { topic: string; partition: number; offset: number }>();
  private nextAutoCommit: number;
  private asyncCommits: Promise<void> = Promise.resolve();
  private readonly logger: Logger;
  /** Assigned partitions whose committed offsets could not be fetched yet. */
  private unstarted: TopicPartition[] = [];

  constructor(
    private readonly cluster: Cluster,
    options: GroupConsumerOptions,
    onClose?: () => void,
    components: GroupConsumerComponents = {},
  ) {
    super(cluster, options, onClose);
    this.group = parseGroupConsumerOptions(options);
    this.groupId = options.groupId;
    const logger = components.logger ?? cluster.logger;
    this.logger = logger;
    const memberOptions: GroupMemberOptions = {
      groupId: options.groupId,
      groupInstanceId: options.groupInstanceId,
      sessionTimeoutMs: options.sessionTimeoutMs,
      rebalanceTimeoutMs: options.rebalanceTimeoutMs,
      heartbeatIntervalMs: options.heartbeatIntervalMs,
      maxPollIntervalMs: options.maxPollIntervalMs,
      partitionAssigners: options.partitionAssigners,
      retryBackoffMs: options.retryBackoffMs,
      maxRetryBackoffMs: options.maxRetryBackoffMs,
      metadataMaxAgeMs: options.metadataMaxAgeMs,
      rack: options.rack,
    };
    this.coordinator = components.coordinator ?? new CoordinatorClient(cluster, options.groupId);
    this.member = new GroupMember(memberOptions, {
      rpc: this.coordinator,
      metadata: clusterMetadataSource(cluster),
      listener: {
        onPartitionsAssigned: (tps) => this.onAssigned(tps),
        onPartitionsRevoked: (tps) => this.onRevoked(tps),
        onPartitionsLost: (tps) => this.onLost(tps),
      },
      logger,
    });
    this.nextAutoCommit = Date.now() + this.group.autoCommitIntervalMs;
  }

  /** Joins the group for these topics (or every topic matching the RegExp), replacing any earlier subscription. */
  subscribe(topics: readonly string[] | RegExp, listener: RebalanceListener = {}): void {
    this.checkUsable();
    this.userListener = listener;
    this.subscribed = true;
    this.member.subscribe(topics);
  }

  /** Manual assignment is for consumers outside a subscription. */
  override assign(partitions: readonly TopicPartitionOffset[]): void {
    if (this.subscribed) throw new MqError('INVALID_ARGUMENT', 'this consumer subscribed to topics: the group assigns its partitions (use a consumer without subscribe() for assign())');
    super.assign(partitions);
  }

  override seek(tp: TopicPartition, offset: number): void {
    super.seek(tp, offset);
    const k = tpKey(tp);
    this.inFlight.delete(k);
    if (this.consumed.has(k) || this.isAssigned(tp)) this.consumed.set(k, { topic: tp.topic, partition: tp.partition, offset });
  }

  /** The member's state in the group ('stable' once it has its partitions). */
  get groupState() {
    return this.member.state;
  }

  /** The generation this consumer commits with, or null outside one. */
  generation() {
    return this.member.generation();
  }

  /** Resolves once this consumer has joined the group and has its assignment. */
  waitForAssignment(signal?: AbortSignal): Promise<void> {
    return this.member.waitForStable(signal);
  }

  override async poll(timeoutMs = 1000, options: PollOptions = {}): Promise<ConsumerRecord[]> {
    return this.pollGroup(timeoutMs, options, true);
  }

  private async pollGroup(timeoutMs: number, options: PollOptions, track: boolean): Promise<ConsumerRecord[]> {
    this.checkUsable();
    if (this.member.fatal) throw this.member.fatal;
    this.member.notePoll();
    // What the previous poll returned has been processed by now.
    for (const [k, v] of this.inFlight) this.consumed.set(k, v);
    this.inFlight.clear();
    this.maybeAutoCommit();
    if (this.unstarted.length > 0) {
      const retry = this.unstarted;
      this.unstarted = [];
      try {
        await this.startPartitions(retry);
      } catch (err) {
        this.unstarted.push(...retry.filter((tp) => !this.unstarted.some((u) => tpKey(u) === tpKey(tp))));
        if (!isMqError(err) || !err.retriable) throw err;
      }
    }
    if (this.subscribed && this.member.state !== 'stable' && this.assignment().length === 0) {
      const ac = new AbortController();
      const onAbort = () => ac.abort();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      const start = Date.now();
      const timer = setTimeout(() => ac.abort(), timeoutMs);
      try {
        await this.member.waitForStable(ac.signal).catch((err) => {
          if (!isMqError(err, 'ABORTED')) throw err;
        });
      } finally {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
      }
      timeoutMs = Math.max(0, timeoutMs - (Date.now() - start));
      if (this.assignment().length === 0) return [];
    }
    const records = (await super.poll(timeoutMs, options)).filter((r) => this.isAssigned(r));
    if (records.length === 0) return records;
    const next = new Map<string, { topic: string; partition: number; offset: number }>();
    for (const r of records) next.set(`${r.topic}\u0000${r.partition}`, { topic: r.topic, partition: r.partition, offset: r.offset + 1 });
    if (this.group.delivery === 'at-most-once') {
      // Commit before the application sees them: a crash skips them instead of repeating them.
      for (const [k, v] of next) this.consumed.set(k, v);
      await this.commitConsumed();
    } else if (track) {
      this.inFlight = next;
    }
    return records;
  }

  /**
   * Commits offsets and resolves once they are durable. Without arguments:
   * the position after every record this consumer has handed out (poll) or
   * processed (run). With offsets: exactly those (the offset of the next
   * record to read, as in Kafka).
   */
  async commit(offsets?: readonly TopicPartitionOffsetAndMetadata[], options: { signal?: AbortSignal } = {}): Promise<void> {
    this.checkUsable();
    if (offsets) {
      await this.coordinator.commit(offsets, this.subscribed ? this.requireGeneration() : null, options.signal);
      for (const o of offsets) this.consumed.set(tpKey(o), { topic: o.topic, partition: o.partition, offset: o.offset });
      return;
    }
    for (const [k, v] of this.inFlight) this.consumed.set(k, v);
    this.inFlight.clear();
    await this.commitConsumed(options.signal);
  }

  /** Commits in the background (in order); failures go to `onError` (and are logged), never thrown. */
  commitAsync(offsets?: readonly TopicPartitionOffsetAndMetadata[], onError?: (err: unknown) => void): void {
    this.asyncCommits = this.asyncCommits
      .then(() => this.commit(offsets))
      .catch((err) => {
        this.logger.warn({ group: this.groupId, err }, 'async commit failed');
        onError?.(err);
      });
  }

  /** The group's committed offsets for these partitions (default: this consumer's assignment). */
  async committed(partitions?: readonly TopicPartition[], options: { signal?: AbortSignal } = {}): Promise<CommittedOffset[]> {
    this.checkUsable();
    return this.coordinator.committed(partitions ?? this.assignment(), options.signal);
  }

  /**
   * The common loop: polls and hands records to `eachMessage` (one at a
   * time, in order per partition) or `eachBatch`, committing per the
   * delivery semantics. Resolves when the signal aborts or the consumer
   * closes; rejects with a handler's error after seeking its partition back
   * to the record that failed (so it is delivered again).
   */
  async run(options: RunOptions): Promise<void> {
    const { eachMessage, eachBatch, signal } = options;
    if (!eachMessage === !eachBatch) throw new MqError('INVALID_ARGUMENT', 'run() takes exactly one of eachMessage and eachBatch');
    const pollTimeout = options.pollTimeoutMs ?? 1000;
    while (!this.closing && !signal?.aborted) {
      let records: ConsumerRecord[];
      try {
        records = await this.pollGroup(pollTimeout, { signal }, false);
      } catch (err) {
        if (signal?.aborted || this.closing || isMqError(err, 'ABORTED') || isMqError(err, 'CLOSED')) break;
        throw err;
      }
      const byPartition = new Map<string, ConsumerRecord[]>();
      for (const r of records) {
        const k = `${r.topic}\u0000${r.partition}`;
        let list = byPartition.get(k);
        if (!list) byPartition.set(k, (list = []));
        list.push(r);
      }
      for (const [k, list] of byPartition) {
        const first = list[0]!;
        const tp = { topic: first.topic, partition: first.partition };
        let done = first.offset;
        const mark = (offset: number) => {
          done = offset + 1;
          if (this.group.delivery === 'at-least-once' && this.isAssigned(tp)) this.consumed.set(k, { ...tp, offset: done });
        };
        try {
          if (eachBatch) {
            await eachBatch({ ...tp, messages: list, resolveOffset: mark });
            mark(list[list.length - 1]!.offset);
          } else {
            for (const message of list) {
              if (!this.isAssigned(tp) || this.closing) break; // revoked meanwhile: the new owner takes over
              await eachMessage!({ ...tp, message });
              mark(message.offset);
            }
          }
        } catch (err) {
          if (this.isAssigned(tp) && !this.closing) super.seek(tp, done);
          throw err;
        }
      }
      this.maybeAutoCommit();
    }
  }

  /** Yields records one at a time (polling as a group member, so commits and the poll interval work) until closed. */
  override async *[Symbol.asyncIterator](): AsyncIterator<ConsumerRecord> {
    while (!this.closing) {
      let records: ConsumerRecord[];
      try {
        records = await this.poll(1000);
      } catch (err) {
        if (isMqError(err, 'CLOSED')) return;
        throw err;
      }
      for (const r of records) {
        if (this.closing) return;
        yield r;
      }
    }
  }

  override async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    // The member revokes the partitions first: the listener commits what was processed.
    await this.member.close();
    await this.asyncCommits;
    await super.close();
  }

  // ----------------------------------------------------------- internals

  private checkUsable(): void {
    if (this.closing) throw new MqError('CLOSED', 'the consumer is closed');
  }

  private isAssigned(tp: { topic: string; partition: number }): boolean {
    return this.assignment().some((a) => a.topic === tp.topic && a.partition === tp.partition);
  }

  private requireGeneration() {
    const g = this.member.generation();
    if (!g) throw new MqError('ILLEGAL_GENERATION', `this consumer is not in a generation of group "${this.groupId}" right now (rebalancing); commit again after it rejoins`, { retriable: true });
    return g;
  }

  private maybeAutoCommit(): void {
    if (!this.group.autoCommit || this.group.delivery !== 'at-least-once' || !this.subscribed) return;
    const now = Date.now();
    if (now < this.nextAutoCommit) return;
    this.nextAutoCommit = now + this.group.autoCommitIntervalMs;
    this.asyncCommits = this.asyncCommits.then(() =>
      this.commitConsumed().catch((err) => this.logger.warn({ group: this.groupId, err }, 'auto-commit failed; the next one retries')),
    );
  }

  /** Commits the consumed offsets of the partitions this consumer owns. */
  private async commitConsumed(signal?: AbortSignal, only?: readonly TopicPartition[]): Promise<void> {
    const keys = only ? new Set(only.map(tpKey)) : null;
    const offsets = [...this.consumed.entries()]
      .filter(([k]) => !keys || keys.has(k))
      .map(([, v]) => ({ ...v, leaderEpoch: this.leaderEpochOf(v) }));
    if (offsets.length === 0) return;
    await this.coordinator.commit(offsets, this.subscribed ? this.requireGeneration() : null, signal);
  }

  /** The leader epoch this consumer last saw for a partition (from its metadata), -1 when unknown. */
  private leaderEpochOf(tp: TopicPartition): number {
    return this.cluster.cachedTopic(tp.topic)?.partitions[tp.partition]?.leaderEpoch ?? -1;
  }

  private publishRebalance(event: RebalanceMessage['event'], tps: readonly TopicPartition[]): void {
    if (!channels.rebalance.hasSubscribers) return;
    channels.rebalance.publish({
      groupId: this.groupId,
      event,
      partitions: tps.map((tp) => ({ topic: tp.topic, partition: tp.partition })),
    } satisfies RebalanceMessage);
  }

  private async onAssigned(tps: TopicPartition[]): Promise<void> {
    this.publishRebalance('assigned', tps);
    try {
      await this.startPartitions(tps);
    } catch (err) {
      // Not fetched until their committed offsets are known: poll() tries again.
      this.logger.warn({ group: this.groupId, err }, 'fetching committed offsets failed; retrying on the next poll');
      this.unstarted.push(...tps);
    }
    await this.userListener.onPartitionsAssigned?.(tps);
  }

  /** Adds partitions to the fetcher at the group's committed offsets (autoOffsetReset where there is none). */
  private async startPartitions(tps: readonly TopicPartition[]): Promise<void> {
    if (tps.length > 0) {
      // read_committed: not from an offset a still-open transaction is about to replace (KIP-447).
      const committed = await this.coordinator.committed(tps, undefined, { requireStable: this.options.isolationLevel === 'read_committed' });
      const at = new Map(committed.map((c) => [tpKey(c), c.offset]));
      const current: TopicPartitionOffset[] = this.assignment();
      const added: TopicPartitionOffset[] = tps.map((tp) => {
        const offset = at.get(tpKey(tp)) ?? -1;
        // No committed offset: autoOffsetReset decides (only then).
        return offset >= 0 ? { ...tp, offset } : { ...tp };
      });
      super.assign([...current.filter((c) => !tps.some((t) => tpKey(t) === tpKey(c))), ...added]);
      for (const a of added) if (a.offset !== undefined) this.consumed.set(tpKey(a), { topic: a.topic, partition: a.partition, offset: a.offset! });
    }
  }

  private async onRevoked(tps: TopicPartition[]): Promise<void> {
    this.publishRebalance('revoked', tps);
    // In an orderly revoke the processed offsets are committed first (at-least-once).
    if (this.group.autoCommit && this.group.delivery === 'at-least-once' && tps.length > 0) {
      if (this.closing) for (const [k, v] of this.inFlight) this.consumed.set(k, v);
      await this.asyncCommits;
      try {
        await this.commitConsumed(undefined, tps);
      } catch (err) {
        this.logger.warn({ group: this.groupId, err }, 'commit on revocation failed; the new owner may see some records again');
      }
    }
    try {
      await this.userListener.onPartitionsRevoked?.(tps);
    } finally {
      this.dropPartitions(tps);
    }
  }

  private async onLost(tps: TopicPartition[]): Promise<void> {
    this.publishRebalance('lost', tps);
    this.dropPartitions(tps);
    const l = this.userListener;
    if (l.onPartitionsLost) await l.onPartitionsLost(tps);
    else await l.onPartitionsRevoked?.(tps);
  }

  private dropPartitions(tps: readonly TopicPartition[]): void {
    const gone = new Set(tps.map(tpKey));
    this.unstarted = this.unstarted.filter((tp) => !gone.has(tpKey(tp)));
    for (const k of gone) {
      this.consumed.delete(k);
      this.inFlight.delete(k);
    }
    if (this.closing) return;
    super.assign(this.assignment().filter((a) => !gone.has(tpKey(a))));
  }
}
