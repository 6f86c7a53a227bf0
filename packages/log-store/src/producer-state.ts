/**
 * Idempotent-producer state of one partition (Kafka's ProducerStateManager):
 * for each producer id its epoch and the metadata of its last
 * PRODUCER_BATCHES_KEPT batches. The leader checks a produced batch against
 * it before appending (`check`); every append of a batch with a producer id,
 * leader or follower, updates it (`update`); recovery rebuilds it from batch
 * headers, starting from a snapshot (`toSnapshot` / `fromSnapshot`).
 */
import { ATTR_CONTROL, ATTR_TRANSACTIONAL } from '@mq/protocol/batch';
import { MqError } from '@mq/protocol/errors';

/** Batches remembered per producer: a retry of any of them is answered as a duplicate (Kafka: 5). */
export const PRODUCER_BATCHES_KEPT = 5;
/** Kafka's producer.id.expiration.ms default: 1 day. */
export const DEFAULT_PRODUCER_ID_EXPIRATION_MS = 86_400_000;
export const SNAPSHOT_VERSION = 2;

const INT32_MAX = 0x7fff_ffff;

/** What the state needs of a batch header. */
export interface ProducerBatchHeader {
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  lastOffsetDelta: number;
  maxTimestamp: number;
  /** The transactional (0x10) and control (0x20) bits are read; absent: neither. */
  attributes?: number;
}

/** A transaction aborted in this log: the producer's records from firstOffset up to its abort marker at lastOffset. */
export interface AbortedTxn {
  producerId: number;
  firstOffset: number;
  lastOffset: number;
}

/** A transaction a marker ended (what `update` of a marker answers). */
export interface CompletedTxn extends AbortedTxn {
  committed: boolean;
}


export interface ProducerBatchMeta {
  firstSeq: number;
  lastSeq: number;
  firstOffset: number;
  lastOffset: number;
  timestamp: number;
}

export interface ProducerEntry {
  producerId: number;
  epoch: number;
  /** Oldest first, at most PRODUCER_BATCHES_KEPT. */
  batches: ProducerBatchMeta[];
  /** Largest batch max timestamp seen: what expiry measures from. */
  lastTimestamp: number;
  /** The first offset of the producer's open transaction in this log, -1 when none. */
  txnFirstOffset: number;
}

/** The sequence after `seq` (int32, wrapping from 2^31-1 to 0, as in Kafka). */
export function nextSequence(seq: number): number {
  return seq === INT32_MAX ? 0 : seq + 1;
}

/** Sequence of the last record of a batch: base + delta, wrapping past 2^31-1 to 0. */
export function lastSequence(baseSequence: number, lastOffsetDelta: number): number {
  return baseSequence > INT32_MAX - lastOffsetDelta ? lastOffsetDelta - (INT32_MAX - baseSequence) - 1 : baseSequence + lastOffsetDelta;
}

/** A duplicate's original offsets, or null: append it. */
export type SequenceVerdict = { firstOffset: number; lastOffset: number } | null;

export class ProducerState {
  private readonly entries = new Map<number, ProducerEntry>();
  /** Open transactions: producer id → first offset (what bounds the last stable offset). */
  private readonly ongoing = new Map<number, number>();
  /** The lowest value in `ongoing` (asked on every fetch for the LSO); null: to be recomputed. */
  private firstOngoing: number | undefined | null = undefined;
  /**
   * Ended transactions whose marker the high watermark has not passed yet
   * (Kafka's unreplicated transactions), by marker offset ascending from
   * `unreplicatedHead`: they still bound the last stable offset, since a
   * leader change may lose the marker and reopen them.
   */
  private unreplicated: CompletedTxn[] = [];
  private unreplicatedHead = 0;
  /** The lowest firstOffset among the unreplicated ones; null: to be recomputed. */
  private firstUnreplicated: number | undefined | null = undefined;
  /** Aborted transactions, by marker offset (ascending): the log's aborted-transactions index. */
  private aborted: AbortedTxn[] = [];

  get size(): number {
    return this.entries.size;
  }

  get(producerId: number): ProducerEntry | undefined {
    return this.entries.get(producerId);
  }

  /** Every producer, in no particular order (the caller must not change them). */
  all(): IterableIterator<ProducerEntry> {
    return this.entries.values();
  }

  /**
   * The leader's check of the batches of one append, in order, before it
   * appends any: returns per batch null (append it) or the original offsets
   * of the cached batch it repeats. Batches without a producer id get null.
   * Throws INVALID_PRODUCER_EPOCH (older epoch), UNKNOWN_PRODUCER_ID (an id
   * this partition does not know, not starting at sequence 0),
   * OUT_OF_ORDER_SEQUENCE_NUMBER (anything but the next sequence), and
   * INVALID_RECORD for a producer id without a sequence. Changes nothing.
   */
  checkAll(headers: readonly ProducerBatchHeader[]): SequenceVerdict[] {
    if (headers.length === 1) return [headers[0]!.producerId < 0 ? null : this.check(headers[0]!)];
    // What earlier batches of this same append would leave (epoch, last sequence) per producer.
    let pending: Map<number, { epoch: number; lastSeq: number }> | undefined;
    const out: SequenceVerdict[] = [];
    for (const h of headers) {
      if (h.producerId < 0) {
        out.push(null);
        continue;
      }
      if ((h.attributes ?? 0) & ATTR_CONTROL || h.baseSequence < 0) {
        out.push(this.check(h));
        continue;
      }
      const earlier = pending?.get(h.producerId);
      const verdict = earlier ? checkNext(h, earlier.epoch, earlier.lastSeq) : this.check(h);
      if (verdict === null) (pending ??= new Map()).set(h.producerId, { epoch: h.producerEpoch, lastSeq: lastSequence(h.baseSequence, h.lastOffsetDelta) });
      out.push(verdict);
    }
    return out;
  }

  /** The check of one batch against the state (see checkAll). */
  check(h: ProducerBatchHeader): SequenceVerdict {
    if ((h.attributes ?? 0) & ATTR_CONTROL || (h.baseSequence < 0 && (h.attributes ?? 0) & ATTR_TRANSACTIONAL)) {
      // A transaction marker, or a coordinator's transactional batch (offsets committed in a transaction): no sequence;
      // an older epoch than the producer's is a zombie's.
      const e = this.entries.get(h.producerId);
      if (e && h.producerEpoch < e.epoch) {
        throw new MqError('INVALID_PRODUCER_EPOCH', `marker of producer ${h.producerId} has epoch ${h.producerEpoch}, older than the current epoch ${e.epoch}`, {
          producerId: h.producerId,
          epoch: h.producerEpoch,
          currentEpoch: e.epoch,
        });
      }
      return null;
    }
    if (h.baseSequence < 0) {
      throw new MqError('INVALID_RECORD', `batch of producer ${h.producerId} has no sequence number (base sequence ${h.baseSequence})`);
    }
    const e = this.entries.get(h.producerId);
    if (!e) {
      if (h.baseSequence === 0) return null;
      throw new MqError(
        'UNKNOWN_PRODUCER_ID',
        `producer ${h.producerId} is not known to this partition (expired or never written) and its batch starts at sequence ${h.baseSequence}, not 0`,
        { producerId: h.producerId, sequence: h.baseSequence },
      );
    }
    if (h.producerEpoch === e.epoch) {
      const last = lastSequence(h.baseSequence, h.lastOffsetDelta);
      for (const b of e.batches) {
        if (b.firstSeq === h.baseSequence && b.lastSeq === last) return { firstOffset: b.firstOffset, lastOffset: b.lastOffset };
      }
    }
    const lastSeq = e.batches.length > 0 ? e.batches[e.batches.length - 1]!.lastSeq : -1;
    return checkNext(h, e.epoch, lastSeq);
  }

  /**
   * Records an appended batch (leader and follower alike), with the offsets
   * it got. No checks. A transactional batch opens the producer's transaction
   * here if none is open; a marker (`control` its type) closes it, and an
   * abort adds it to the aborted-transactions index. Answers the transaction
   * a marker ended (undefined: none was open here, the marker changes nothing
   * but the epoch).
   */
  update(h: ProducerBatchHeader, firstOffset: number, lastOffset: number, timestamp: number = h.maxTimestamp, control?: 'commit' | 'abort'): CompletedTxn | undefined {
    const attrs = h.attributes ?? 0;
    if (attrs & ATTR_CONTROL) {
      let e = this.entries.get(h.producerId);
      if (!e) {
        e = { producerId: h.producerId, epoch: h.producerEpoch, batches: [], lastTimestamp: timestamp, txnFirstOffset: -1 };
        this.entries.set(h.producerId, e);
      } else if (h.producerEpoch > e.epoch) {
        // The coordinator bumped the epoch (a new instance fenced the old): sequences restart at 0.
        e.epoch = h.producerEpoch;
        e.batches = [];
      }
      if (timestamp > e.lastTimestamp) e.lastTimestamp = timestamp;
      const first = e.txnFirstOffset;
      e.txnFirstOffset = -1;
      const open = this.ongoing.get(h.producerId);
      if (this.ongoing.delete(h.producerId) && open === this.firstOngoing) this.firstOngoing = null;
      if (first < 0) return undefined;
      const committed = control !== 'abort';
      if (!committed) this.aborted.push({ producerId: h.producerId, firstOffset: first, lastOffset: firstOffset });
      const ended: CompletedTxn = { producerId: h.producerId, firstOffset: first, lastOffset: firstOffset, committed };
      this.unreplicated.push(ended);
      if (this.firstUnreplicated !== null && (this.firstUnreplicated === undefined || first < this.firstUnreplicated)) this.firstUnreplicated = first;
      return ended;
    }
    this.updateData(h, firstOffset, lastOffset, timestamp);
    if (attrs & ATTR_TRANSACTIONAL) {
      const e = this.entries.get(h.producerId)!;
      if (e.txnFirstOffset < 0) {
        e.txnFirstOffset = firstOffset;
        this.ongoing.set(h.producerId, firstOffset);
        if (this.firstOngoing !== null && (this.firstOngoing === undefined || firstOffset < this.firstOngoing)) this.firstOngoing = firstOffset;
      }
    }
    return undefined;
  }

  /**
   * The first offset of the oldest transaction that is open or whose marker
   * the high watermark has not passed (see onHighWatermarkUpdated), or
   * undefined when there is none (the last stable offset is then the high
   * watermark). O(1) but after a change of the oldest one.
   */
  firstUnstableOffset(): number | undefined {
    if (this.firstOngoing === null) {
      let min: number | undefined;
      for (const v of this.ongoing.values()) if (min === undefined || v < min) min = v;
      this.firstOngoing = min;
    }
    if (this.firstUnreplicated === null) {
      let min: number | undefined;
      for (let i = this.unreplicatedHead; i < this.unreplicated.length; i++) {
        const v = this.unreplicated[i]!.firstOffset;
        if (min === undefined || v < min) min = v;
      }
      this.firstUnreplicated = min;
    }
    const a = this.firstOngoing;
    const b = this.firstUnreplicated;
    return a === undefined ? b : b === undefined || a < b ? a : b;
  }

  /**
   * The high watermark reached `highWatermark`: ended transactions whose
   * marker lies below it stop bounding the last stable offset (Kafka's
   * `onHighWatermarkUpdated`). Leader and follower alike, on every advance.
   */
  onHighWatermarkUpdated(highWatermark: number): void {
    const q = this.unreplicated;
    let i = this.unreplicatedHead;
    if (i >= q.length || q[i]!.lastOffset >= highWatermark) return;
    while (i < q.length && q[i]!.lastOffset < highWatermark) i++;
    if (i === q.length) {
      this.unreplicated = [];
      this.unreplicatedHead = 0;
      this.firstUnreplicated = undefined;
      return;
    }
    if (i > 64 && i * 2 > q.length) {
      this.unreplicated = q.slice(i);
      i = 0;
    }
    this.unreplicatedHead = i;
    this.firstUnreplicated = null;
  }

  /** Ended transactions whose marker the high watermark has not passed, oldest marker first. */
  unreplicatedTransactions(): readonly CompletedTxn[] {
    return this.unreplicated.slice(this.unreplicatedHead);
  }

  /** Open transactions: producer id → first offset. */
  openTransactions(): ReadonlyMap<number, number> {
    return this.ongoing;
  }

  /** The aborted transactions whose records may lie in [from, to): marker at or after `from`, first offset before `to`. */
  abortedIn(from: number, to: number): AbortedTxn[] {
    const out: AbortedTxn[] = [];
    // Ascending by marker offset: skip the ones ended before `from`.
    let lo = 0;
    let hi = this.aborted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.aborted[mid]!.lastOffset < from) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.aborted.length; i++) {
      const a = this.aborted[i]!;
      if (a.firstOffset < to) out.push(a);
    }
    return out;
  }

  /** Forgets aborted transactions whose marker lies below `offset` (the log start moved past them). */
  pruneAborted(offset: number): void {
    if (this.aborted.length > 0 && this.aborted[0]!.lastOffset < offset) this.aborted = this.aborted.filter((a) => a.lastOffset >= offset);
  }

  get abortedCount(): number {
    return this.aborted.length;
  }

  private updateData(h: ProducerBatchHeader, firstOffset: number, lastOffset: number, timestamp: number): void {
    if (h.baseSequence < 0) {
      // A coordinator's transactional batch: no sequence to remember, only the epoch.
      const e = this.entries.get(h.producerId);
      if (!e) this.entries.set(h.producerId, { producerId: h.producerId, epoch: h.producerEpoch, batches: [], lastTimestamp: timestamp, txnFirstOffset: -1 });
      else {
        if (h.producerEpoch > e.epoch) {
          e.epoch = h.producerEpoch;
          e.batches = [];
        }
        if (timestamp > e.lastTimestamp) e.lastTimestamp = timestamp;
      }
      return;
    }
    const meta: ProducerBatchMeta = {
      firstSeq: h.baseSequence,
      lastSeq: lastSequence(h.baseSequence, h.lastOffsetDelta),
      firstOffset,
      lastOffset,
      timestamp,
    };
    const e = this.entries.get(h.producerId);
    if (!e || h.producerEpoch !== e.epoch) {
      // A new producer, or a new epoch (a follower copies whatever the leader accepted).
      const txnFirstOffset = e?.txnFirstOffset ?? -1;
      this.entries.set(h.producerId, { producerId: h.producerId, epoch: h.producerEpoch, batches: [meta], lastTimestamp: meta.timestamp, txnFirstOffset });
      return;
    }
    e.batches.push(meta);
    if (e.batches.length > PRODUCER_BATCHES_KEPT) e.batches.shift();
    if (meta.timestamp > e.lastTimestamp) e.lastTimestamp = meta.timestamp;
  }

  /** Forgets producers whose last batch is older than `expirationMs` at `now`; returns how many. */
  expire(now: number, expirationMs: number): number {
    let n = 0;
    for (const [id, e] of this.entries) {
      // A producer with an open transaction stays (its marker will come).
      if (e.txnFirstOffset < 0 && now - e.lastTimestamp > expirationMs) {
        this.entries.delete(id);
        n++;
      }
    }
    return n;
  }

  clear(): void {
    this.entries.clear();
    this.ongoing.clear();
    this.firstOngoing = undefined;
    this.aborted = [];
    this.unreplicated = [];
    this.unreplicatedHead = 0;
    this.firstUnreplicated = undefined;
  }

  /** The snapshot file's content: the state after every batch below `offset`. */
  toSnapshot(offset: number): Buffer {
    const producers = [...this.entries.values()].map((e) => [
      e.producerId,
      e.epoch,
      e.lastTimestamp,
      e.batches.map((b) => [b.firstSeq, b.lastSeq, b.firstOffset, b.lastOffset, b.timestamp]),
      e.txnFirstOffset,
    ]);
    const aborted = this.aborted.map((a) => [a.producerId, a.firstOffset, a.lastOffset]);
    // Ended transactions the HW had not passed: a reopen below their marker's replication still holds the LSO.
    // (An optional field: readers before it ignore it.)
    const unreplicated = this.unreplicatedTransactions().map((t) => [t.producerId, t.firstOffset, t.lastOffset, t.committed ? 1 : 0]);
    return Buffer.from(JSON.stringify({ version: SNAPSHOT_VERSION, offset, producers, aborted, unreplicated }) + '\n');
  }

  /** Parses a snapshot written by toSnapshot; throws CORRUPT_MESSAGE when it is not one. */
  static fromSnapshot(data: Buffer): { offset: number; state: ProducerState } {
    let parsed: unknown;
    try {
      parsed = JSON.parse(data.toString('utf8'));
    } catch (err) {
      throw new MqError('CORRUPT_MESSAGE', `producer snapshot is not JSON: ${(err as Error).message}`);
    }
    const bad = (why: string) => new MqError('CORRUPT_MESSAGE', `producer snapshot is damaged: ${why}`);
    const s = parsed as { version?: unknown; offset?: unknown; producers?: unknown; aborted?: unknown; unreplicated?: unknown };
    // Version 1 (before transactions) has neither open transactions nor aborted ones.
    if (!s || (s.version !== SNAPSHOT_VERSION && s.version !== 1)) throw bad(`unknown version ${String(s?.version)}`);
    if (!Number.isSafeInteger(s.offset) || (s.offset as number) < 0) throw bad(`offset ${String(s.offset)}`);
    if (!Array.isArray(s.producers)) throw bad('no producer list');
    const state = new ProducerState();
    const ints = (a: unknown, n: number): a is number[] => Array.isArray(a) && a.length === n && a.every((v) => Number.isSafeInteger(v));
    for (const p of s.producers as unknown[]) {
      if (!Array.isArray(p) || (p.length !== 4 && p.length !== 5) || !ints(p.slice(0, 3), 3) || !Array.isArray(p[3])) throw bad('a producer entry');
      const txnFirstOffset = p.length === 5 ? (p[4] as unknown) : -1;
      if (!Number.isSafeInteger(txnFirstOffset)) throw bad('an open transaction');
      const [producerId, epoch, lastTimestamp] = p as [number, number, number];
      const batches: ProducerBatchMeta[] = [];
      for (const b of p[3] as unknown[]) {
        if (!ints(b, 5)) throw bad(`a batch of producer ${producerId}`);
        batches.push({ firstSeq: b[0]!, lastSeq: b[1]!, firstOffset: b[2]!, lastOffset: b[3]!, timestamp: b[4]! });
      }
      // Version 2: a producer known only from a marker (epoch bumped, nothing written since) has none.
      if ((s.version === 1 && batches.length === 0) || batches.length > PRODUCER_BATCHES_KEPT) throw bad(`producer ${producerId} has ${batches.length} batches`);
      state.entries.set(producerId, { producerId, epoch, batches, lastTimestamp, txnFirstOffset: txnFirstOffset as number });
      if ((txnFirstOffset as number) >= 0) {
        state.ongoing.set(producerId, txnFirstOffset as number);
        state.firstOngoing = null;
      }
    }
    if (s.aborted !== undefined) {
      if (!Array.isArray(s.aborted)) throw bad('aborted transactions');
      for (const a of s.aborted as unknown[]) {
        if (!ints(a, 3)) throw bad('an aborted transaction');
        state.aborted.push({ producerId: a[0]!, firstOffset: a[1]!, lastOffset: a[2]! });
      }
    }
    if (s.unreplicated !== undefined) {
      if (!Array.isArray(s.unreplicated)) throw bad('unreplicated transactions');
      for (const t of s.unreplicated as unknown[]) {
        if (!ints(t, 4)) throw bad('an unreplicated transaction');
        state.unreplicated.push({ producerId: t[0]!, firstOffset: t[1]!, lastOffset: t[2]!, committed: t[3] === 1 });
      }
      if (state.unreplicated.length > 0) state.firstUnreplicated = null;
    }
    return { offset: s.offset as number, state };
  }
}

/** A batch that is not a cached duplicate: it must follow `lastSeq` in `epoch`, or start a newer epoch at 0. */
function checkNext(h: ProducerBatchHeader, epoch: number, lastSeq: number): null {
  if (h.producerEpoch < epoch) {
    throw new MqError('INVALID_PRODUCER_EPOCH', `producer ${h.producerId} epoch ${h.producerEpoch} is older than the current epoch ${epoch} (a newer producer took over this id)`, {
      producerId: h.producerId,
      epoch: h.producerEpoch,
      currentEpoch: epoch,
    });
  }
  if (h.producerEpoch > epoch) {
    if (h.baseSequence === 0) return null;
    throw new MqError('OUT_OF_ORDER_SEQUENCE_NUMBER', `producer ${h.producerId} starts epoch ${h.producerEpoch} at sequence ${h.baseSequence}, not 0`, {
      producerId: h.producerId,
      sequence: h.baseSequence,
      expected: 0,
    });
  }
  const expected = nextSequence(lastSeq);
  if (h.baseSequence === expected) return null;
  throw new MqError(
    'OUT_OF_ORDER_SEQUENCE_NUMBER',
    `producer ${h.producerId} (epoch ${epoch}) sent sequence ${h.baseSequence}, expected ${expected}: a batch before it is missing`,
    { producerId: h.producerId, sequence: h.baseSequence, expected },
  );
}
