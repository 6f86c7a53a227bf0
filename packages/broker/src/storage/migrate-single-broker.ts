/**
 * Opens a data directory written by the single broker of before issue 13
 * (when a single broker was a stack of its own) as a one-node cluster's:
 *
 * 1. `moveSingleBrokerLogs` (before the cluster node starts): every
 *    partition directory `<topic>-<p>/` named in `topics.json` moves to the
 *    cluster layout, `cluster-logs/<topic>-<p>.<topicId>/`
 *    (cluster/partition-dir.ts), as it is: records, indexes, producer state
 *    and leader-epoch checkpoint.
 * 2. `adoptSingleBrokerTopics` (the controller active, this broker
 *    registered, nothing served yet): a `createTopic` command per topic with
 *    the same topic id, replication factor 1 and its configs (the replica
 *    manager opens the moved logs as their leader, epoch 0);
 *    `__consumer_offsets` is one of them, so committed offsets stay. The
 *    producer ids the old broker handed out (up to `producer-id-block`) are
 *    burned through the controller's allocation so new ids come after every
 *    old one. `producer-id-block`, then `topics.json`, go last: a crash part
 *    way leaves `topics.json`, and the next start resumes (moves and
 *    creations already done are skipped).
 */
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { MqError } from '@mq/protocol/errors';
import { partitionDirName } from '../cluster/partition-dir.js';
import { CLUSTER_LOG_DIR } from '../cluster/replica-manager.js';
import { MAX_PRODUCER_ID_ALLOCATION, type MetadataCommand } from '../controller/commands.js';
import type { TopicRecord } from '../controller/types.js';
import { PRODUCER_ID_BLOCK_FILE } from '../producers/producer-ids.js';
import { readOptional } from './data-dir.js';

/** The single broker's topic list (its TopicManager's file). */
export const SINGLE_BROKER_TOPICS_FILE = 'topics.json';

export interface SingleBrokerTopic {
  name: string;
  topicId: string;
  partitions: number;
  configs: Record<string, string>;
}

export interface SingleBrokerLayout {
  topics: SingleBrokerTopic[];
  /** The first producer id the old broker had not handed out (0 when it kept no block). */
  producerIdsEnd: number;
}

async function exists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

function damaged(file: string, what: string): MqError {
  return new MqError('STORAGE_ERROR', `${file} is damaged (${what}): this data directory was written by the single broker and cannot be migrated until it is restored`);
}

/** The old layout of `dataDir`, or undefined when it has none (no `topics.json`). */
export async function readSingleBrokerLayout(dataDir: string): Promise<SingleBrokerLayout | undefined> {
  const file = path.join(dataDir, SINGLE_BROKER_TOPICS_FILE);
  const text = await readOptional(file);
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw damaged(file, (cause as Error).message);
  }
  const topicsObj = (parsed as { topics?: unknown } | null)?.topics;
  if (typeof topicsObj !== 'object' || topicsObj === null) throw damaged(file, 'no "topics" object');
  const topics: SingleBrokerTopic[] = [];
  for (const [name, raw] of Object.entries(topicsObj as Record<string, unknown>)) {
    const t = raw as { topicId?: unknown; partitions?: unknown; configs?: unknown };
    if (typeof t.topicId !== 'string' || !Array.isArray(t.partitions) || t.partitions.length < 1) throw damaged(file, `topic "${name}" needs a topicId and partitions`);
    const configs = Object.fromEntries(Object.entries((t.configs ?? {}) as Record<string, unknown>).map(([k, v]) => [k, String(v)]));
    topics.push({ name, topicId: t.topicId, partitions: t.partitions.length, configs });
  }
  const blockFile = path.join(dataDir, PRODUCER_ID_BLOCK_FILE);
  const block = (await readOptional(blockFile))?.trim();
  const producerIdsEnd = block === undefined ? 0 : Number(block);
  if (!Number.isSafeInteger(producerIdsEnd) || producerIdsEnd < 0) throw damaged(blockFile, `${JSON.stringify(block)} is not a producer id`);
  return { topics, producerIdsEnd };
}

/** Step 1: moves each partition directory to the cluster layout (one already moved is skipped). Returns how many moved. */
export async function moveSingleBrokerLogs(dataDir: string, layout: SingleBrokerLayout, logger: Logger): Promise<number> {
  let moved = 0;
  const logs = path.join(dataDir, CLUSTER_LOG_DIR);
  await mkdir(logs, { recursive: true });
  for (const t of layout.topics) {
    for (let p = 0; p < t.partitions; p++) {
      const from = path.join(dataDir, `${t.name}-${p}`);
      const to = path.join(logs, partitionDirName(t.name, p, t.topicId));
      if (await exists(to)) continue;
      if (!(await exists(from))) {
        logger.warn({ topic: t.name, partition: p, dir: from }, 'single-broker migration: partition directory missing; the partition starts empty');
        continue;
      }
      await rename(from, to);
      moved++;
    }
  }
  return moved;
}

/** What step 2 needs of the controller: submit commands, and the metadata they are applied to. */
export interface MigrationController {
  submit(command: MetadataCommand, timeoutMs?: number): Promise<unknown>;
  readonly metadata: { topic(name: string): TopicRecord | undefined };
}

/**
 * Step 2: creates the topics through the controller (with their old ids),
 * burns the old producer ids, then removes `producer-id-block` and, last,
 * `topics.json`.
 */
export async function adoptSingleBrokerTopics(dataDir: string, layout: SingleBrokerLayout, brokerId: number, controller: MigrationController, logger: Logger): Promise<void> {
  for (const t of layout.topics) {
    const existing = controller.metadata.topic(t.name);
    if (existing) {
      if (existing.topicId !== t.topicId) {
        throw new MqError('STORAGE_ERROR', `single-broker migration: topic "${t.name}" exists in the metadata with id ${existing.topicId}, not ${t.topicId} as in ${SINGLE_BROKER_TOPICS_FILE}`);
      }
      continue;
    }
    await controller.submit({ type: 'createTopic', name: t.name, topicId: t.topicId, numPartitions: t.partitions, replicationFactor: 1, configs: t.configs });
  }
  // Every id below producerIdsEnd may be in a log: allocate (and never use) up to there.
  let next = 0;
  while (next < layout.producerIdsEnd) {
    const count = Math.min(MAX_PRODUCER_ID_ALLOCATION, layout.producerIdsEnd - next);
    const block = (await controller.submit({ type: 'allocateProducerIds', brokerId, count })) as { firstProducerId: number; count: number };
    next = block.firstProducerId + block.count;
  }
  await rm(path.join(dataDir, PRODUCER_ID_BLOCK_FILE), { force: true });
  await rm(path.join(dataDir, SINGLE_BROKER_TOPICS_FILE), { force: true });
  logger.info(
    { topics: layout.topics.map((t) => t.name), producerIdsFrom: Math.max(next, layout.producerIdsEnd) },
    `migrated a single broker's data directory: ${layout.topics.length} topics are now the one-node cluster's (same topic ids, replication factor 1)`,
  );
}
