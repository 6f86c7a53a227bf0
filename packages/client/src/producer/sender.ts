/**
 * Sends ready batches to partition leaders: groups partitions by leader,
 * packs them into produce requests up to `maxRequestBytes`, keeps at most
 * `maxInFlight` requests per broker and one per partition (so a retry never
 * reorders a partition), resolves each record from its batch's base offset,
 * and retries retriable failures through the client's retrier after a
 * metadata refresh when leadership may have moved.
 */
import { MqError, errorCodeFromNumber, isMqError } from '@mq/protocol/errors';
import { runAtEndOfTurn } from '@mq/protocol/platform';
import { channels, type ProduceBatchMessage, type RetryMessage } from '../diagnostics.js';
import { invalidatesMetadata, type Cluster, type TopicDescription } from '../cluster.js';
import type { Connection, ResponseOf } from '../connection.js';
import { completeBatch, failBatch, type Accumulator, type PartitionQueue } from './accumulator.js';
import type { BatchBuilder } from './batch-builder.js';
import type { ParsedProducerOptions } from './options.js';
import { FramePool } from './frame-pool.js';
import { encodeProduceFrame, type ProducePartitionData } from './produce-frame.js';
import { MAX_IDEMPOTENT_BATCHES_IN_FLIGHT, type Idempotence, type ProducerIdentity } from './idempotence.js';
import type { Retrier } from '../retrier.js';

/** Refusals of an idempotent batch's sequence or epoch: not retried (the batch would be refused again). */
const SEQUENCE_ERRORS = new Set(['OUT_OF_ORDER_SEQUENCE_NUMBER', 'UNKNOWN_PRODUCER_ID', 'INVALID_PRODUCER_EPOCH']);

interface Entry {
  q: PartitionQueue;
  batches: BatchBuilder[];
  /** The partition's leader epoch in the metadata the request was sent with (-1: unknown). */
  leaderEpoch: number;
  /**
   * Settled: acknowledged, failed for good, or given back to its queue for a retry. Set once; a part of the
   * answer arriving after that (ProduceRequest.partial_answers; an abandoned request's old leader) is ignored.
   */
  answered?: boolean;
}

/** A produce request whose partitions' leaders are checked while it waits (ProducerOptions.leaderCheckMs). */
interface Watched {
  leader: number;
  conn: Connection;
  /** Each with the leader epoch its partition was sent under. */
  entries: Entry[];
  /** The request's correlation id on `conn` (abandoned through it). */
  correlationId: number;
  startedAt: number;
}

export class Sender {
  private readonly inFlight = new Map<number, number>();
  private scheduled = false;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private requests = 0;
  private readonly watching = new Set<Watched>();
  private watchTimer: NodeJS.Timeout | undefined;
  /** Produce frames are encoded into reused memory, given back once the socket has written them. */
  readonly frames = new FramePool();

  constructor(
    private readonly options: ParsedProducerOptions,
    private readonly cluster: Cluster,
    private readonly acc: Accumulator,
    private readonly retrier: Retrier,
    /** Set for an idempotent producer: batches get its producer id and sequences. */
    private readonly idempotence?: Idempotence,
  ) {}

  /** Produce requests outstanding. */
  get inFlightRequests(): number {
    return this.requests;
  }

  /**
   * Schedules a send pass, coalesced to one per turn of the event loop: it
   * runs at the end of the current turn (setImmediate on Node), before any timer, so
   * a linger-0 record goes out in the turn that sent it, together with every
   * record sent from the other callbacks of that turn. (A microtask instead
   * was measured: no gain in one-at-a-time latency, and one pass per callback.)
   */
  wake(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    runAtEndOfTurn(this.pass);
  }

  private readonly pass = (): void => {
    this.scheduled = false;
    this.run();
  };

  stop(): void {
    clearTimeout(this.watchTimer);
    this.watchTimer = undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
  }

  private run(): void {
    const now = Date.now();
    const { byLeader, nextCheckAt } = this.acc.scan(now);
    const maxRequestBytes = this.acc.maxBatchBytes();
    // One request per partition is in flight; an idempotent one carries at most 5 of its batches (the broker remembers 5).
    const maxBatches = this.idempotence ? MAX_IDEMPOTENT_BATCHES_IN_FLIGHT : Infinity;
    for (const [leader, queues] of byLeader) {
      let i = 0;
      while (i < queues.length && (this.inFlight.get(leader) ?? 0) < this.options.maxInFlight) {
        const entries: Entry[] = [];
        let bytes = 0;
        while (i < queues.length) {
          const q = queues[i]!;
          const batches: BatchBuilder[] = [];
          for (const b of q.ready) {
            if (batches.length >= maxBatches) break;
            const size = b.sizeBytes;
            if (bytes + size > maxRequestBytes && (entries.length > 0 || batches.length > 0)) break;
            batches.push(b);
            bytes += size;
          }
          if (batches.length === 0) break;
          if (batches.length === q.ready.length) q.ready.length = 0;
          else q.ready.splice(0, batches.length);
          q.inFlight = true;
          entries.push({ q, batches, leaderEpoch: this.cluster.leaderEpochOf(q.topic, q.partition) });
          i++;
          if (q.ready.length > 0 && batches.length < maxBatches) break; // request full
        }
        if (entries.length === 0) break;
        this.inFlight.set(leader, (this.inFlight.get(leader) ?? 0) + 1);
        this.requests++;
        void this.produceAndRelease(leader, entries);
      }
    }
    this.armTimer(nextCheckAt, now);
  }

  private armTimer(at: number, now: number): void {
    if (at === Infinity || at >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Infinity;
      this.run();
    }, Math.max(0, at - now));
  }

  /** One request's whole life: produce, then free its in-flight slot and look for more to send. */
  private async produceAndRelease(leader: number, entries: Entry[]): Promise<void> {
    try {
      await this.produce(leader, entries);
    } catch (err) {
      // produce() settles every record itself; this is a last resort so that nothing is left pending.
      for (const e of entries) if (!e.answered) this.failed(e, err);
    } finally {
      this.inFlight.set(leader, (this.inFlight.get(leader) ?? 1) - 1);
      this.requests--;
      this.wake();
    }
  }

  private async produce(leader: number, entries: Entry[]): Promise<void> {
    const acks = this.options.acks;
    // Several partitions in one request: each is answered as it completes, so one waiting for a slow follower
    // (acks=all) holds back only itself, and its neighbours' next batches go out meanwhile.
    const partialAnswers = acks !== 0 && entries.length > 1;
    let resp: ResponseOf<'produce'> | undefined;
    try {
      const idem = this.idempotence;
      let identity;
      if (idem) {
        const pending = idem.ensure();
        identity = pending instanceof Promise ? await pending : pending;
        // A transaction's partitions join it before their first batch is written.
        const adding = idem.txn?.addPartitions(entries.map(({ q }) => ({ topic: q.topic, partition: q.partition })));
        if (adding) await adding;
      }
      // Grouped by topic (a partition's entries come topic by topic from scan(); the map is made only when a topic recurs).
      const topics: Array<{ name: string; partitions: ProducePartitionData[] }> = [];
      let byTopic: Map<string, ProducePartitionData[]> | undefined;
      let last: { name: string; partitions: ProducePartitionData[] } | undefined;
      for (const { q, batches } of entries) {
        let records: Buffer | Buffer[];
        if (batches.length === 1) {
          const bytes = closeBatch(batches[0]!, identity, idem, this.options.compression);
          records = bytes instanceof Promise ? await bytes : bytes;
        } else {
          records = [];
          for (const b of batches) {
            const bytes = closeBatch(b, identity, idem, this.options.compression);
            records.push(bytes instanceof Promise ? await bytes : bytes);
          }
        }
        const part = { partition: q.partition, records };
        if (last?.name === q.topic) {
          last.partitions.push(part);
          continue;
        }
        if (last && !byTopic) byTopic = new Map(topics.map((t) => [t.name, t.partitions]));
        const seen = byTopic?.get(q.topic);
        if (seen) {
          seen.push(part);
          continue;
        }
        last = { name: q.topic, partitions: [part] };
        topics.push(last);
        byTopic?.set(q.topic, last.partitions);
      }
      // The open connection when there is one (the usual case), without a trip through an async lookup.
      const conn = this.cluster.openConnection(leader) ?? (await this.cluster.brokerConnection(leader));
      const frames = this.frames;
      let frame: Buffer | undefined;
      let correlationId = 0;
      const request = conn.requestEncoded(
        'produce',
        (id, apiVersion, clientId) => {
          correlationId = id;
          try {
            return encodeProduceFrame({ correlationId: id, apiVersion, clientId, acks, timeoutMs: this.options.ackTimeoutMs, topics, transactionalId: idem?.txn?.transactionalId, partialAnswers }, (size) => {
              frame = frames.acquire(size);
              return frame;
            });
          } catch (err) {
            // Never reached the socket: the frame can go straight back.
            if (frame) frames.release(frame);
            frame = undefined;
            throw err;
          }
        },
        {
          timeoutMs: this.options.ackTimeoutMs + this.cluster.options.requestTimeoutMs,
          expectResponse: acks !== 0,
          onWritten: () => {
            if (frame) frames.release(frame);
            frame = undefined;
          },
          ...(partialAnswers
            ? {
                onPartial: (part: unknown) => {
                  this.settleAnswered(entries, part as ResponseOf<'produce'>, false);
                  this.wake();
                },
              }
            : {}),
        },
      );
      if (acks !== 0 && this.options.leaderCheckMs > 0) {
        // Watched while it waits: a leader check that finds a partition moved abandons it (checkLeaders).
        const w: Watched = { leader, conn, entries, correlationId, startedAt: Date.now() };
        this.watching.add(w);
        this.armWatch();
        try {
          resp = await request;
        } finally {
          this.watching.delete(w);
        }
      } else {
        resp = await request;
      }
    } catch (err) {
      // failed() marks each entry settled: a part of the answer arriving later (the leader check abandoned the
      // request, and the paused leader answers once it runs again) must not settle the same batches a second time,
      // by then requeued or resent with another request in flight for the partition.
      for (const e of entries) if (!e.answered) this.failed(e, err);
      return;
    }
    if (acks === 0) {
      for (const e of entries) this.succeeded(e, -1, undefined);
      return;
    }
    this.settleAnswered(entries, resp!, true);
  }

  /**
   * Settles the entries a produce answer (or one part of it) names; with
   * `last`, an entry still unanswered fails (retriable).
   */
  private settleAnswered(entries: Entry[], resp: ResponseOf<'produce'>, last: boolean): void {
    for (const e of entries) {
      if (e.answered) continue;
      const t = resp.topics?.find((x) => x.name === e.q.topic);
      const p = t?.partitions?.find((x) => (x.partition ?? 0) === e.q.partition);
      if (!p) {
        if (last) this.failed(e, new MqError('UNKNOWN', `the broker did not answer for ${e.q.topic}/${e.q.partition}`, { retriable: true }));
        continue;
      }
      const code = errorCodeFromNumber(p.errorCode ?? 0);
      if (code === 'NONE') {
        this.succeeded(e, Number(p.baseOffset ?? 0), p.batchBaseOffsets);
      } else {
        this.failed(
          e,
          new MqError(code, p.errorMessage || `producing to ${e.q.topic}/${e.q.partition} failed with ${code}`, {
            topic: e.q.topic,
            partition: e.q.partition,
          }),
        );
      }
    }
  }

  private armWatch(): void {
    if (this.watchTimer || this.watching.size === 0) return;
    this.watchTimer = setTimeout(() => {
      this.watchTimer = undefined;
      const due = Date.now() - this.options.leaderCheckMs;
      const byLeader = new Map<number, Watched[]>();
      for (const w of this.watching) {
        if (w.startedAt > due) continue;
        const list = byLeader.get(w.leader);
        if (list) list.push(w);
        else byLeader.set(w.leader, [w]);
      }
      for (const [leader, list] of byLeader) void this.checkLeaders(leader, list);
      this.armWatch();
    }, this.options.leaderCheckMs);
  }

  /**
   * Requests to `leader` that wait long: ask another broker (this one is
   * asked last: it may be paused) who leads their partitions now; a request
   * with a partition that moved is abandoned with NOT_LEADER (retriable),
   * so its batches are resent to the new leader without waiting out the
   * request timeout. An idempotent batch keeps its sequence, so the new
   * leader writes it once even if the old one had replicated it. The
   * abandoned request's answer, should the old leader ever give one, is
   * ignored (it was fenced: it cannot commit the batch).
   */
  private async checkLeaders(leader: number, list: Watched[]): Promise<void> {
    this.cluster.avoid(list[0]!.conn);
    const topics = [...new Set(list.flatMap((w) => w.entries.map((e) => e.q.topic)))];
    try {
      // Not bounded by leaderCheckMs: on a loaded machine a metadata round trip can take longer than that, and a
      // check that always gave up would leave a paused leader's requests waiting out their timeout (60 s). The
      // leader was just avoided, so this does not wait on a refresh in flight to it (it may be paused with it):
      // it asks another broker, and an older answer arriving later cannot move the partition back (the cache
      // keeps each partition's newest leader epoch).
      await this.cluster.refreshMetadata(topics, AbortSignal.timeout(this.cluster.options.requestTimeoutMs));
    } catch (err) {
      this.cluster.logger.debug({ err, leader }, 'leader check: metadata refresh failed');
      return;
    }
    const partitionOf = (t: TopicDescription | undefined, partition: number) => t?.partitions.find((p) => p.partition === partition);
    for (const w of list) {
      if (!this.watching.has(w)) continue;
      for (const { q, answered, leaderEpoch } of w.entries) {
        if (answered) continue;
        const current = partitionOf(this.cluster.cachedTopic(q.topic), q.partition);
        const now = current?.leader ?? -1;
        // Only a later leader epoch moves the request: a broker with an older view must not send it back.
        if (!current || now < 0 || now === leader || current.leaderEpoch <= leaderEpoch) continue;
        this.watching.delete(w);
        // The request's promise (awaited in produce()) fails now; the connection drops its answer, should one come.
        w.conn.abandon(
          w.correlationId,
          new MqError('NOT_LEADER', `${q.topic}/${q.partition} moved from broker ${leader} to ${now} while a produce request to ${leader} was unanswered; resending`, {
            topic: q.topic,
            partition: q.partition,
            leader: now,
          }),
        );
        break;
      }
    }
  }

  /**
   * Resolves every record of a written partition. Batch i starts where batch
   * i-1 ended unless the broker named each batch's base offset (produce v1:
   * an idempotent retry whose repeated batches kept their original offsets
   * while the new ones went to the log end).
   */
  private succeeded(e: Entry, baseOffset: number, batchBaseOffsets: readonly number[] | null | undefined): void {
    e.answered = true;
    const { q, batches } = e;
    if (batchBaseOffsets && batchBaseOffsets.length > 0 && batchBaseOffsets.length !== batches.length) {
      this.failed(
        e,
        new MqError('UNKNOWN', `the broker answered ${batchBaseOffsets.length} batch offsets for the ${batches.length} batches sent to ${q.topic}/${q.partition}`, {
          topic: q.topic,
          partition: q.partition,
        }),
      );
      return;
    }
    q.inFlight = false;
    let base = baseOffset;
    for (let i = 0; i < batches.length; i++) {
      const b = batches[i]!;
      if (batchBaseOffsets && batchBaseOffsets.length > 0) base = batchBaseOffsets[i]!;
      if (channels.produceBatch.hasSubscribers) publishBatch(q, b, base, undefined);
      completeBatch(b, base);
      if (base >= 0) base += b.count;
      this.acc.completed(b);
    }
  }

  private failed(e: Entry, err: unknown): void {
    // Settled once: a part of the same request arriving later (an abandoned request's old leader) finds it answered.
    e.answered = true;
    const { q, batches, leaderEpoch } = e;
    q.inFlight = false;
    const now = Date.now();
    const first = batches[0]!;
    const retry = this.retrier.shouldRetry(err, first.attempts) && now - first.createdAt < this.options.deliveryTimeoutMs;
    if (retry) {
      for (const b of batches) b.attempts++;
      q.ready.unshift(...batches);
      // Leadership moving (a dead or fenced leader) is retried at the first backoff each time, as
      // Kafka's retry.backoff.ms, each after a metadata refresh: the new leader is usually known
      // within a few hundred ms, and a growing backoff would make the batch wait past that.
      const stale = invalidatesMetadata(err);
      const delayMs = this.retrier.delayMs(stale ? 0 : first.attempts - 1);
      q.retryAt = now + delayMs;
      this.cluster.logger.debug({ topic: q.topic, partition: q.partition, attempt: first.attempts, delayMs, err }, 'produce failed; retrying the batches');
      if (channels.retry.hasSubscribers) {
        channels.retry.publish({
          kind: 'produce',
          topic: q.topic,
          partition: q.partition,
          attempt: first.attempts,
          delayMs,
          error: err,
        } satisfies RetryMessage);
      }
      if (stale) {
        // Sent as soon as the metadata names a later leader (often before delayMs is over).
        q.movedFrom = leaderEpoch;
        this.cluster.invalidate(q.topic);
        this.acc.leaderLost(q.topic);
      }
      this.armTimer(q.retryAt, now);
      return;
    }
    // A transaction with a failed send can only abort (even a batch never stamped: its partition was not added).
    if (this.idempotence?.txn && first.producerId < 0) this.idempotence.txn.batchFailed(err);
    if (this.idempotence && first.producerId >= 0) {
      // Whether the broker has it is unknown: this partition's sequence cannot go on under this producer epoch.
      const next = this.idempotence.reset(first, err);
      if (isMqError(err) && SEQUENCE_ERRORS.has(err.code)) {
        const cur = this.idempotence.current;
        const later =
          next === 'epoch' && cur ? `later sends use epoch ${cur.epoch} of producer id ${cur.producerId}` : next === 'producer-id' ? 'later sends use a new producer id' : 'later sends use a newer producer epoch';
        err = new MqError(
          err.code,
          `${err.message}; the idempotent producer did not write these ${batches.reduce((n, b) => n + b.count, 0)} records of ${q.topic}/${q.partition} and will not reorder them: ${later}`,
          { cause: err, topic: q.topic, partition: q.partition, producerId: first.producerId, sequence: first.baseSequence },
        );
      }
    }
    for (const b of batches) {
      if (channels.produceBatch.hasSubscribers) publishBatch(q, b, undefined, err);
      failBatch(b, err);
      this.acc.completed(b);
    }
  }
}

/** A batch's bytes, closed (and, for an idempotent producer, stamped first, so that the CRC covers its id and sequence). */
function closeBatch(b: BatchBuilder, identity: ProducerIdentity | undefined, idem: Idempotence | undefined, compression: ParsedProducerOptions['compression']): Buffer | Promise<Buffer> {
  // Before the first close, so the CRC covers them; a retry keeps them (close() returns the same bytes).
  if (identity) idem!.stamp(b, identity);
  return b.close(compression);
}

function publishBatch(q: PartitionQueue, b: BatchBuilder, baseOffset: number | undefined, error: unknown): void {
  const m: ProduceBatchMessage = { topic: q.topic, partition: q.partition, records: b.count, bytes: b.sizeBytes, attempts: b.attempts + 1 };
  if (baseOffset !== undefined) m.baseOffset = baseOffset;
  if (error !== undefined) m.error = error;
  channels.produceBatch.publish(m);
}
