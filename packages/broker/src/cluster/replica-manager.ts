/**
 * The partitions this broker hosts in a cluster: it follows the metadata log
 * and, for every partition it is a replica of, opens the log and becomes its
 * leader (a PartitionLeader from @mq/replication) or a follower (one
 * FollowerFetcher per leader broker, fetching over the inter-broker
 * connection). Role changes run one at a time, in metadata order: a leader
 * resigns (appends in flight finish in its epoch) before the log is handed
 * to a fetcher, and the reverse. A broker that has lost the active
 * controller for longer than its session resigns every leadership it holds
 * (the controller has fenced it and elected others by then).
 */
import path from 'node:path';
import type { Logger } from 'pino';

import type { Log } from '@mq/log-store';
import { MqError } from '@mq/protocol/errors';
import {
  createFollowerFetcher,
  createPartitionLeader,
  FileCheckpoint,
  ThrottleBucket,
  type AlterPartitionRequest,
  type HandleFetchComponents,
  type FetchFn,
  type HighWatermarkCheckpoint,
  type FollowerFetcher,
  type OffsetForLeaderEpochFn,
  type PartitionLeader,
  type PartitionState,
} from '@mq/replication';
import type { TimerHandle, Timers } from '@mq/protocol/components';
import type { BrokerConfig } from '../config/broker-config.js';
import { guard } from '../guard.js';
import { sameTopicConfigs } from '../config/alter-topic-configs.js';
import { logOptionsFor, TopicConfig } from '../config/topic-config.js';
import type { Controller } from '../controller/controller.js';
import type { MetadataDelta, PartitionRecord, RecoveryElection, TopicRecord } from '../controller/types.js';
import { partitionDirName } from './partition-dir.js';
import { DeletedLogs, singleBrokerMigrationPending } from './deleted-logs.js';
import type { LogOpener } from '../log-factory.js';
import type { DirFileSystem } from '../storage/dir-fs.js';
import { recoveryTruncation } from './recovery-truncation.js';

export const CLUSTER_LOG_DIR = 'cluster-logs';

export interface ReplicaManagerOptions {
  brokerId: number;
  dataDir: string;
  config: BrokerConfig;
  replicaLagTimeMaxMs: number;
  replicaFetchMaxWaitMs: number;
}

export interface ReplicaManagerComponents {
  controller: Controller;
  fetch: FetchFn;
  offsetForLeaderEpoch: OffsetForLeaderEpochFn;
  logger: Logger;
  clock: () => number;
  /** Every timer of the replica manager, its partition leaders and follower fetchers. */
  timers: Timers;
  /** Opens a replica's log (the broker's `openLog` component). */
  openLog: LogOpener;
  brokerEpoch: () => number;
  /** A replica's high-watermark checkpoint, the file `file` (default: a FileCheckpoint). */
  checkpointFor?: (file: string) => HighWatermarkCheckpoint;
  /** Directory operations for deleted replicas and the start-up sweep (default: node:fs/promises). */
  dirs?: DirFileSystem;
}

/** How often a broker checks whether it has lost the active controller for longer than its session. */
const SELF_FENCE_CHECK_MS = 200;
/** Pause before applying the metadata again after a failure. */
const RECONCILE_RETRY_MS = 200;
/** Pause before reporting log ends again after a failed report. */
const REPORT_RETRY_MS = 500;

export interface HostedPartition {
  readonly topic: string;
  readonly partition: number;
  readonly topicId: string;
  readonly log: Log;
  /** Replaced when the topic's configs change (IncrementalAlterConfigs). */
  config: TopicConfig;
  role: 'leader' | 'follower' | 'none';
  leader: PartitionLeader | undefined;
  followingFrom: number;
  leaderEpoch: number;
  partitionEpoch: number;
  readonly checkpoint: HighWatermarkCheckpoint;
  /**
   * The replica's last known high watermark in this run, whatever its role (Kafka's `log.highWatermark`, kept on the
   * log, not the role): the HW of its last leader or follower role, taken when that role stops, and where the next
   * role starts (at the larger of it and the checkpoint, within the log). 0 until a role has stopped; a restart
   * starts from the checkpoint.
   */
  highWatermark: number;
}

/** A change of this broker's leadership of one partition (see {@link ReplicaManager.onLeadershipChange}). */
export interface LeadershipChange {
  topic: string;
  partition: number;
  /** true: this broker now leads the partition (its PartitionLeader is in place); false: it is about to stop leading it. */
  leader: boolean;
  leaderEpoch: number;
}

export type LeadershipListener = (change: LeadershipChange) => void;

function key(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

export class ReplicaManager {
  private readonly hosted = new Map<string, HostedPartition>();
  /**
   * Replicas whose log failed to open (damaged files, permissions): offline
   * on this broker until it restarts, answered with STORAGE_ERROR, while
   * every other partition is served.
   */
  private readonly offline = new Map<string, { topicId: string; dir: string; error: MqError }>();
  /** Logs of deleted topic incarnations go through here (moved aside at once, removed in the background). */
  private readonly deletedLogs: DeletedLogs;
  /** cluster-logs/ has been swept for incarnations deleted while this broker was down (once per run). */
  private swept = false;
  private readonly fetchers = new Map<number, FollowerFetcher>();
  private running: Promise<void> | undefined;
  private again = false;
  private closed = false;
  private selfFenced = false;
  /** Nothing is led or followed until the metadata has caught up once (a restart replays old leaderships first). */
  private started = false;
  /** A reportLogEnds command is in flight. */
  private reporting = false;
  private readonly logDir: string;
  private readonly logger: Logger;
  private readonly unsubscribe: () => void;
  private fenceTimer: TimerHandle | undefined;
  private readonly leadershipListeners = new Set<LeadershipListener>();

  constructor(
    private readonly options: ReplicaManagerOptions,
    private readonly c: ReplicaManagerComponents,
  ) {
    this.logDir = path.join(options.dataDir, CLUSTER_LOG_DIR);
    this.logger = c.logger.child({ component: 'replicas' });
    this.deletedLogs = new DeletedLogs(this.logDir, this.logger, c.dirs);
    this.unsubscribe = c.controller.metadata.onChange(
      guard(this.logger, 'applying a metadata change to the replicas', (delta: MetadataDelta) => {
        for (const u of delta.uncleanElections) {
          this.logger.error(u, `UNCLEAN LEADER ELECTION: ${u.topic}-${u.partition} is now led by broker ${u.leader}, which was not in the ISR; acknowledged records may be lost`);
        }
        for (const r of delta.recoveryElections ?? []) this.logRecoveryElection(r);
        this.schedule();
      }),
    );
    this.armSelfFenceCheck();
  }

  private armSelfFenceCheck(): void {
    this.fenceTimer = this.c.timers.setTimeout(
      guard(this.logger, 'self-fence check', () => {
        if (this.closed) return;
        try {
          this.checkSelfFence();
        } finally {
          this.armSelfFenceCheck();
        }
      }),
      SELF_FENCE_CHECK_MS,
    );
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.c.timers.setTimeout(resolve, ms));
  }

  /**
   * True while this broker has known no active controller for longer than
   * its session: it leads nothing then (the controller has fenced it), and
   * its metadata may be stale.
   */
  get cutOff(): boolean {
    return this.selfFenced;
  }

  /** What this broker sends, as a leader, to replicas a reassignment is adding (the leader's side of the replication throttle). */
  private leaderBucket: ThrottleBucket | undefined;
  private leaderThrottleView: NonNullable<HandleFetchComponents['leaderThrottle']> | undefined;

  /**
   * The leader's side of the replication throttle at the metadata's rate
   * (the same bytes/s per broker as the followers' side, as Kafka's
   * reassignment tool sets both): a follower's fetch of a partition it is
   * being added to is throttled. Undefined while there is no throttle.
   */
  leaderThrottle(): HandleFetchComponents['leaderThrottle'] {
    const rate = this.c.controller.metadata.replicationThrottle;
    if (rate <= 0 && !this.leaderBucket) return undefined;
    if (!this.leaderBucket) {
      const md = this.c.controller.metadata;
      this.leaderBucket = new ThrottleBucket(this.c.clock);
      this.leaderThrottleView = { bucket: this.leaderBucket, throttled: (topic, partition, replicaId) => md.topic(topic)?.partitions[partition]?.adding?.includes(replicaId) ?? false };
    }
    this.leaderBucket.setRate(rate);
    return this.leaderThrottleView;
  }

  /** The local partition leader, if this broker leads it. */
  leaderOf(topic: string, partition: number): PartitionLeader | undefined {
    const h = this.hosted.get(key(topic, partition));
    return h?.role === 'leader' ? h.leader : undefined;
  }

  /**
   * Calls `fn` (synchronously, in metadata order) when this broker becomes
   * the leader of a partition (after its PartitionLeader is in place, so
   * leaderOf answers) and just before it stops leading one (before the
   * leader resigns, so appends still in flight finish or fail after the
   * listener has run). A new leader epoch on the same broker is a stop and
   * a start. Returns the unsubscribe function.
   */
  onLeadershipChange(fn: LeadershipListener): () => void {
    this.leadershipListeners.add(fn);
    return () => this.leadershipListeners.delete(fn);
  }

  private emitLeadership(change: LeadershipChange): void {
    for (const fn of [...this.leadershipListeners]) {
      try {
        fn(change);
      } catch (err) {
        this.logger.error({ err, topic: change.topic, partition: change.partition }, 'a leadership listener failed');
      }
    }
  }

  /**
   * This replica's high watermark: the leader's own, or what a follower has learned from its
   * leader (never above the leader's); undefined while the partition has no role here.
   */
  highWatermarkOf(topic: string, partition: number): number | undefined {
    const h = this.hosted.get(key(topic, partition));
    if (h?.role === 'leader') return h.leader?.highWatermark;
    if (h?.role === 'follower') return this.fetchers.get(h.followingFrom)?.status(topic, partition)?.highWatermark;
    return undefined;
  }

  /** STORAGE_ERROR when this broker's replica of the partition is offline (its log failed to open), else undefined. */
  offlineError(topic: string, partition: number): MqError | undefined {
    return this.offline.get(key(topic, partition))?.error;
  }

  hostedPartition(topic: string, partition: number): HostedPartition | undefined {
    return this.hosted.get(key(topic, partition));
  }

  hosts(topic: string, partition: number): boolean {
    return this.hosted.has(key(topic, partition));
  }

  /** Resolves once the partitions match the metadata applied so far. */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Starts acting on the metadata; call once it has caught up with the controller. */
  start(): void {
    this.started = true;
    this.schedule();
  }

  schedule(): void {
    if (this.closed || !this.started) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.reconcile();
        } catch (err) {
          this.logger.error({ err }, 'applying partition metadata failed; retrying');
          await this.sleep(RECONCILE_RETRY_MS);
          this.again = !this.closed;
        }
      } while (this.again && !this.closed);
      this.running = undefined;
    })();
  }

  /** Unclean recovery elected a leader: loud when it was chosen without hearing from every candidate. */
  private logRecoveryElection(r: RecoveryElection): void {
    const fields = { topic: r.topic, partition: r.partition, leader: r.leader, leaderEpoch: r.leaderEpoch, lastEpoch: r.lastEpoch, endOffset: r.endOffset, reports: r.reports, missing: r.missing };
    if (r.missing.length > 0) {
      this.logger.error(
        fields,
        `UNCLEAN RECOVERY: ${r.topic}-${r.partition} is now led by broker ${r.leader} (log end ${r.endOffset}, epoch ${r.lastEpoch}), elected without the log of broker(s) ${r.missing.join(', ')} (not heard from, or still fenced when the wait ran out); records only they held are lost if they come back`,
      );
    } else {
      this.logger.warn(fields, `unclean recovery: ${r.topic}-${r.partition} is now led by broker ${r.leader}, the longest log of its candidates (log end ${r.endOffset}, epoch ${r.lastEpoch})`);
    }
  }

  /**
   * Before following a leader elected by unclean recovery: a replica here
   * that holds records from before the recovery epoch the new leader lacks
   * (possible only when the controller elected without this replica's log)
   * says what it is about to truncate, since that may be acknowledged data.
   * Nothing is said when it holds nothing more (records fetched from the new
   * leader since its election are its own). The follower then truncates by
   * leader epoch as usual, and logs the truncation it does.
   */
  private logRecoveryTruncation(h: HostedPartition, rec: PartitionRecord): void {
    const r = rec.recovery;
    if (!r || r.leaderEpoch !== rec.leaderEpoch) return;
    const cut = recoveryTruncation(h.log.leaderEpochs.entries, h.log.logEndOffset, r);
    if (!cut) return;
    const count = cut.to - cut.from;
    this.logger.error(
      { topic: h.topic, partition: h.partition, leader: rec.leader, leaderEpoch: rec.leaderEpoch, from: cut.from, to: cut.to, count, myLastEpoch: cut.lastEpoch, leaderLastEpoch: r.lastEpoch },
      `UNCLEAN RECOVERY TRUNCATION: this replica of ${h.topic}-${h.partition} holds ${count} records leader ${rec.leader} lacks (it was elected without this replica's log): offsets [${cut.from}, ${cut.to}) are truncated to follow it`,
    );
  }

  /**
   * Unclean recovery: for every hosted partition with no leader of which
   * this broker is a candidate and has not reported from this run, tells
   * the controller its log end (last leader epoch, end offset). One report
   * in flight at a time; the metadata it changes schedules the next round.
   */
  private reportLogEnds(): void {
    const brokerEpoch = this.c.brokerEpoch();
    if (this.reporting || this.closed || brokerEpoch < 0) return;
    const me = this.options.brokerId;
    const partitions: { topic: string; topicId: string; partition: number; lastEpoch: number; endOffset: number }[] = [];
    for (const h of this.hosted.values()) {
      const rec = this.c.controller.metadata.topic(h.topic)?.partitions[h.partition];
      if (!rec || rec.leader >= 0) continue;
      const candidate = rec.isr.includes(me) || (rec.elr ?? []).includes(me) || (rec.leftIsr ?? []).includes(me);
      if (!candidate || (rec.logEnds ?? []).some((e) => e.broker === me && e.brokerEpoch === brokerEpoch)) continue;
      partitions.push({ topic: h.topic, topicId: h.topicId, partition: h.partition, lastEpoch: h.log.leaderEpochs.entries.at(-1)?.epoch ?? -1, endOffset: h.log.logEndOffset });
    }
    if (partitions.length === 0) return;
    this.reporting = true;
    void this.c.controller
      .submit({ type: 'reportLogEnds', brokerId: me, brokerEpoch, partitions }, this.c.controller.options.sessionTimeoutMs)
      .then(
        () => {
          this.logger.info({ partitions }, 'reported log ends of leaderless partitions for unclean recovery');
          this.reporting = false;
          this.schedule();
        },
        (err: unknown) => {
          this.logger.warn({ err: (err as Error).message }, 'reporting log ends for unclean recovery failed; retrying');
          this.c.timers.setTimeout(
            guard(this.logger, 'retrying the log-end report', () => {
              this.reporting = false;
              this.schedule();
            }),
            REPORT_RETRY_MS,
          );
        },
      );
  }

  private checkSelfFence(): void {
    const leaderless = this.c.controller.leaderlessMs;
    const fenced = leaderless > this.c.controller.options.sessionTimeoutMs;
    if (fenced !== this.selfFenced) {
      this.selfFenced = fenced;
      if (fenced) this.logger.warn({ leaderlessMs: leaderless }, 'no active controller for longer than the broker session: resigning all partition leaderships');
      else this.logger.info('the active controller is reachable again');
      this.schedule();
    }
  }

  private async reconcile(): Promise<void> {
    const me = this.options.brokerId;
    const md = this.c.controller.metadata;
    const wanted = new Set<string>();
    for (const t of md.topics()) {
      for (let p = 0; p < t.partitions.length; p++) {
        const rec = t.partitions[p]!;
        if (!rec.replicas.includes(me)) continue;
        wanted.add(key(t.name, p));
        let h = this.hosted.get(key(t.name, p));
        if (h && h.topicId !== t.topicId) {
          await this.drop(h, true);
          h = undefined;
        }
        if (this.closed) return;
        if (!h) {
          const k = key(t.name, p);
          const down = this.offline.get(k);
          if (down?.topicId === t.topicId) continue;
          if (down) await this.forgetOffline(k, down);
          try {
            h = await this.open(t, p);
          } catch (err) {
            this.markOffline(t, p, err);
            continue;
          }
        }
        if (!sameTopicConfigs(h.config.own, t.configs)) await this.reconfigure(h, t);
        await this.apply(h, t, rec);
      }
    }
    // A replica no longer wanted here goes with its files: its topic was deleted, or (scaleout) a reassignment
    // moved the partition off this broker (the metadata only moves forward: a later move back fetches afresh).
    for (const [k, h] of [...this.hosted]) {
      if (!wanted.has(k)) {
        const current = md.topic(h.topic);
        const reassigned = current?.topicId === h.topicId;
        if (reassigned) this.logger.info({ topic: h.topic, partition: h.partition }, 'partition reassigned off this broker: its replica is removed');
        await this.drop(h, true);
      }
    }
    for (const [k, down] of [...this.offline]) if (!wanted.has(k)) await this.forgetOffline(k, down);
    // Incarnations deleted while this broker was down (or while it was removing them) are in no metadata it
    // applies: their logs go once this run's registration is applied here. Not before: a restarted voter may
    // apply an older view first, and the registration was committed after every topic a previous run had seen.
    // Nor while a single broker's data directory is being migrated: its moved logs are created in the metadata
    // only after this run registers (storage/migrate-single-broker.ts); the next run sweeps.
    if (!this.swept && this.c.brokerEpoch() >= 0 && md.broker(me)?.brokerEpoch === this.c.brokerEpoch()) {
      this.swept = true;
      // Never a log this broker still has open: a hosted replica of a deleted incarnation is removed by its own
      // drop (closed first); sweeping it meanwhile left its .hw checkpoint written again after the removal.
      const live = new Set(md.topics().map((t) => t.topicId));
      for (const h of this.hosted.values()) live.add(h.topicId);
      // ---- scaleout: also replicas of live topics this broker no longer holds (moved away while it was down).
      const kept = (topicId: string, partition: number) => {
        for (const h of this.hosted.values()) if (h.topicId === topicId && h.partition === partition) return true;
        const t = md.topics().find((x) => x.topicId === topicId);
        return !t || (t.partitions[partition]?.replicas.includes(me) ?? false);
      };
      if (!(await singleBrokerMigrationPending(this.options.dataDir, this.c.dirs))) await this.deletedLogs.sweep(live, kept);
    }
    this.reportLogEnds();
  }

  /** An offline replica no longer wanted here; its log is removed when its incarnation is deleted. */
  private async forgetOffline(k: string, down: { topicId: string; dir: string }): Promise<void> {
    this.offline.delete(k);
    if (this.c.controller.metadata.topics().some((t) => t.topicId === down.topicId)) return;
    await this.deletedLogs.remove(down.dir);
    this.logger.info({ dir: down.dir, topicId: down.topicId }, 'offline replica of a deleted topic removed from this broker');
  }

  private markOffline(t: TopicRecord, partition: number, err: unknown): void {
    const dir = this.replicaDir(t, partition);
    const error = new MqError('STORAGE_ERROR', `the replica of ${t.name}-${partition} on broker ${this.options.brokerId} is offline: its log ${dir} failed to open (${(err as Error).message}); fix it and restart the broker`, {
      cause: err,
      retriable: false,
    });
    this.offline.set(key(t.name, partition), { topicId: t.topicId, dir, error });
    this.logger.error({ err, topic: t.name, partition, dir }, 'replica log failed to open: partition offline on this broker');
  }

  private replicaDir(t: TopicRecord, partition: number): string {
    return path.join(this.logDir, partitionDirName(t.name, partition, t.topicId));
  }

  private async open(t: TopicRecord, partition: number): Promise<HostedPartition> {
    const config = new TopicConfig(t.configs, this.options.config);
    const dir = this.replicaDir(t, partition);
    const log = await this.c.openLog(dir, logOptionsFor(config));
    const h: HostedPartition = {
      topic: t.name,
      partition,
      topicId: t.topicId,
      log,
      config,
      role: 'none',
      leader: undefined,
      followingFrom: -1,
      leaderEpoch: -1,
      partitionEpoch: -1,
      highWatermark: 0,
      checkpoint: this.c.checkpointFor ? this.c.checkpointFor(`${dir}.hw`) : new FileCheckpoint(`${dir}.hw`),
    };
    this.hosted.set(key(t.name, partition), h);
    return h;
  }

  private async apply(h: HostedPartition, t: TopicRecord, rec: PartitionRecord): Promise<void> {
    const me = this.options.brokerId;
    // A leadership granted to this broker's previous run (before this run's registration is applied) is
    // not this run's: its log may have lost a tail since, and followers would truncate to it.
    const registered = this.c.controller.metadata.broker(me)?.brokerEpoch === this.c.brokerEpoch();
    const target = this.selfFenced || (rec.leader === me && !registered) ? -1 : rec.leader;
    if (target === me) {
      if (h.role === 'leader' && h.leader && !h.leader.closed && h.leaderEpoch === rec.leaderEpoch) {
        if (h.partitionEpoch !== rec.partitionEpoch) {
          h.partitionEpoch = rec.partitionEpoch;
          await h.leader.applyPartitionState(stateOf(rec));
        }
        return;
      }
      await this.stopRole(h);
      const minIsr = Math.min(h.config.minInsyncReplicas, rec.replicas.length);
      h.leader = await createPartitionLeader(
        {
          topic: t.name,
          topicId: h.topicId,
          partition: h.partition,
          brokerId: me,
          leaderEpoch: rec.leaderEpoch,
          partitionEpoch: rec.partitionEpoch,
          replicas: rec.replicas,
          isr: rec.isr,
          minInsyncReplicas: minIsr,
          replicaLagTimeMaxMs: this.options.replicaLagTimeMaxMs,
        },
        {
          log: h.log,
          clock: this.c.clock,
          timers: this.c.timers,
          checkpoint: h.checkpoint,
          alterPartition: (req) => this.alterPartition(req),
          logger: this.logger,
        },
        h.highWatermark,
      );
      h.role = 'leader';
      h.leaderEpoch = rec.leaderEpoch;
      h.partitionEpoch = rec.partitionEpoch;
      this.logger.info({ topic: t.name, partition: h.partition, leaderEpoch: rec.leaderEpoch, isr: rec.isr, logEndOffset: h.log.logEndOffset }, 'leading partition');
      this.emitLeadership({ topic: t.name, partition: h.partition, leader: true, leaderEpoch: rec.leaderEpoch });
      return;
    }
    if (target >= 0) {
      // ---- scaleout: a replica a reassignment is adding fetches within the replication throttle.
      const throttled = (rec.adding ?? []).includes(me);
      if (h.role === 'follower' && h.followingFrom === target) {
        this.fetcher(target).setThrottled(t.name, h.partition, throttled);
        if (h.leaderEpoch !== rec.leaderEpoch) {
          h.leaderEpoch = rec.leaderEpoch;
          this.fetcher(target).updateLeaderEpoch(t.name, h.partition, rec.leaderEpoch);
        }
        h.partitionEpoch = rec.partitionEpoch;
        return;
      }
      await this.stopRole(h);
      this.logRecoveryTruncation(h, rec);
      await this.fetcher(target).addPartition({ topic: t.name, topicId: h.topicId, partition: h.partition, log: h.log, leaderEpoch: rec.leaderEpoch, checkpoint: h.checkpoint, highWatermark: h.highWatermark, throttled });
      h.role = 'follower';
      h.followingFrom = target;
      h.leaderEpoch = rec.leaderEpoch;
      h.partitionEpoch = rec.partitionEpoch;
      return;
    }
    await this.stopRole(h);
    h.leaderEpoch = rec.leaderEpoch;
    h.partitionEpoch = rec.partitionEpoch;
  }

  private async alterPartition(req: AlterPartitionRequest): Promise<PartitionState> {
    const v = (await this.c.controller.submit(
      {
        type: 'alterPartition',
        topic: req.topic,
        ...(req.topicId ? { topicId: req.topicId } : {}),
        partition: req.partition,
        leaderId: req.leaderId,
        leaderEpoch: req.leaderEpoch,
        partitionEpoch: req.partitionEpoch,
        isr: [...req.isr],
      },
      this.c.controller.options.sessionTimeoutMs,
    )) as PartitionState;
    this.logger.info({ topic: req.topic, partition: req.partition, isr: v.isr, partitionEpoch: v.partitionEpoch }, 'ISR changed');
    return v;
  }

  private fetcher(leaderId: number): FollowerFetcher {
    let f = this.fetchers.get(leaderId);
    if (!f || f.closed) {
      f = createFollowerFetcher(
        { brokerId: this.options.brokerId, brokerEpoch: this.c.brokerEpoch(), leaderId, maxWaitMs: this.options.replicaFetchMaxWaitMs },
        {
          fetch: this.c.fetch,
          offsetForLeaderEpoch: this.c.offsetForLeaderEpoch,
          clock: this.c.clock,
          timers: this.c.timers,
          logger: this.logger,
          onPartitionError: (topic, partition, error) => {
            this.logger.warn({ topic, partition, leaderId, code: error.code, err: error.message }, 'follower partition stopped until the metadata catches up');
          },
        },
      );
      this.fetchers.set(leaderId, f);
    }
    f.setThrottle(this.c.controller.metadata.replicationThrottle);
    return f;
  }

  /** The topic's configs changed: the log takes its new options now; a leader leads again in the same epoch when min.insync.replicas changed. */
  private async reconfigure(h: HostedPartition, t: TopicRecord): Promise<void> {
    const config = new TopicConfig(t.configs, this.options.config);
    try {
      h.log.reconfigure(logOptionsFor(config));
    } catch (err) {
      this.logger.error({ err, topic: h.topic, partition: h.partition }, 'new topic configs not applied to the partition log');
    }
    const minIsrChanged = config.minInsyncReplicas !== h.config.minInsyncReplicas;
    h.config = config;
    if (minIsrChanged && h.role === 'leader') await this.stopRole(h);
    this.logger.info({ topic: h.topic, partition: h.partition, configs: t.configs }, 'topic configs applied');
  }

  /** Stops the partition's role here; its HW (checkpointed by the role) stays on `h` for the next role. */
  private async stopRole(h: HostedPartition): Promise<void> {
    if (h.role === 'leader' && h.leader) {
      this.emitLeadership({ topic: h.topic, partition: h.partition, leader: false, leaderEpoch: h.leaderEpoch });
      await h.leader.resign();
      h.highWatermark = h.leader.highWatermark;
      h.leader = undefined;
    } else if (h.role === 'follower') {
      const f = this.fetchers.get(h.followingFrom);
      if (f) {
        const stopped = await f.removePartition(h.topic, h.partition);
        if (stopped) h.highWatermark = stopped.highWatermark;
        if (f.partitionCount === 0) {
          this.fetchers.delete(h.followingFrom);
          await f.close();
        }
      }
      h.followingFrom = -1;
    }
    h.role = 'none';
  }

  private async drop(h: HostedPartition, deleteFiles: boolean): Promise<void> {
    await this.stopRole(h);
    this.hosted.delete(key(h.topic, h.partition));
    await h.log.close();
    if (deleteFiles) {
      await this.deletedLogs.remove(h.log.dir);
      this.logger.info({ topic: h.topic, partition: h.partition, topicId: h.topicId }, 'partition removed from this broker');
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe();
    if (this.fenceTimer !== undefined) this.c.timers.clearTimeout(this.fenceTimer);
    await this.settled().catch(() => undefined);
    for (const h of this.hosted.values()) {
      if (h.role === 'leader' && h.leader) {
        this.emitLeadership({ topic: h.topic, partition: h.partition, leader: false, leaderEpoch: h.leaderEpoch });
        await h.leader.close().catch(() => undefined);
      }
    }
    this.leadershipListeners.clear();
    await Promise.allSettled([...this.fetchers.values()].map((f) => f.close()));
    this.fetchers.clear();
    for (const h of this.hosted.values()) {
      await h.log.flush().catch(() => undefined);
      await h.log.close().catch((err: unknown) => this.logger.error({ err }, 'closing a partition log failed'));
    }
    this.hosted.clear();
    await this.deletedLogs.drain();
  }

  /** Every hosted partition (for status and describe). */
  /** The directory the partition logs live in (one per broker). */
  get logDirectory(): string {
    return this.logDir;
  }

  list(): HostedPartition[] {
    return [...this.hosted.values()];
  }
}

function stateOf(rec: PartitionRecord): PartitionState {
  return { leaderEpoch: rec.leaderEpoch, partitionEpoch: rec.partitionEpoch, isr: [...rec.isr], replicas: [...rec.replicas] };
}

