/**
 * Owns the topics and their partition logs: one log per partition under
 * `<dataDir>/<topic>-<partition>/`, topic metadata and configs persisted in
 * `<dataDir>/topics.json` (written atomically, so a crash leaves the old or
 * the new version), and a `partition.metadata` file in every partition
 * directory naming the topic id, so a directory left by a deleted topic is
 * never mistaken for a new topic's data. Admin changes run one at a time.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { MqError } from '@mq/protocol/errors';
import type { BrokerConfig } from '../config/broker-config.js';
import { isCompacted, logOptionsFor, TopicConfig, validateTopicConfigs } from '../config/topic-config.js';
import { alterTopicConfigs } from '../config/alter-topic-configs.js';
import { writeFileAtomic } from '../storage/atomic-file.js';
import { Partition } from './partition.js';
import { OfflineLog, type OpenLog } from './partition-log.js';
import { collisionKey, isInternalTopic, validateTopicName } from './topic-name.js';
import { compactPartitionLog, retainPartitionLog } from './log-cleaner.js';

export const TOPICS_FILE = 'topics.json';
const PARTITION_META_FILE = 'partition.metadata';
const DELETE_SUFFIX = '-delete';
/** Partition logs opened at once (load, create). */
const OPEN_CONCURRENCY = 8;

interface StoredPartition {
  leaderEpoch: number;
  partitionEpoch: number;
}

interface StoredTopic {
  topicId: string;
  replicationFactor: number;
  configs: Record<string, string>;
  partitions: StoredPartition[];
  createdAt: number;
}

interface StoredTopics {
  version: 1;
  topics: Record<string, StoredTopic>;
}

export interface Topic {
  readonly name: string;
  /** Written by the broker itself (e.g. __consumer_offsets). */
  readonly internal: boolean;
  readonly topicId: string;
  readonly replicationFactor: number;
  readonly config: TopicConfig;
  readonly partitions: readonly Partition[];
}

export interface CreateTopicRequest {
  name: string;
  numPartitions?: number;
  replicationFactor?: number;
  configs?: Record<string, unknown>;
}

export interface TopicChangeResult {
  name: string;
  numPartitions: number;
  replicationFactor: number;
  configs: Record<string, string>;
  warning?: string;
}

export interface TopicManagerOptions {
  dataDir: string;
  brokerId: number;
  /** Broker ids alive in the cluster (replication factor is checked against it). */
  brokerCount: number;
  config: BrokerConfig;
}

export interface TopicManagerComponents {
  openLog: OpenLog;
  logger: Logger;
  clock?: () => number;
}

class TopicState implements Topic {
  readonly internal: boolean;

  constructor(
    readonly name: string,
    readonly topicId: string,
    readonly replicationFactor: number,
    public config: TopicConfig,
    public partitions: Partition[],
    readonly createdAt: number,
  ) {
    this.internal = isInternalTopic(name);
  }
}

export class TopicManager {
  private readonly topics = new Map<string, TopicState>();
  private admin: Promise<unknown> = Promise.resolve();
  private readonly dataDir: string;
  private readonly logger: Logger;
  private readonly clock: () => number;
  private closed = false;

  constructor(
    private readonly options: TopicManagerOptions,
    private readonly components: TopicManagerComponents,
  ) {
    this.dataDir = options.dataDir;
    this.logger = components.logger;
    this.clock = components.clock ?? Date.now;
  }

  /** Opens every persisted topic's partitions and removes leftovers of deletions. */
  async load(): Promise<void> {
    await mkdir(this.dataDir, { recursive: true });
    for (const entry of await readdir(this.dataDir)) {
      if (entry.endsWith(DELETE_SUFFIX)) {
        await rm(path.join(this.dataDir, entry), { recursive: true, force: true });
        this.logger.info({ dir: entry }, 'removed the leftovers of a deleted topic');
      }
    }
    const stored = await this.readStored();
    for (const [name, t] of Object.entries(stored.topics)) {
      const config = new TopicConfig(t.configs, this.options.config);
      let partitions: Partition[] = [];
      try {
        // A partition whose log fails to open goes offline; the broker serves the rest.
        partitions = await this.openPartitions(t.partitions.length, 0, (p, out) =>
          this.openPartition(name, t.topicId, p, config, t.partitions[p]!.leaderEpoch).then(
            (x) => void out.push(x),
            (err: Error) => {
              const dir = path.join(this.dataDir, `${name}-${p}`);
              this.logger.error({ err, topic: name, partition: p, dir }, 'partition log failed to open: partition offline');
              const id = this.options.brokerId;
              out.push(new Partition(name, p, new OfflineLog(dir, err), t.partitions[p]!.leaderEpoch, id, [id]));
            },
          ),
        );
      } catch (err) {
        await Promise.allSettled(partitions.map((x) => x.close()));
        throw err;
      }
      this.topics.set(name, new TopicState(name, t.topicId, t.replicationFactor, config, partitions, t.createdAt));
    }
    this.logger.info({ topics: this.topics.size }, 'topics loaded');
  }

  get(name: string): Topic | undefined {
    return this.topics.get(name);
  }

  list(): Topic[] {
    return [...this.topics.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The topic, or UNKNOWN_TOPIC_OR_PARTITION with a hint. */
  require(name: string): Topic {
    const t = this.topics.get(name);
    if (!t) {
      validateTopicName(name);
      throw new MqError(
        'UNKNOWN_TOPIC_OR_PARTITION',
        `topic "${name}" does not exist (create it with: mq topic create ${name})`,
        { retriable: false },
      );
    }
    return t;
  }

  /** The partition, or UNKNOWN_TOPIC_OR_PARTITION. */
  partition(topic: string, index: number): Partition {
    const t = this.require(topic);
    const p = Number.isInteger(index) ? t.partitions[index] : undefined;
    if (!p) {
      throw new MqError(
        'UNKNOWN_TOPIC_OR_PARTITION',
        `topic "${topic}" has no partition ${index} (it has ${t.partitions.length})`,
        { retriable: false },
      );
    }
    return p;
  }

  /** Validates and creates a topic (or only validates it). */
  create(req: CreateTopicRequest, validateOnly = false): Promise<TopicChangeResult> {
    return this.serial(async () => {
      const name = validateTopicName(req.name);
      const cfg = this.options.config;
      const numPartitions = this.partitionCount(req.numPartitions);
      const rf = req.replicationFactor === undefined || req.replicationFactor === 0 || req.replicationFactor === -1
        ? cfg.int('default.replication.factor')
        : req.replicationFactor;
      if (!Number.isInteger(rf) || rf < 1) {
        throw new MqError('INVALID_REPLICATION_FACTOR', `replication factor ${rf} must be at least 1`);
      }
      if (rf > this.options.brokerCount) {
        throw new MqError(
          'INVALID_REPLICATION_FACTOR',
          `replication factor ${rf} is larger than the number of brokers (${this.options.brokerCount})`,
        );
      }
      const configs = validateTopicConfigs(req.configs ?? {}, cfg.int('max.frame.bytes'));
      if (this.topics.has(name)) throw new MqError('TOPIC_ALREADY_EXISTS', `topic "${name}" already exists`);
      const key = collisionKey(name);
      const clash = [...this.topics.keys()].find((n) => collisionKey(n) === key);
      if (clash) {
        throw new MqError(
          'INVALID_TOPIC',
          `topic "${name}" collides with existing topic "${clash}": '.' and '_' are the same in metric names`,
        );
      }
      const warning = /[._]/.test(name)
        ? `topic names with a period ('.') or underscore ('_') could collide in metric names; use one or the other, not both`
        : undefined;
      const result: TopicChangeResult = { name, numPartitions, replicationFactor: rf, configs, ...(warning ? { warning } : {}) };
      if (validateOnly) return result;
      this.checkOpen();

      const topicId = randomBytes(16).toString('base64url');
      const config = new TopicConfig(configs, cfg);
      const partitions: Partition[] = [];
      try {
        partitions.push(
          ...(await this.openPartitions(numPartitions, 0, (p, out) =>
            this.openPartition(name, topicId, p, config, 0).then((x) => void out.push(x)),
          )),
        );
        const state = new TopicState(name, topicId, rf, config, partitions, this.clock());
        this.topics.set(name, state);
        try {
          await this.persist();
        } catch (err) {
          this.topics.delete(name);
          throw err;
        }
      } catch (err) {
        await Promise.allSettled(partitions.map((x) => x.close()));
        await Promise.allSettled(partitions.map((x) => rm(x.log.dir, { recursive: true, force: true })));
        throw err;
      }
      this.logger.info({ topic: name, partitions: numPartitions, replicationFactor: rf, configs }, 'topic created');
      return result;
    });
  }

  /** Deletes a topic and its files. */
  delete(name: string): Promise<TopicChangeResult> {
    return this.serial(async () => {
      if (!this.options.config.bool('delete.topic.enable')) {
        throw new MqError('TOPIC_DELETION_DISABLED', 'topic deletion is disabled on this broker (delete.topic.enable=false)');
      }
      validateTopicName(name);
      const t = this.require(name) as TopicState;
      this.topics.delete(name);
      await Promise.allSettled(t.partitions.map((p) => p.close()));
      const doomed: string[] = [];
      for (const p of t.partitions) {
        const target = `${p.log.dir}.${t.topicId}${DELETE_SUFFIX}`;
        try {
          await rename(p.log.dir, target);
          doomed.push(target);
        } catch (err) {
          // An offline partition's directory may be missing.
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        }
      }
      await this.persist();
      await Promise.all(doomed.map((d) => rm(d, { recursive: true, force: true })));
      this.logger.info({ topic: name, partitions: t.partitions.length }, 'topic deleted');
      return {
        name,
        numPartitions: t.partitions.length,
        replicationFactor: t.replicationFactor,
        configs: { ...t.config.own },
      };
    });
  }

  /** Raises a topic's partition count (never lowers it). */
  createPartitions(name: string, count: number, validateOnly = false): Promise<TopicChangeResult> {
    return this.serial(async () => {
      const t = this.require(name) as TopicState;
      const current = t.partitions.length;
      if (!Number.isInteger(count) || count <= current) {
        throw new MqError(
          'INVALID_PARTITIONS',
          `topic "${name}" has ${current} partitions; the new count ${count} must be larger (partitions can only be added)`,
        );
      }
      const max = this.options.config.int('topic.max.partitions');
      if (count > max) {
        throw new MqError('INVALID_PARTITIONS', `partition count ${count} is over this broker's limit of ${max} (topic.max.partitions)`);
      }
      const warning =
        'records with a key may now map to a different partition than before (murmur2(key) % partitions changed), ' +
        'so per-key ordering across the change is not kept';
      const result: TopicChangeResult = {
        name,
        numPartitions: count,
        replicationFactor: t.replicationFactor,
        configs: { ...t.config.own },
        warning,
      };
      if (validateOnly) return result;
      this.checkOpen();
      const added: Partition[] = [];
      try {
        added.push(
          ...(await this.openPartitions(count - current, current, (p, out) =>
            this.openPartition(name, t.topicId, p, t.config, 0).then((x) => void out.push(x)),
          )),
        );
        t.partitions = [...t.partitions, ...added];
        await this.persist();
      } catch (err) {
        t.partitions = t.partitions.slice(0, current);
        await Promise.allSettled(added.map((x) => x.close()));
        throw err;
      }
      this.logger.warn({ topic: name, from: current, to: count }, `partitions added: ${warning}`);
      return result;
    });
  }

  /**
   * Sets and removes some of a topic's own configs (IncrementalAlterConfigs);
   * its open partition logs take the new options at once. Returns the
   * topic's own configs after the change.
   */
  alterConfigs(name: string, set: Readonly<Record<string, unknown>>, remove: readonly string[], validateOnly = false): Promise<Record<string, string>> {
    return this.serial(async () => {
      const t = this.require(name) as TopicState;
      const configs = alterTopicConfigs(t.config.own, set, remove, this.options.config.int('max.frame.bytes'));
      if (validateOnly) return configs;
      this.checkOpen();
      const before = t.config;
      t.config = new TopicConfig(configs, this.options.config);
      try {
        await this.persist();
      } catch (err) {
        t.config = before;
        throw err;
      }
      const options = logOptionsFor(t.config);
      for (const p of t.partitions) p.log.reconfigure(options);
      this.logger.info({ topic: name, configs }, 'topic configs altered');
      return configs;
    });
  }

  /** Applies retention to every partition; returns what was deleted. */
  async applyRetention(): Promise<{ deletedSegments: number; deletedBytes: number }> {
    let deletedSegments = 0;
    let deletedBytes = 0;
    for (const t of this.topics.values()) {
      for (const p of t.partitions) {
        if (p.isClosed) continue;
        try {
          const r = await retainPartitionLog(p.log, this.clock(), undefined);
          deletedSegments += r.deletedSegments;
          deletedBytes += r.deletedBytes;
        } catch (err) {
          this.logger.error({ err, topic: t.name, partition: p.index }, 'retention failed');
        }
      }
    }
    return { deletedSegments, deletedBytes };
  }

  /**
   * Compacts the closed segments of every compacted topic (cleanup.policy
   * compact or compact,delete) up to the high watermark: the latest record
   * of each key stays, at its offset; tombstones go after delete.retention.ms.
   * Internal topics are skipped: the group coordinator compacts its own.
   */
  async compactTopics(): Promise<{ partitions: number; removedRecords: number }> {
    let partitions = 0;
    let removedRecords = 0;
    for (const t of this.topics.values()) {
      if (this.closed) break;
      if (t.name.startsWith('__') || !isCompacted(t.config)) continue;
      for (const p of t.partitions) {
        if (p.isClosed || !p.log.compact) continue;
        try {
          const r = await compactPartitionLog(p.log, p.highWatermark, { topic: t.name, partition: p.index }, this.logger);
          partitions++;
          removedRecords += r.removedRecords;
        } catch (err) {
          this.logger.error({ err, topic: t.name, partition: p.index }, 'compaction failed; retrying on the next interval');
        }
      }
    }
    return { partitions, removedRecords };
  }

  /** Flushes and closes every log. */
  async close(): Promise<void> {
    this.closed = true;
    await this.admin.catch(() => undefined);
    const all = [...this.topics.values()].flatMap((t) => t.partitions);
    const results = await Promise.allSettled(
      all.map(async (p) => {
        if (!p.isClosed) await p.log.flush();
        await p.close();
      }),
    );
    for (const r of results) if (r.status === 'rejected') this.logger.error({ err: r.reason }, 'closing a partition log failed');
  }

  private partitionCount(requested: number | undefined): number {
    const cfg = this.options.config;
    const n = requested === undefined || requested === 0 || requested === -1 ? cfg.int('num.partitions') : requested;
    if (!Number.isInteger(n) || n < 1) throw new MqError('INVALID_PARTITIONS', `partition count ${n} must be at least 1`);
    const max = cfg.int('topic.max.partitions');
    if (n > max) throw new MqError('INVALID_PARTITIONS', `partition count ${n} is over this broker's limit of ${max} (topic.max.partitions)`);
    return n;
  }

  private checkOpen(): void {
    if (this.closed) throw new MqError('BROKER_NOT_AVAILABLE', 'the broker is shutting down');
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.admin.then(() => {
      this.checkOpen();
      return fn();
    });
    this.admin = run.catch(() => undefined);
    return run;
  }

  /**
   * Opens partitions first..first+count-1 a few at a time; returns them in
   * index order. On failure closes the ones opened and rethrows.
   */
  private async openPartitions(
    count: number,
    first: number,
    open: (index: number, out: Partition[]) => Promise<void>,
  ): Promise<Partition[]> {
    const out: Partition[] = [];
    let next = first;
    const end = first + count;
    const worker = async () => {
      while (next < end) await open(next++, out);
    };
    const results = await Promise.allSettled(Array.from({ length: Math.min(OPEN_CONCURRENCY, count) }, worker));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      await Promise.allSettled(out.map((p) => p.close()));
      throw failed.reason;
    }
    return out.sort((a, b) => a.index - b.index);
  }

  private async openPartition(
    topic: string,
    topicId: string,
    index: number,
    config: TopicConfig,
    leaderEpoch: number,
  ): Promise<Partition> {
    const dir = path.join(this.dataDir, `${topic}-${index}`);
    const metaFile = path.join(dir, PARTITION_META_FILE);
    let stored: string | undefined;
    try {
      stored = /topic_id=(\S+)/.exec(await readFile(metaFile, 'utf8'))?.[1];
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (stored !== undefined && stored !== topicId) {
      const aside = `${dir}.${stored}${DELETE_SUFFIX}`;
      this.logger.warn({ dir, found: stored, expected: topicId }, 'partition directory of another (deleted) topic moved aside');
      await rename(dir, aside);
      await rm(aside, { recursive: true, force: true });
      stored = undefined;
    }
    await mkdir(dir, { recursive: true });
    // No fsync needed: topics.json (fsynced) is the truth; a lost partition.metadata is rewritten on open.
    if (stored === undefined) await writeFile(metaFile, `version=1\ntopic_id=${topicId}\n`);
    const log = await this.components.openLog(dir, logOptionsFor(config));
    const id = this.options.brokerId;
    return new Partition(topic, index, log, leaderEpoch, id, [id]);
  }

  private async readStored(): Promise<StoredTopics> {
    const file = path.join(this.dataDir, TOPICS_FILE);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, topics: {} };
      throw err;
    }
    try {
      const parsed = JSON.parse(text) as StoredTopics;
      if (parsed.version !== 1 || typeof parsed.topics !== 'object') throw new Error('unknown layout');
      return parsed;
    } catch (cause) {
      throw new MqError('STORAGE_ERROR', `${file} is damaged: ${(cause as Error).message}`, { cause, retriable: false });
    }
  }

  private async persist(): Promise<void> {
    const out: StoredTopics = { version: 1, topics: {} };
    for (const t of this.topics.values()) {
      out.topics[t.name] = {
        topicId: t.topicId,
        replicationFactor: t.replicationFactor,
        configs: { ...t.config.own },
        partitions: t.partitions.map((p) => ({ leaderEpoch: p.leaderEpoch, partitionEpoch: 0 })),
        createdAt: t.createdAt,
      };
    }
    await writeFileAtomic(path.join(this.dataDir, TOPICS_FILE), JSON.stringify(out, null, 2) + '\n');
  }
}
