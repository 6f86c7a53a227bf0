/**
 * Record requests go to a partition's leader. When there is none yet, the
 * leader answers that it is not (any more) the leader, or it cannot be
 * reached, the call waits for the metadata to move and tries the leader it
 * names next, up to `leaderWaitMs` (with a dead leader: until the
 * controller fences it and elects another).
 */
import { isMqError, MqError, type ErrorCode } from '@mq/protocol/errors';
import { validateTopicName } from '@mq/protocol/topic-name';
import type { MetadataState } from '../../../controller/metadata-state.js';
import { metadataChange } from '../../../controller/metadata-wait.js';
import type { PartitionRecord, TopicRecord } from '../../../controller/types.js';
import type { BackendDeps } from './types.js';

/**
 * The leader may have moved: wait for the metadata and try again. Usually nothing was written, but a
 * leader that resigns while an acks=all produce waits for its followers answers NOT_LEADER after the
 * append, so a retried produce may be written twice (at-least-once, as when a client retries it).
 */
const MOVED: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['NOT_LEADER', 'LEADER_NOT_AVAILABLE', 'UNKNOWN_LEADER_EPOCH', 'FENCED_LEADER_EPOCH']);
/**
 * The leader could not be reached (it died, a failover is under way): tried again on the leader the
 * metadata names next. A produce whose connection broke after it was sent may then be written twice,
 * exactly as when a client retries it (at-least-once).
 */
const UNREACHABLE: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['CONNECTION_ERROR', 'CONNECTION_CLOSED', 'BROKER_NOT_AVAILABLE']);

/** The topic as the metadata has it; UNKNOWN_TOPIC_OR_PARTITION (after the name's own check) when it does not. */
export function topicRecord(md: Pick<MetadataState, 'topic'>, name: string): TopicRecord {
  const t = md.topic(name);
  if (!t) {
    validateTopicName(name);
    throw new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${name}" does not exist (create it with: mq topic create ${name})`, { retriable: false });
  }
  return t;
}

export function partitionRecord(md: Pick<MetadataState, 'topic'>, topic: string, partition: number): PartitionRecord {
  const t = topicRecord(md, topic);
  const p = t.partitions[partition];
  if (!p) throw new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${topic}" has no partition ${partition} (it has ${t.partitions.length})`, { retriable: false });
  return p;
}

/** Runs `attempt` against the partition's current leader, again on the next one while it has moved or cannot be reached (see above). */
export async function onLeader<T>(d: Pick<BackendDeps, 'c' | 'options' | 'timers'>, topic: string, partition: number, signal: AbortSignal, attempt: (leader: number) => Promise<T>): Promise<T> {
  const md = d.c.metadata;
  const clock = d.c.broker().clock;
  const deadline = clock() + d.options.leaderWaitMs;
  for (;;) {
    signal.throwIfAborted();
    const p = partitionRecord(md, topic, partition);
    let err: MqError;
    if (p.leader < 0) {
      err = new MqError('LEADER_NOT_AVAILABLE', `${topic}-${partition} has no leader: no in-sync replica is alive`);
    } else {
      try {
        return await attempt(p.leader);
      } catch (e) {
        if (!isMqError(e) || !(MOVED.has(e.code) || UNREACHABLE.has(e.code))) throw e;
        err = e;
      }
    }
    const left = deadline - clock();
    if (left <= 0) throw err;
    // A leader named by the metadata may not have taken over yet: poll at least every 100 ms
    // (every 500 ms while it cannot be reached, not to spin on connection attempts).
    await metadataChange(md, { timeoutMs: Math.min(left, UNREACHABLE.has(err.code) ? 500 : 100), timers: d.timers, signal });
  }
}
