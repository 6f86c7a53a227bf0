/**
 * The on-disk name of a partition replica's log directory in a cluster:
 * `<topic>-<partition>.<topicId>` under cluster-logs/, derived only from
 * values that pass the topic-name rule and the topic-id rule (never a raw
 * string from a request), and short enough for any file system: a name
 * whose directory (plus the `.hw` checkpoint beside it) would pass 255
 * bytes keeps a prefix of the topic name. The topic id keeps every
 * directory unique, so a shortened name can never be another topic's.
 */
import { MqError } from '@mq/protocol/errors';
import { TOPIC_ID_PATTERN } from '../controller/commands.js';
import { validateTopicName } from '@mq/protocol/topic-name';

/** The longest file name (one path component) common file systems take, in bytes. */
export const MAX_FILE_NAME_BYTES = 255;
/** Files kept beside a partition directory, named `<dir><suffix>`. */
export const SIBLING_SUFFIXES = ['.hw'] as const;

export function partitionDirName(topic: string, partition: number, topicId: string): string {
  validateTopicName(topic);
  if (!Number.isSafeInteger(partition) || partition < 0) throw new MqError('INVALID_REQUEST', `partition ${partition} is not a partition index`);
  if (!TOPIC_ID_PATTERN.test(topicId)) throw new MqError('INVALID_REQUEST', `topic id ${JSON.stringify(topicId.slice(0, 40))} is not a topic id`);
  const tail = `-${partition}.${topicId}`;
  const room = MAX_FILE_NAME_BYTES - Math.max(...SIBLING_SUFFIXES.map((s) => s.length)) - tail.length;
  // Topic names are ASCII (the name rule), so characters are bytes.
  return `${topic.length > room ? topic.slice(0, room) : topic}${tail}`;
}

/** What a name in cluster-logs/ says about the replica it belongs to (a partition directory, or a file beside one). */
export interface PartitionDirEntry {
  /** The partition directory's name (the entry's own, or the one a sibling file such as `.hw` belongs to). */
  dir: string;
  /** The topic name, or its prefix when partitionDirName shortened it. */
  topic: string;
  partition: number;
  topicId: string;
}

const DIR_NAME = /^(.+)-(\d+)\.([A-Za-z0-9_-]{1,32})$/;

/** The inverse of partitionDirName for an entry of cluster-logs/; undefined for a name it cannot have made. */
export function parsePartitionDirName(name: string): PartitionDirEntry | undefined {
  const suffix = SIBLING_SUFFIXES.find((s) => name.endsWith(s));
  const dir = suffix ? name.slice(0, -suffix.length) : name;
  const m = DIR_NAME.exec(dir);
  if (!m || !TOPIC_ID_PATTERN.test(m[3]!)) return undefined;
  const partition = Number(m[2]);
  if (!Number.isSafeInteger(partition)) return undefined;
  return { dir, topic: m[1]!, partition, topicId: m[3]! };
}
