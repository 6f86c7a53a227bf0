/**
 * What one request may ask for: entries repeated in one request are answered
 * once (Metadata, DescribeConfigs, DescribeGroups, DeleteGroups, OffsetFetch,
 * ListOffsets, Fetch, OffsetForLeaderEpoch: a group named 20,000 times was
 * described 20,000 times into a 1.1 GB answer; a produce request naming a
 * partition twice is refused), and a request naming more than `request.max.entries`
 * entries (topics, partitions, groups) is refused with INVALID_REQUEST before
 * any work starts (the APIs whose work or answer grows with the entries named). Applied by the connection to every decoded frame, before
 * its handler runs.
 */
import { MqError } from '@mq/protocol/errors';
import type { mq, RequestBody } from '@mq/protocol/wire';

/** Twice the default topic.max.partitions: a client may name every partition of the largest topic. */
export const DEFAULT_REQUEST_MAX_ENTRIES = 20_000;

/**
 * Values (fields and list items) a request frame may hold per entry it may
 * name: a frame is decoded only up to request.max.entries times this, and
 * refused past it (INVALID_REQUEST, answered), since decoding costs time and
 * memory per value and a 16 MB frame of tiny list items holds millions. The
 * largest requests clients send stay far below (a fetch of 4,000 partitions:
 * about 8 values each).
 */
export const REQUEST_VALUES_PER_ENTRY = 8;

type Topics<P> = Array<{ name?: string | null; partitions?: P[] | null }>;

function unique<T>(items: T[] | null | undefined): T[] {
  return [...new Set(items ?? [])];
}

/** Entries of the same topic merged into one, keeping the first one's position. */
function mergeTopics<T extends { name?: string | null; partitions?: P[] | null }, P>(topics: T[] | null | undefined): T[] {
  const byName = new Map<string, T>();
  for (const t of topics ?? []) {
    const name = t.name ?? '';
    const seen = byName.get(name);
    if (!seen) byName.set(name, { ...t, partitions: [...(t.partitions ?? [])] });
    else for (const p of t.partitions ?? []) seen.partitions!.push(p);
  }
  return [...byName.values()];
}

function partitionCount<P>(topics: Topics<P> | null | undefined): number {
  let n = 0;
  for (const t of topics ?? []) n += Math.max(1, t.partitions?.length ?? 0);
  return n;
}

/** ListOffsets: one query per partition; the same partition asked twice differently is refused (as Kafka does). */
function dedupeListOffsets(req: mq.IListOffsetsRequest): void {
  req.topics = mergeTopics(req.topics);
  for (const t of req.topics) {
    const byPartition = new Map<number, mq.IListOffsetsPartition>();
    for (const p of t.partitions ?? []) {
      const i = p.partition ?? 0;
      const seen = byPartition.get(i);
      if (!seen) byPartition.set(i, p);
      else if ((seen.timestamp ?? 0) !== (p.timestamp ?? 0) || (seen.currentLeaderEpoch ?? 0) !== (p.currentLeaderEpoch ?? 0)) {
        throw new MqError('INVALID_REQUEST', `partition ${t.name ?? ''}-${i} is asked for twice with different queries`);
      }
    }
    t.partitions = [...byPartition.values()];
  }
}

/** Whether any topic is named twice or any topic names a partition twice (the common answer is no, found without copying). */
function repeats<P>(topics: Topics<P> | null | undefined, partitionOf: (p: P) => number): boolean {
  if (!topics || topics.length === 0) return false;
  // Every produce and fetch passes here: one topic (the common request) needs no set of names.
  const names = topics.length > 1 ? new Set<string>() : undefined;
  for (const t of topics) {
    if (names) {
      const name = t.name ?? '';
      if (names.has(name)) return true;
      names.add(name);
    }
    const parts = t.partitions ?? [];
    if (parts.length < 2) continue;
    const seen = new Set<number>();
    for (const p of parts) {
      const i = partitionOf(p);
      if (seen.has(i)) return true;
      seen.add(i);
    }
  }
  return false;
}

/**
 * Fetch and OffsetForLeaderEpoch: each partition once, as Kafka's fetch
 * session keeps one entry per partition (a Fetch naming one partition 5,000
 * times read it 5,000 times). The first entry of a partition is kept; for
 * OffsetForLeaderEpoch the same partition asked with two different epochs is
 * refused, as ListOffsets is.
 */
function dedupePartitions<T extends { name?: string | null; topicId?: string | null; partitions?: P[] | null }, P extends { partition?: number | null }>(
  topics: T[] | null | undefined,
  conflict?: (a: P, b: P) => boolean,
): T[] | null | undefined {
  const partitionOf = (p: P) => p.partition ?? 0;
  if (!repeats(topics, partitionOf)) return topics;
  // One name asked about as two incarnations (topic ids) cannot be merged into one entry.
  const ids = new Map<string, string>();
  for (const t of topics ?? []) {
    const name = t.name ?? '';
    const id = t.topicId ?? '';
    if ((ids.get(name) ?? id) !== id) throw new MqError('INVALID_REQUEST', `topic ${name} is asked for with two topic ids`);
    ids.set(name, id);
  }
  const merged = mergeTopics<T, P>(topics);
  for (const t of merged) {
    const byPartition = new Map<number, P>();
    for (const p of t.partitions ?? []) {
      const seen = byPartition.get(partitionOf(p));
      if (!seen) byPartition.set(partitionOf(p), p);
      else if (conflict?.(seen, p)) throw new MqError('INVALID_REQUEST', `partition ${t.name ?? ''}-${partitionOf(p)} is asked for twice with different queries`);
    }
    t.partitions = [...byPartition.values()];
  }
  return merged;
}

/** Produce: a partition named twice in one request is refused as a whole (which of two batches lists would be written first?). */
function refuseRepeatedProduce(req: mq.IProduceRequest): void {
  const topics = req.topics as Topics<mq.IPartitionProduceData> | null | undefined;
  if (!repeats(topics, (p) => p.partition ?? 0)) return;
  throw new MqError('INVALID_REQUEST', 'a produce request names the same partition more than once: send all of its batches in one entry');
}

/** Dedupes a request's repeated entries in place; returns how many entries it names. */
const ENTRIES: { [K in RequestBody]?: (req: NonNullable<mq.RequestFrame[K]>) => number } = {
  metadata: (r) => (r.topics = unique(r.topics)).length,
  describeConfigs: (r) => (r.topics = unique(r.topics)).length,
  describeGroups: (r) => (r.groupIds = unique(r.groupIds)).length,
  deleteGroups: (r) => (r.groupIds = unique(r.groupIds)).length,
  offsetFetch: (r) => {
    r.topics = mergeTopics(r.topics);
    for (const t of r.topics) t.partitions = unique(t.partitions);
    return partitionCount(r.topics);
  },
  listOffsets: (r) => {
    dedupeListOffsets(r);
    return partitionCount(r.topics);
  },
  // Admin requests cost a metadata commit per entry; repeats are refused per entry by their handlers: only counted.
  createTopics: (r) => r.topics?.length ?? 0,
  deleteTopics: (r) => r.topics?.length ?? 0,
  createPartitions: (r) => r.topics?.length ?? 0,
  incrementalAlterConfigs: (r) => r.resources?.length ?? 0,
  // ---- scaleout: one metadata commit for the whole request, but each partition is checked and answered
  alterPartitionReassignments: (r) => partitionCount(r.topics),
  electLeaders: (r) => partitionCount(r.topics),
  // DeleteRecords: each partition once; the same partition named with two different offsets is refused.
  deleteRecords: (r) => {
    r.topics = dedupePartitions<mq.IDeleteRecordsTopic, mq.IDeleteRecordsPartition>(r.topics, (a, b) => Number(a.offset ?? 0) !== Number(b.offset ?? 0));
    return partitionCount(r.topics);
  },
  // Produce, Fetch and OffsetForLeaderEpoch are not capped (a follower replicates every partition it shares
  // with a leader in one of them, and their answers are bounded by bytes or by the request itself), but each
  // partition is served once: counted as 0 entries.
  fetch: (r) => {
    r.topics = dedupePartitions(r.topics);
    return 0;
  },
  offsetForLeaderEpoch: (r) => {
    r.topics = dedupePartitions<mq.IOffsetForLeaderEpochTopic, mq.IOffsetForLeaderEpochPartition>(r.topics, (a, b) => (a.leaderEpoch ?? 0) !== (b.leaderEpoch ?? 0) || (a.currentLeaderEpoch ?? 0) !== (b.currentLeaderEpoch ?? 0));
    return 0;
  },
  produce: (r) => {
    refuseRepeatedProduce(r);
    return 0;
  },
  // OffsetCommit: one offset per partition (two offsets for one partition in one commit is a client bug), and capped:
  // a group-level refusal answers every partition named.
  offsetCommit: (r) => {
    const topics = r.topics as Topics<mq.IOffsetCommitPartition> | null | undefined;
    if (repeats(topics, (p) => p.partition ?? 0)) {
      throw new MqError('INVALID_REQUEST', 'an offset commit names the same partition more than once: commit one offset per partition');
    }
    return partitionCount(topics);
  },
};

/**
 * Dedupes the entries of a decoded request in place and refuses one that
 * names more than `maxEntries` (INVALID_REQUEST), before its handler runs.
 */
export function limitRequestEntries<K extends RequestBody>(body: K, request: NonNullable<mq.RequestFrame[K]>, maxEntries: number): void {
  const count = ENTRIES[body] as ((req: NonNullable<mq.RequestFrame[K]>) => number) | undefined;
  if (!count) return;
  const n = count(request);
  if (n > maxEntries) {
    throw new MqError('INVALID_REQUEST', `the ${body} request names ${n} entries; the limit is ${maxEntries} (request.max.entries): split it`);
  }
}
