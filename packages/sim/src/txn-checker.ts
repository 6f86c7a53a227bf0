/**
 * The invariants of the transactional pipeline (a transactional producer
 * committing and aborting transactions across the partitions of their own
 * topic, a read_committed consumer of every partition):
 *
 * - read_committed never shows a record of a transaction whose commit was
 *   never asked for (an open one, or one being aborted), nor one of a
 *   transaction whose abort was acknowledged;
 * - atomicity: a transaction's markers agree on every partition it wrote
 *   to, match what the producer was answered (a commit acknowledged is a
 *   commit marker everywhere and all its records in the log, an abort
 *   acknowledged an abort marker), and once every partition is stable
 *   (LSO = HW) the read_committed consumer has seen every record of every
 *   committed transaction and none of any aborted one;
 * - the LSO never passes an open transaction: every LSO a leader reported
 *   below its HW (sampled every check) lies at or below the first offset of
 *   each transaction still open there, that is, outside every transaction's
 *   span (first record, marker] of the final log (an LSO equal to the HW
 *   inside a span, a marker not yet replicated, is counted: see finalCheck);
 * - the read_committed consumer reads each partition in increasing offsets,
 *   each record holding the log's value there; no offset is acknowledged
 *   twice with different values.
 *
 * The span check reads the log at the end: offsets below a leader's HW never
 * change (the main checker proves that for the main topic; here a straddled
 * LSO would also show as a missing or moved record).
 */
import { decodeBatchSync, isControl, isTransactional, iterateBatches, markerKeyType } from '@mq/protocol/batch';
import type { SimBroker } from './sim-broker.js';
import type { SimTime } from './sim-time.js';

interface Txn {
  /** commitTransaction() called (its records may become visible from then on). */
  commitAsked: boolean;
  commitAcked: boolean;
  abortAcked: boolean;
  /** Values sent in it, with their partition. */
  sent: Map<string, number>;
}

export interface TxnCheckerOptions {
  topic: string;
  partitions: number;
  brokers: readonly SimBroker[];
  time: SimTime;
  note: (line: string) => void;
  /** Records a violation (the run stops at the next step). */
  flag: (message: string) => void;
}

/** A transaction's record value: `t<txn>:<index>`. */
export function txnValue(txn: number, index: number): string {
  return `t${txn}:${index}`;
}

function txnOf(value: string): number {
  const m = /^t(\d+):\d+$/.exec(value);
  return m ? Number(m[1]) : -1;
}

export class TxnChecker {
  committed = 0;
  aborted = 0;
  unknown = 0;
  consumedCount = 0;
  private readonly txns = new Map<number, Txn>();
  private readonly ackedAt: Map<number, string>[];
  private readonly consumedAt: Map<number, string>[];
  private readonly lastConsumed: number[];
  /** The read_committed consumer's position per partition (the next offset it would return). */
  readonly positions: number[];
  /** Every distinct LSO a leader reported below its HW (an open transaction held it back), per partition. */
  private readonly lsoBelowHw: Set<number>[];
  /** Every distinct LSO a leader reported at its HW (it saw no open transaction below its HW), per partition. */
  private readonly lsoAtHw: Set<number>[];

  constructor(private readonly o: TxnCheckerOptions) {
    this.ackedAt = Array.from({ length: o.partitions }, () => new Map());
    this.consumedAt = Array.from({ length: o.partitions }, () => new Map());
    this.lastConsumed = Array.from({ length: o.partitions }, () => -1);
    this.positions = Array.from({ length: o.partitions }, () => 0);
    this.lsoBelowHw = Array.from({ length: o.partitions }, () => new Set());
    this.lsoAtHw = Array.from({ length: o.partitions }, () => new Set());
  }

  private txn(k: number): Txn {
    let t = this.txns.get(k);
    if (!t) this.txns.set(k, (t = { commitAsked: false, commitAcked: false, abortAcked: false, sent: new Map() }));
    return t;
  }

  begun(k: number): void {
    this.txn(k);
  }

  sent(k: number, partition: number, value: string): void {
    this.txn(k).sent.set(value, partition);
  }

  acked(partition: number, offset: number, value: string): void {
    const prior = this.ackedAt[partition]!.get(offset);
    if (prior !== undefined && prior !== value) this.o.flag(`two acknowledgments of ${this.o.topic}-${partition} offset ${offset}: "${prior}" and "${value}"`);
    this.ackedAt[partition]!.set(offset, value);
  }

  /** commitTransaction() or abortTransaction() of `k` is about to be called. */
  ending(k: number, commit: boolean): void {
    if (commit) this.txn(k).commitAsked = true;
  }

  /** What the producer was answered for `k`: committed, aborted, or neither (an error: the outcome is the coordinator's). */
  ended(k: number, outcome: 'committed' | 'aborted' | 'unknown'): void {
    const t = this.txn(k);
    if (outcome === 'committed') {
      t.commitAcked = true;
      this.committed++;
    } else if (outcome === 'aborted') {
      t.abortAcked = true;
      this.aborted++;
    } else this.unknown++;
    this.o.note(`txn ${k}: ${outcome}`);
  }

  consumed(partition: number, offset: number, value: string): void {
    this.consumedCount++;
    const last = this.lastConsumed[partition]!;
    if (offset <= last) this.o.flag(`read_committed consumer of ${this.o.topic}-${partition} read offset ${offset} after ${last} (a repeat or a step back)`);
    this.lastConsumed[partition] = offset;
    this.consumedAt[partition]!.set(offset, value);
    const k = txnOf(value);
    const t = this.txns.get(k);
    if (!t) return this.o.flag(`read_committed consumer read "${value}" at ${this.o.topic}-${partition} offset ${offset}: no transaction sent it`);
    if (t.abortAcked) this.o.flag(`read_committed consumer read "${value}" at ${this.o.topic}-${partition} offset ${offset}: its transaction ${k} was aborted (the abort was acknowledged)`);
    else if (!t.commitAsked) this.o.flag(`read_committed consumer read "${value}" at ${this.o.topic}-${partition} offset ${offset}: its transaction ${k} was never committed (still open, or aborted)`);
  }

  /** The continuous check: each leader's LSO is sampled (and must not exceed its HW). */
  check(): void {
    for (const b of this.o.brokers) {
      const node = b.alive ? b.node : undefined;
      if (!node) continue;
      for (let p = 0; p < this.o.partitions; p++) {
        const h = node.replicas.hostedPartition(this.o.topic, p);
        if (h?.role !== 'leader' || !h.leader) continue;
        const lso = h.leader.lastStableOffset;
        if (lso > h.leader.highWatermark) this.o.flag(`${this.o.topic}-${p}: leader ${b.id} has LSO ${lso} above its HW ${h.leader.highWatermark}`);
        (lso < h.leader.highWatermark ? this.lsoBelowHw : this.lsoAtHw)[p]!.add(lso);
      }
    }
  }

  /** The leader of each partition of the topic (per the active controller) and its HW and LSO; undefined while one has none. */
  private stable(): { leader: SimBroker; hw: number; lso: number }[] | undefined {
    const active = this.o.brokers.find((b) => b.alive && b.node?.controller.isActive);
    const t = active?.node!.controller.metadata.topic(this.o.topic);
    if (!t) return undefined;
    const out: { leader: SimBroker; hw: number; lso: number }[] = [];
    for (let p = 0; p < this.o.partitions; p++) {
      const rec = t.partitions[p]!;
      const leader = this.o.brokers.find((b) => b.id === rec.leader && b.alive);
      const pl = leader?.node?.replicas.hostedPartition(this.o.topic, p)?.leader;
      if (!leader || !pl) return undefined;
      out.push({ leader, hw: pl.highWatermark, lso: pl.lastStableOffset });
    }
    return out;
  }

  /** Every partition stable (no transaction open: LSO = HW) and the read_committed consumer at the HW. */
  settled(): boolean {
    const s = this.stable();
    return s !== undefined && s.every((x, p) => x.lso === x.hw && this.positions[p]! >= x.hw);
  }

  describe(): string {
    const s = this.stable();
    if (!s) return `${this.o.topic}: a partition has no live leader`;
    return s.map((x, p) => `p${p} leader ${x.leader.id} HW ${x.hw} LSO ${x.lso} consumer at ${this.positions[p]}`).join('; ');
  }

  /** The end: the leaders' logs against what the producer was answered and what the consumer saw. */
  async finalCheck(): Promise<void> {
    const { topic } = this.o;
    const s = this.stable();
    if (!s) return this.o.flag(`${topic}: a partition has no live leader at the end`);
    /** Per transaction: the marker type on each partition it wrote to. */
    const outcomes = new Map<number, Map<number, 'commit' | 'abort' | 'open'>>();
    const inLog = new Map<string, { partition: number; offset: number }>();
    for (let p = 0; p < this.o.partitions; p++) {
      const { leader, hw } = s[p]!;
      const h = leader.node!.replicas.hostedPartition(topic, p)!;
      const records = new Map<number, string>();
      /** The open span per producer id: its first offset and the transactions in it. */
      const open = new Map<number, { first: number; txns: Set<number> }>();
      const spans: { first: number; end: number }[] = [];
      const close = (pid: number, end: number, type: 'commit' | 'abort' | 'open') => {
        const span = open.get(pid);
        if (!span) return;
        open.delete(pid);
        spans.push({ first: span.first, end });
        for (const k of span.txns) {
          let m = outcomes.get(k);
          if (!m) outcomes.set(k, (m = new Map()));
          m.set(p, type);
        }
      };
      let offset = h.log.logStartOffset;
      while (offset < hw) {
        const r = await this.o.time.within(leader.proc, () => h.log.read(offset, 1 << 20, { maxOffset: hw }));
        if (r.records.length === 0) break;
        for (const span of iterateBatches(r.records)) {
          const batch = decodeBatchSync(r.records, span.position);
          const pid = batch.header.producerId;
          if (isControl(batch.header)) {
            const type = markerKeyType(batch.records[0]?.key);
            if (batch.header.baseOffset < hw) close(pid, batch.header.baseOffset, type ?? 'open');
            continue;
          }
          for (const rec of batch.records) {
            if (rec.offset >= hw) continue;
            const v = rec.value?.toString('utf8') ?? '';
            records.set(rec.offset, v);
            if (!isTransactional(batch.header)) {
              this.o.flag(`${topic}-${p} offset ${rec.offset} holds "${v}" outside any transaction`);
              continue;
            }
            const prior = inLog.get(v);
            if (prior) this.o.flag(`"${v}" is in the log twice: ${topic}-${prior.partition} offset ${prior.offset} and ${topic}-${p} offset ${rec.offset}`);
            inLog.set(v, { partition: p, offset: rec.offset });
            let o = open.get(pid);
            if (!o) open.set(pid, (o = { first: rec.offset, txns: new Set() }));
            o.txns.add(txnOf(v));
          }
        }
        offset = r.nextOffset;
      }
      for (const pid of [...open.keys()]) close(pid, Number.POSITIVE_INFINITY, 'open');
      // The LSO never passed an unstable transaction: no LSO a leader reported (sampled every 100 ms, below or at its
      // HW) lies inside a transaction's span (first record, marker] of the final log. Below the HW that is an open
      // transaction ignored; at the HW it is a transaction released when its marker was appended to the leader's log
      // but not yet below the HW (LSO = HW = the marker's offset; were the marker lost with that leader, the span would
      // end at the marker written again later, further on): Kafka and mq hold the LSO until the HW passes the marker.
      for (const [set, where] of [[this.lsoBelowHw[p]!, 'below'], [this.lsoAtHw[p]!, 'at']] as const) {
        for (const lso of set) {
          const straddled = spans.find((x) => x.first < lso && lso <= x.end);
          if (straddled) {
            this.o.flag(
              `${topic}-${p}: a leader reported LSO ${lso} (${where} its HW) inside the transaction from offset ${straddled.first} whose marker is at ${straddled.end} in the final log`,
            );
          }
        }
      }
      for (const [off, v] of this.ackedAt[p]!) {
        if (records.get(off) !== v) this.o.flag(`acknowledged transactional write ${topic}-${p} offset ${off} ("${v}") holds ${records.has(off) ? `"${records.get(off)}"` : 'nothing'} at the end`);
      }
      for (const [off, v] of this.consumedAt[p]!) {
        if (records.get(off) !== v) this.o.flag(`read_committed consumer read "${v}" at ${topic}-${p} offset ${off}, but the log holds ${records.has(off) ? `"${records.get(off)}"` : 'nothing'} there`);
      }
    }
    for (const [k, perPartition] of outcomes) {
      const types = new Set(perPartition.values());
      const t = this.txns.get(k);
      if (types.size > 1) this.o.flag(`transaction ${k} is not atomic: ${[...perPartition].map(([p, x]) => `${x} on ${topic}-${p}`).join(', ')}`);
      if (types.has('open')) this.o.flag(`transaction ${k} is still open at the end on ${topic}-${[...perPartition].find(([, x]) => x === 'open')![0]}`);
      if (t?.commitAcked && !types.has('commit')) this.o.flag(`transaction ${k}: its commit was acknowledged but its marker is ${[...types].join('/')}`);
      if (t?.abortAcked && !types.has('abort')) this.o.flag(`transaction ${k}: its abort was acknowledged but its marker is ${[...types].join('/')}`);
    }
    for (const [k, t] of this.txns) {
      const committed = outcomes.get(k);
      if (t.commitAcked) {
        for (const [v, p] of t.sent) if (!inLog.has(v)) this.o.flag(`transaction ${k} was committed (acknowledged) but its record "${v}" (${topic}-${p}) is not in the log`);
      }
      // read_committed saw all of a committed transaction and nothing of an aborted one.
      const isCommit = committed !== undefined && [...committed.values()].every((x) => x === 'commit');
      for (const [v] of t.sent) {
        const at = inLog.get(v);
        if (!at) continue;
        const seen = this.consumedAt[at.partition]!.get(at.offset) === v;
        if (isCommit && !seen) this.o.flag(`read_committed consumer never read "${v}" (${topic}-${at.partition} offset ${at.offset}) of committed transaction ${k}`);
        if (!isCommit && seen) this.o.flag(`read_committed consumer read "${v}" (${topic}-${at.partition} offset ${at.offset}) of transaction ${k}, which did not commit`);
      }
    }
    this.o.note(`final ${topic}: ${this.committed} transactions committed, ${this.aborted} aborted, ${this.unknown} unanswered; ${this.consumedCount} records read_committed`);
  }
}
