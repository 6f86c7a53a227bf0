/**
 * Compaction and retention of the partitions a broker hosts in a cluster.
 * As in Kafka, every replica (leader and followers alike) cleans its own log
 * independently, with the same code path as the single broker
 * (topics/log-cleaner.ts), bounded by the replica's own high watermark:
 *
 * - cleanup.policy containing `compact` (user topics and `__consumer_offsets`):
 *   closed segments below min(HW, active segment) are compacted, and only
 *   records below the HW decide which older records go. Records above the HW
 *   may still be truncated by a leader change (OffsetForLeaderEpoch), so they
 *   must not remove a committed value. A follower's HW is what its leader
 *   told it, never above the leader's: a follower never compacts what the
 *   leader has not committed.
 * - cleanup.policy containing `delete`: time and size retention delete whole
 *   segments ending at or below the HW and advance the log start offset. The
 *   leader's new log start reaches followers in its fetch responses (they
 *   follow it once it is below their HW), and a follower whose fetch offset
 *   is below it restarts there; consumers reading the leader see the new
 *   `low` at once.
 *
 * A partition with no role yet (metadata catching up) or whose log is being
 * closed is skipped until the next round. The log serialises compaction
 * against truncation itself (a truncation voids a compaction in progress).
 */
import type { Logger } from 'pino';
import { isMqError } from '@mq/protocol/errors';
import type { BrokerConfig } from '../config/broker-config.js';
import { guard } from '../guard.js';
import { isCompacted } from '../config/topic-config.js';
import { compactPartitionLog, retainPartitionLog, type CleanableLog } from '../topics/log-cleaner.js';
import type { ReplicaManager } from './replica-manager.js';

export interface ClusterCleanerOptions {
  /** How often compacted partitions are cleaned (log.cleaner.interval.ms). */
  cleanerIntervalMs: number;
  /** How often retention runs (log.retention.check.interval.ms). */
  retentionCheckIntervalMs: number;
}

export function parseClusterCleanerOptions(config: BrokerConfig): ClusterCleanerOptions {
  const o = { cleanerIntervalMs: config.int('log.cleaner.interval.ms'), retentionCheckIntervalMs: config.int('log.retention.check.interval.ms') };
  for (const [k, v] of Object.entries(o)) {
    if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`${k} must be a positive integer, got ${v}`);
  }
  return { ...o };
}

/** One hosted replica as the cleaner sees it. */
export interface CleanerReplica {
  readonly topic: string;
  readonly partition: number;
  readonly log: CleanableLog;
  /** cleanup.policy contains compact. */
  readonly compacted: boolean;
  /** This replica's high watermark (leader's own; a follower's as learned from its leader); undefined without a role. */
  highWatermark(): number | undefined;
}

export interface ClusterCleanerComponents {
  replicas: () => CleanerReplica[];
  clock: () => number;
  logger: Logger;
  timers?: { setInterval(fn: () => void, ms: number): unknown; clearInterval(handle: unknown): void };
}

export interface CleanerRound {
  partitions: number;
  removedRecords: number;
  deletedSegments: number;
}

const systemTimers = {
  setInterval: (fn: () => void, ms: number): unknown => {
    const t = setInterval(fn, ms);
    t.unref();
    return t;
  },
  clearInterval: (h: unknown) => clearInterval(h as NodeJS.Timeout),
};

export class ClusterCleaner {
  private readonly logger: Logger;
  private readonly timers: NonNullable<ClusterCleanerComponents['timers']>;
  private handles: unknown[] = [];
  private compacting: Promise<CleanerRound> | undefined;
  private retaining: Promise<CleanerRound> | undefined;
  private stopped = false;

  constructor(
    private readonly options: ClusterCleanerOptions,
    private readonly c: ClusterCleanerComponents,
  ) {
    this.logger = c.logger.child({ component: 'cluster-cleaner' });
    this.timers = c.timers ?? systemTimers;
  }

  start(): void {
    this.handles.push(
      this.timers.setInterval(guard(this.logger, 'cluster compaction round', () => this.compactOnce()), this.options.cleanerIntervalMs),
      this.timers.setInterval(guard(this.logger, 'cluster retention round', () => this.retainOnce()), this.options.retentionCheckIntervalMs),
    );
  }

  /** Stops the timers and waits for a round in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const h of this.handles) this.timers.clearInterval(h);
    this.handles = [];
    await Promise.allSettled([this.compacting, this.retaining]);
  }

  /** One compaction round over every hosted compacted partition (a round already running is joined, not repeated). */
  compactOnce(): Promise<CleanerRound> {
    return (this.compacting ??= this.round('compaction', async (r, hw, round) => {
      if (!r.compacted) return;
      const x = await compactPartitionLog(r.log, hw, { topic: r.topic, partition: r.partition }, this.logger);
      round.partitions++;
      round.removedRecords += x.removedRecords;
    }).finally(() => (this.compacting = undefined)));
  }

  /** One retention round over every hosted partition. */
  retainOnce(): Promise<CleanerRound> {
    return (this.retaining ??= this.round('retention', async (r, hw, round) => {
      const x = await retainPartitionLog(r.log, this.c.clock(), hw);
      round.partitions++;
      round.deletedSegments += x.deletedSegments;
      if (x.deletedSegments > 0) this.logger.info({ topic: r.topic, partition: r.partition, upToOffset: hw, ...x }, 'retention deleted old segments');
    }).finally(() => (this.retaining = undefined)));
  }

  private async round(what: string, each: (r: CleanerReplica, hw: number, round: CleanerRound) => Promise<void>): Promise<CleanerRound> {
    const round: CleanerRound = { partitions: 0, removedRecords: 0, deletedSegments: 0 };
    for (const r of this.c.replicas()) {
      if (this.stopped) break;
      const hw = r.highWatermark();
      if (hw === undefined || hw < 0) continue;
      try {
        await each(r, hw, round);
      } catch (err) {
        // A log closed under us (partition removed from this broker, broker closing) is not a failure.
        if (isMqError(err, 'LOG_CLOSED')) continue;
        this.logger.error({ err, topic: r.topic, partition: r.partition }, `${what} failed; retrying on the next interval`);
      }
    }
    return round;
  }
}

/** The cleaner of a broker's hosted cluster partitions, started. */
export function startClusterCleaner(replicas: ReplicaManager, config: BrokerConfig, logger: Logger, clock: () => number = Date.now): ClusterCleaner {
  const cleaner = new ClusterCleaner(parseClusterCleanerOptions(config), {
    replicas: () =>
      replicas.list().map((h) => ({
        topic: h.topic,
        partition: h.partition,
        log: h.log,
        compacted: isCompacted(h.config),
        // The high watermark of this very replica: none once the partition is another incarnation's (deleted and created again).
        highWatermark: () => (replicas.hostedPartition(h.topic, h.partition) === h ? replicas.highWatermarkOf(h.topic, h.partition) : undefined),
      })),
    clock,
    logger,
  });
  cleaner.start();
  return cleaner;
}
