/**
 * The invariants of a simulated run, the same ones the real-process fault
 * tests check, plus what only a simulator can see at every step (each
 * replica's own view of its leadership):
 *
 * - at most one leader per partition epoch (the controller's records and
 *   each replica's own belief); the ISR always contains the leader; a
 *   leader's HW never exceeds the log end of a live member of its ISR; a
 *   new leader comes from the previous ISR or its eligible replicas;
 * - each acknowledged {partition, offset} holds the acknowledged value, and
 *   no two acknowledgments name one offset with different values;
 * - no acknowledged write is lost (topics are flush.policy=always, acks=all,
 *   min.insync.replicas=2, no unclean election: the promise is "never");
 * - no offset below the high watermark holds two values on two replicas;
 * - a consumer reads only records of the committed log (never above the HW),
 *   each partition's offsets in order without gaps or repeats within its session;
 * - the idempotent producer never duplicates, and its records keep their
 *   send order in each partition;
 * - a consumer group (one member at a time, explicit commits) resumes at its
 *   committed offsets: never below a commit it was answered (committed
 *   offsets never move backwards), never above every commit it tried (it
 *   never skips), and is given every offset below its last commit;
 * - liveness after the heal: every partition has a leader and a full ISR,
 *   every send is answered and the consumer reaches the HW, within a bound.
 */
import type { PartitionRecord } from '@mq/broker/internal';
import type { SimBroker } from './sim-broker.js';

export class SimViolation extends Error {}

export interface Acked {
  producer: string;
  idempotent: boolean;
  partition: number;
  offset: number;
  value: string;
}

export interface CheckerOptions {
  topic: string;
  partitions: number;
  brokers: readonly SimBroker[];
  note: (line: string) => void;
}

export class ClusterChecker {
  violation: string | undefined;
  ackedCount = 0;
  consumedCount = 0;
  leaderChanges = 0;
  groupReads = 0;
  groupCommits = 0;
  groupSessions = 0;
  private readonly ackedList: Acked[] = [];
  private readonly ackedAt: Map<number, string>[];
  private readonly consumedAt: Map<number, string>[];
  private readonly lastConsumed: number[];
  /** `${partition}@${epoch}` -> the broker that led it. */
  private readonly epochLeader = new Map<string, number>();
  private readonly lastLeader: number[];
  private readonly idempotentProducers = new Set<string>();
  private readonly watched = new WeakSet<object>();
  /** Per partition: the highest commit answered, the highest tried (answered or not), what the group was given. */
  private readonly groupAcked: number[];
  private readonly groupPossible: number[];
  private readonly groupDelivered: Map<number, string>[];
  private readonly groupFirst = new Set<number>();

  constructor(private readonly o: CheckerOptions) {
    this.ackedAt = Array.from({ length: o.partitions }, () => new Map());
    this.consumedAt = Array.from({ length: o.partitions }, () => new Map());
    this.lastConsumed = Array.from({ length: o.partitions }, () => -1);
    this.lastLeader = Array.from({ length: o.partitions }, () => -1);
    this.groupAcked = Array.from({ length: o.partitions }, () => -1);
    this.groupPossible = Array.from({ length: o.partitions }, () => -1);
    this.groupDelivered = Array.from({ length: o.partitions }, () => new Map());
  }

  private fail(message: string): never {
    this.violation ??= message;
    throw new SimViolation(message);
  }

  /** Records a violation found in a callback (where throwing would only reject a client's promise). */
  private flag(message: string): void {
    this.violation ??= message;
    this.o.note(`VIOLATION ${message}`);
  }

  /** poll(timeout) answered empty without waiting (counted; the trace notes the first). */
  emptyPollsAtOnce = 0;
  emptyPollAtOnce(): void {
    if (this.emptyPollsAtOnce++ === 0) this.o.note('a poll() answered empty without waiting its timeout');
  }

  /** A violation found by another checker (the transactional one): recorded here, where the run looks. */
  flagFrom(message: string): void {
    this.flag(message);
  }

  harnessError(message: string): void {
    this.flag(`harness error: ${message}`);
  }

  sent(_producer: string, _partition: number, _value: string): void {}

  failed(producer: string, partition: number, value: string, why: string): void {
    this.o.note(`send failed ${producer} p${partition} ${value}: ${why}`);
  }

  acked(a: Acked): void {
    this.ackedCount++;
    if (a.idempotent) this.idempotentProducers.add(a.producer);
    const prior = this.ackedAt[a.partition]!.get(a.offset);
    if (prior !== undefined && prior !== a.value) this.flag(`two acknowledgments of ${this.o.topic}-${a.partition} offset ${a.offset}: "${prior}" and "${a.value}"`);
    this.ackedAt[a.partition]!.set(a.offset, a.value);
    this.ackedList.push(a);
  }

  consumed(partition: number, offset: number, value: string): void {
    this.consumedCount++;
    const last = this.lastConsumed[partition]!;
    if (offset !== last + 1) this.flag(`consumer of ${this.o.topic}-${partition} read offset ${offset} after ${last} (a gap, a repeat or a step back within one session)`);
    this.lastConsumed[partition] = offset;
    this.consumedAt[partition]!.set(offset, value);
  }

  /**
   * Every metadata record each broker applies, in order: a new leader comes
   * from the previous record's ISR (or its eligible replicas, KIP-966), never
   * from outside it (the topic does not allow unclean election).
   */
  private watch(b: SimBroker): void {
    const node = b.node!;
    if (this.watched.has(node)) return;
    this.watched.add(node);
    const last: (PartitionRecord | undefined)[] = [];
    const seen = () => node.controller.metadata.topic(this.o.topic)?.partitions ?? [];
    seen().forEach((r, p) => (last[p] = r));
    node.controller.metadata.onChange(() => {
      seen().forEach((rec, p) => {
        const prev = last[p];
        last[p] = rec;
        if (!prev || rec.leaderEpoch <= prev.leaderEpoch || rec.leader <= 0 || rec.leader === prev.leader) return;
        const eligible = new Set([...prev.isr, ...(prev.elr ?? []), ...(prev.leftIsr ?? [])]);
        if (!eligible.has(rec.leader)) {
          this.flag(`broker ${b.id} applied an election of ${rec.leader} for ${this.o.topic}-${p} (epoch ${rec.leaderEpoch}) from outside the previous ISR [${prev.isr.join(',')}] (elr [${(prev.elr ?? []).join(',')}]): an unclean election`);
        }
      });
    });
  }

  /** A new group member starts: the first record it gets of each partition is where the group resumes. */
  groupSession(): void {
    this.groupSessions++;
    this.groupFirst.clear();
  }

  groupConsumed(partition: number, offset: number, value: string): void {
    this.groupReads++;
    this.groupDelivered[partition]!.set(offset, value);
    if (this.groupFirst.has(partition)) return;
    this.groupFirst.add(partition);
    const acked = this.groupAcked[partition]!;
    const possible = this.groupPossible[partition]!;
    if (offset < acked) this.flag(`group resumed ${this.o.topic}-${partition} at offset ${offset}, below the commit of ${acked} it had been answered (a committed offset moved backwards)`);
    else if (offset > Math.max(possible, 0) && !(possible < 0 && offset === 0)) {
      this.flag(`group resumed ${this.o.topic}-${partition} at offset ${offset}, above every offset it tried to commit (${possible}): it skipped records`);
    }
  }

  /** A commit of `offsets` answered (ok) or failed (its outcome unknown: it may have been applied). */
  groupCommitted(offsets: readonly { partition: number; offset: number }[], ok: boolean): void {
    for (const { partition, offset } of offsets) {
      if (ok) this.groupAcked[partition] = Math.max(this.groupAcked[partition]!, offset);
      if (ok) this.groupCommits++;
      this.groupPossible[partition] = Math.max(this.groupPossible[partition]!, offset);
    }
  }

  /** The continuous checks (every 100 simulated ms). */
  check(): void {
    const { topic } = this.o;
    for (const b of this.o.brokers) {
      const node = b.alive ? b.node : undefined;
      if (!node) continue;
      this.watch(b);
      for (let p = 0; p < this.o.partitions; p++) {
        const h = node.replicas.hostedPartition(topic, p);
        if (h?.role === 'leader') {
          this.claim(p, h.leaderEpoch, b.id, `broker ${b.id} believes it leads`);
          if (h.leader) this.checkHighWatermark(b.id, p, h.leader.highWatermark, h.leader.isr, h.leaderEpoch);
        }
      }
      if (!node.controller.isActive) continue;
      // Every topic's leader is in its ISR (the transactional and the internal topics' too).
      for (const other of node.controller.metadata.topics()) {
        if (other.name === topic) continue;
        other.partitions.forEach((rec, p) => {
          if (rec.leader > 0 && !rec.isr.includes(rec.leader)) this.fail(`controller ${b.id}: ${other.name}-${p} leader ${rec.leader} (epoch ${rec.leaderEpoch}) is not in its ISR [${rec.isr.join(',')}]`);
        });
      }
      const t = node.controller.metadata.topic(topic);
      if (!t) continue;
      t.partitions.forEach((rec, p) => {
        if (rec.leader > 0) {
          this.claim(p, rec.leaderEpoch, rec.leader, `controller ${b.id} records`);
          if (!rec.isr.includes(rec.leader)) this.fail(`controller ${b.id}: ${topic}-${p} leader ${rec.leader} (epoch ${rec.leaderEpoch}) is not in its ISR [${rec.isr.join(',')}]`);
        }
        if (rec.leader !== this.lastLeader[p]) {
          this.leaderChanges++;
          this.o.note(`${topic}-${p}: leader ${rec.leader} epoch ${rec.leaderEpoch} isr [${rec.isr.join(',')}]`);
          this.lastLeader[p] = rec.leader;
        }
      });
    }
  }

  /**
   * A leader's HW never exceeds the log end of a live member of its ISR: the
   * HW is what every ISR member holds (only a simulator sees both sides at once).
   */
  private checkHighWatermark(leaderId: number, partition: number, hw: number, isr: readonly number[], epoch: number): void {
    for (const id of isr) {
      if (id === leaderId) continue;
      const f = this.o.brokers.find((b) => b.id === id);
      const log = f?.alive ? f.node?.replicas.hostedPartition(this.o.topic, partition)?.log : undefined;
      if (log && log.logEndOffset < hw) {
        this.fail(`${this.o.topic}-${partition}: leader ${leaderId} (epoch ${epoch}) has HW ${hw} but ISR member ${id} holds only up to ${log.logEndOffset}`);
      }
    }
  }

  private claim(partition: number, epoch: number, leader: number, who: string): void {
    const k = `${partition}@${epoch}`;
    const prior = this.epochLeader.get(k);
    if (prior === undefined) this.epochLeader.set(k, leader);
    else if (prior !== leader) this.fail(`two leaders of ${this.o.topic}-${partition} in epoch ${epoch}: ${prior} and ${leader} (${who})`);
  }

  private activeTopic(topicName: string = this.o.topic) {
    const active = this.o.brokers.find((b) => b.alive && b.node?.controller.isActive);
    return active ? { active, topic: active.node!.controller.metadata.topic(topicName) } : undefined;
  }

  /** Every partition led, with its whole replica set in the ISR, and every replica at the leader's HW and log end. */
  converged(topicName: string = this.o.topic): boolean {
    const a = this.activeTopic(topicName);
    if (!a?.topic) return false;
    return a.topic.partitions.every((rec, p) => {
      if (rec.leader <= 0 || rec.isr.length !== rec.replicas.length) return false;
      const leader = this.o.brokers.find((b) => b.id === rec.leader)?.node?.replicas;
      const hw = leader?.highWatermarkOf(topicName, p);
      const leo = leader?.hostedPartition(topicName, p)?.log.logEndOffset;
      if (hw === undefined || leo !== hw) return false;
      return rec.replicas.every((r) => this.o.brokers.find((b) => b.id === r)?.node?.replicas.highWatermarkOf(topicName, p) === hw);
    });
  }

  describe(): string {
    const a = this.activeTopic();
    if (!a?.topic) return 'no active controller';
    return a.topic.partitions.map((rec, p) => `p${p} leader ${rec.leader} isr [${rec.isr.join(',')}] of [${rec.replicas.join(',')}]`).join('; ');
  }

  /** Where the consumer is in each partition against its leader's HW (for the liveness message). */
  describeConsumer(): string {
    const a = this.activeTopic();
    if (!a?.topic) return 'no active controller';
    return a.topic.partitions.map((rec, p) => `p${p} consumed to ${this.lastConsumed[p]! + 1} of HW ${this.o.brokers.find((b) => b.id === rec.leader)?.node?.replicas.highWatermarkOf(this.o.topic, p) ?? '?'} (leader ${rec.leader})`).join('; ');
  }

  consumerCaughtUp(): boolean {
    const a = this.activeTopic();
    if (!a?.topic) return false;
    return a.topic.partitions.every((rec, p) => {
      const hw = this.o.brokers.find((b) => b.id === rec.leader)?.node?.replicas.highWatermarkOf(this.o.topic, p);
      return hw !== undefined && this.lastConsumed[p]! + 1 >= hw;
    });
  }

  /**
   * The end: every replica's log compared with the leader's below the leader's HW, and every acknowledged and
   * consumed record looked up. Call it right after `converged()` held (the leadership may have moved while the
   * consumers stopped: a leader that has just taken over may not know the HW yet).
   */
  async finalCheck(read: (b: SimBroker, partition: number, below?: number) => Promise<{ hw: number; records: Map<number, string> }>): Promise<void> {
    const { topic } = this.o;
    const a = this.activeTopic();
    if (!a?.topic) this.fail('no active controller at the end');
    for (let p = 0; p < this.o.partitions; p++) {
      const rec = a.topic.partitions[p]!;
      const leader = this.o.brokers.find((b) => b.id === rec.leader)!;
      const ref = await read(leader, p);
      for (let off = 0; off < ref.hw; off++) if (!ref.records.has(off)) this.fail(`${topic}-${p}: leader ${leader.id} has no record at offset ${off} below its HW ${ref.hw}`);
      for (const r of rec.replicas) {
        if (r === rec.leader) continue;
        // Below the leader's HW, whatever this replica's own HW says (a follower learns the HW a fetch later).
        const other = await read(this.o.brokers.find((b) => b.id === r)!, p, ref.hw);
        for (const [off, v] of other.records) {
          const want = ref.records.get(off);
          if (want !== v) this.fail(`${topic}-${p} offset ${off} holds "${v}" on broker ${r} and "${want}" on leader ${leader.id} (below the HW)`);
        }
      }
      for (const [off, v] of this.ackedAt[p]!) {
        const got = ref.records.get(off);
        if (got === undefined) this.fail(`acknowledged write lost: ${topic}-${p} offset ${off} ("${v}") is not in the log (HW ${ref.hw})`);
        if (got !== v) this.fail(`acknowledged ${topic}-${p} offset ${off} as "${v}" but it holds "${got}"`);
      }
      for (const [off, v] of this.consumedAt[p]!) {
        const got = ref.records.get(off);
        if (got !== v) this.fail(`consumer read "${v}" at ${topic}-${p} offset ${off}, but the committed log holds ${got === undefined ? 'nothing' : `"${got}"`} there (read above the HW?)`);
      }
      const delivered = this.groupDelivered[p]!;
      for (let off = 0; off < this.groupAcked[p]!; off++) {
        if (!delivered.has(off)) this.fail(`the group committed ${topic}-${p} up to ${this.groupAcked[p]} but was never given offset ${off} (it skipped a record)`);
      }
      for (const [off, v] of delivered) {
        const got = ref.records.get(off);
        if (got !== v) this.fail(`the group read "${v}" at ${topic}-${p} offset ${off}, but the committed log holds ${got === undefined ? 'nothing' : `"${got}"`} there`);
      }
      const seen = new Map<string, number>();
      const lastSeq = new Map<string, number>();
      for (let off = 0; off < ref.hw; off++) {
        const v = ref.records.get(off)!;
        const [producer, seqText] = v.split(':');
        if (!producer || !this.idempotentProducers.has(producer)) continue;
        if (seen.has(v)) this.fail(`idempotent producer duplicated "${v}" in ${topic}-${p}: offsets ${seen.get(v)} and ${off}`);
        seen.set(v, off);
        const seq = Number(seqText);
        if (seq < (lastSeq.get(producer) ?? -1)) this.fail(`${topic}-${p}: "${v}" at offset ${off} after a later record of ${producer} (order)`);
        lastSeq.set(producer, seq);
      }
      this.o.note(`final ${topic}-${p}: HW ${ref.hw}, ${rec.replicas.length} replicas agree, ${this.ackedAt[p]!.size} acknowledged and ${this.consumedAt[p]!.size} consumed records found`);
    }
  }
}
