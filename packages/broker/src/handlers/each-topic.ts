/**
 * The per-topic loop of the admin requests (CreateTopics, DeleteTopics,
 * CreatePartitions), in one place (issue 22). Such a request names up to
 * request.max.entries (20,000) topics, and once an entry fails a check nothing
 * in the loop waits: in fuzzing, refusing each of thousands of entries (an
 * error and a log line each) held the event loop for up to 350 ms in one
 * step, during which no other client was served. Here
 * - a topic named more than once is refused, every occurrence, with one
 *   INVALID_REQUEST, as Kafka does (it was checked, or deleted, once per
 *   occurrence);
 * - a request's refusals are one log line (their codes counted, the first
 *   few named), not one line per entry;
 * - the loop yields to other connections every SLICE_MS.
 */
import type { mq } from '@mq/protocol/wire';
import { MqError } from '@mq/protocol/errors';
import type { RequestContext } from '../context.js';
import { refusalLevel, toMqError, wireError } from '../errors.js';
import { shown } from '../request-limits.js';
import { Slicer } from '../slicer.js';

type TopicResult = mq.TopicResult.$Properties;

/** Refusals named in a request's one log line (the rest are counted by code). */
const NAMED_REFUSALS = 3;

/** The refusals of one level: counted by code, the first few named, the first kept whole for the log line. */
interface Tally {
  n: number;
  codes: Record<string, number>;
  named: string[];
  first: { topic: string; e: MqError; err: unknown } | undefined;
}

const tally = (): Tally => ({ n: 0, codes: {}, named: [], first: undefined });

/** The refusals of one request, logged as one line per level when the request is done. */
class RefusalLog {
  private readonly byLevel = { error: tally(), warn: tally(), debug: tally() };

  add(topic: string, err: unknown): MqError {
    const e = toMqError(err);
    // NOT_LEADER is routine (a client with stale metadata): no line.
    if (e.code === 'NOT_LEADER') return e;
    const l = this.byLevel[refusalLevel(e)];
    l.n++;
    l.codes[e.code] = (l.codes[e.code] ?? 0) + 1;
    l.first ??= { topic, e, err };
    if (l.named.length < NAMED_REFUSALS) l.named.push(`${shown(topic)}: ${e.code}`);
    return e;
  }

  flush(ctx: RequestContext, what: string): void {
    for (const level of ['error', 'warn', 'debug'] as const) {
      const l = this.byLevel[level];
      if (!l.first) continue;
      const fields = { conn: ctx.connection.id, remote: ctx.connection.remote, topic: shown(l.first.topic), partition: -1, code: l.first.e.code, err: l.first.e.message };
      const many = l.n > 1 ? { refused: l.n, codes: l.codes, named: l.named } : {};
      if (level === 'error') ctx.logger.error({ ...fields, ...many, stack: (l.first.err as Error).stack }, `${what} failed`);
      else if (level === 'debug') ctx.logger.debug({ ...fields, ...many }, `${what} abandoned`);
      else ctx.logger.warn({ ...fields, ...many }, `${what} refused`);
    }
  }
}

/**
 * Answers each topic entry of an admin request in order: `one(entry, name)`'s
 * result, or the entry's refusal (what `one` threw, or INVALID_REQUEST for a
 * topic named more than once).
 */
export async function answerEachTopic<E>(
  ctx: RequestContext,
  what: string,
  entries: readonly E[] | null | undefined,
  nameOf: (entry: E) => string,
  one: (entry: E, name: string) => Promise<TopicResult>,
): Promise<TopicResult[]> {
  const list = entries ?? [];
  const times = new Map<string, number>();
  for (const e of list) {
    const name = nameOf(e);
    times.set(name, (times.get(name) ?? 0) + 1);
  }
  // One refusal per repeated name, shared by its occurrences.
  const repeated = new Map<string, MqError>();
  const refusals = new RefusalLog();
  const slicer = new Slicer(undefined, ctx.broker.sliceClock);
  const results: TopicResult[] = [];
  try {
    for (const entry of list) {
      const name = nameOf(entry);
      if (times.get(name)! > 1) {
        let e = repeated.get(name);
        if (!e) {
          e = new MqError('INVALID_REQUEST', `topic "${shown(name)}" appears ${times.get(name)} times in the request: name each topic once`);
          repeated.set(name, e);
        }
        results.push({ name, ...wireError(refusals.add(name, e)) });
      } else {
        try {
          results.push(await one(entry, name));
        } catch (err) {
          results.push({ name, ...wireError(refusals.add(name, err)) });
        }
      }
      await slicer.maybeYield();
    }
  } finally {
    refusals.flush(ctx, what);
  }
  return results;
}
