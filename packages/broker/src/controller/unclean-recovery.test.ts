/**
 * Unclean recovery in the metadata state machine, as scripts of committed
 * commands: who is elected when a partition's whole ISR went down and the
 * candidates restarted after an unclean shutdown, and when.
 */
import type { MetadataCommand } from './commands.js';
import { decodeCommand, encodeCommand } from './commands.js';
import { MetadataState } from './metadata-state.js';
import { RecoveryWaits } from './recovery-waits.js';
import type { MetadataDelta } from './types.js';

function cluster(configs: Record<string, string> = { 'min.insync.replicas': '2' }) {
  const s = new MetadataState();
  let index = 0;
  const deltas: MetadataDelta[] = [];
  s.onChange((d) => deltas.push(d));
  const run = (cmd: MetadataCommand) => s.applyCommand(decodeCommand(encodeCommand(cmd)), ++index);
  const runs = new Map<number, number>();
  /** A (re)start of broker `id`: a new run, clean or not. */
  const register = (id: number, cleanShutdown = false, flushAlways = false) => {
    const n = (runs.get(id) ?? 0) + 1;
    runs.set(id, n);
    return run({ type: 'registerBroker', id, host: '127.0.0.1', port: 9000 + id, httpPort: 8000 + id, rack: '', incarnation: `run-${id}-${n}`, cleanShutdown, flushAlways });
  };
  const epochOf = (id: number) => s.broker(id)!.brokerEpoch;
  const unfence = (id: number) => run({ type: 'unfenceBroker', id, brokerEpoch: epochOf(id) });
  const fence = (id: number) => run({ type: 'fenceBroker', id, brokerEpoch: epochOf(id), reason: 'not heard from' });
  const report = (id: number, lastEpoch: number, endOffset: number) =>
    run({ type: 'reportLogEnds', brokerId: id, brokerEpoch: epochOf(id), partitions: [{ topic: 't', partition: 0, lastEpoch, endOffset }] });
  const part = () => s.topic('t')!.partitions[0]!;
  for (const id of [1, 2, 3]) {
    register(id);
    unfence(id);
  }
  run({ type: 'createTopic', name: 't', topicId: 'id-t', numPartitions: 1, replicationFactor: 3, configs });
  const [a, b, c] = part().replicas as [number, number, number];
  const recoveries = () => deltas.flatMap((d) => d.recoveryElections);
  return { s, run, register, unfence, fence, report, part, a, b, c, recoveries };
}

describe('unclean recovery (KIP-966 in spirit)', () => {
  it('whole-ISR power loss: the restarted candidates report their log ends and the longest log is elected, not the last ISR member', () => {
    const h = cluster();
    const { a, b, c } = h;
    // Every broker dies at once; the metadata quorum comes back with a and b, which register as new (unclean) runs.
    h.register(a);
    h.register(b);
    // a left first (the rest could still commit: last ISR), b second (the rest fell below min.insync: ELR); c is the last ISR member.
    expect(h.part()).toMatchObject({ isr: [c], leftIsr: [a], elr: [b], leader: c });
    h.fence(c); // c's old run is silent
    expect(h.part()).toMatchObject({ isr: [c], leader: -1 });
    h.unfence(a);
    h.unfence(b);
    expect(h.part().leader).toBe(-1); // no trusted ISR member: waiting for log ends
    h.report(a, 0, 2000);
    h.report(b, 0, 1800);
    expect(h.part().leader).toBe(-1); // c not heard from yet
    expect(h.s.pendingRecoveries()).toEqual([{ topic: 't', topicId: 'id-t', partition: 0, leaderEpoch: h.part().leaderEpoch, candidates: [a, b, c], missing: [c], fenced: [], electable: true }]);
    // c comes back, uncleanly, with the shortest log: the naive choice (it is the ISR) would lose 400 acknowledged records.
    h.register(c);
    expect(h.part()).toMatchObject({ isr: [c], unverified: [c] });
    h.unfence(c);
    expect(h.part().leader).toBe(-1);
    const before = h.part();
    h.report(c, 0, 1600);
    const after = h.part();
    expect(after).toMatchObject({ leader: a, isr: [a], leaderEpoch: before.leaderEpoch + 1, partitionEpoch: before.partitionEpoch + 1 });
    expect(after.elr ?? after.leftIsr ?? after.unverified ?? after.logEnds).toBeUndefined();
    expect(after.recovery).toEqual({ leaderEpoch: after.leaderEpoch, lastEpoch: 0, endOffset: 2000, missing: [] });
    expect(h.recoveries()).toEqual([
      expect.objectContaining({ topic: 't', partition: 0, leader: a, leaderEpoch: after.leaderEpoch, lastEpoch: 0, endOffset: 2000, missing: [] }),
    ]);
    expect(h.s.pendingRecoveries()).toEqual([]);
  });

  it('a newer leader epoch beats a longer log; ties go to the preferred replica', () => {
    const h = cluster();
    const { a, b, c } = h;
    h.register(a);
    h.register(b);
    h.register(c);
    for (const id of [a, b, c]) h.unfence(id);
    h.report(a, 4, 5000);
    h.report(b, 5, 100);
    h.report(c, 5, 100);
    expect(h.part().leader).toBe(b);
  });

  it('regression (issue 12): the longest log counts when its broker reports before it is unfenced; the election waits for the unfencing', () => {
    const h = cluster();
    const { a, b, c } = h;
    // Every broker died; they restart uncleanly. b registers (fenced until it catches up with the metadata) and reports at once.
    h.register(a);
    h.register(b);
    h.fence(c);
    h.unfence(a);
    h.report(a, 0, 281);
    h.report(b, 0, 283);
    h.register(c);
    h.unfence(c);
    h.report(c, 0, 281);
    // Every candidate reported: electing among the unfenced ones now would truncate b's 2 records.
    expect(h.part().leader).toBe(-1);
    expect(h.s.pendingRecoveries()).toEqual([expect.objectContaining({ missing: [], fenced: [b], electable: true })]);
    h.unfence(b);
    expect(h.part()).toMatchObject({ leader: b, isr: [b], recovery: { lastEpoch: 0, endOffset: 283, missing: [] } });
    expect(h.recoveries()).toEqual([expect.objectContaining({ leader: b, endOffset: 283, missing: [] })]);
  });

  it('a longest log still fenced when the wait is over: the best live reporter is elected and the fenced one named as missing', () => {
    const h = cluster();
    const { a, b, c } = h;
    h.register(a);
    h.register(b);
    h.fence(c);
    h.unfence(a);
    h.report(a, 0, 281);
    h.report(b, 0, 283);
    h.register(c);
    h.unfence(c);
    h.report(c, 0, 282);
    expect(h.part().leader).toBe(-1);
    expect(h.run({ type: 'electRecovered', topic: 't', partition: 0, leaderEpoch: h.part().leaderEpoch })).toEqual({ ok: true, value: { leader: c } });
    expect(h.recoveries()).toEqual([expect.objectContaining({ leader: c, endOffset: 282, missing: [b] })]);
  });

  it('when the wait is over, electRecovered elects the best reported candidate and names the missing ones', () => {
    const h = cluster();
    const { a, b, c } = h;
    h.register(a);
    h.register(b);
    h.fence(c);
    h.unfence(a);
    h.unfence(b);
    h.report(a, 0, 1900);
    h.report(b, 0, 2000);
    const epoch = h.part().leaderEpoch;
    // A stale command (another leader epoch) changes nothing.
    expect(h.run({ type: 'electRecovered', topic: 't', partition: 0, leaderEpoch: epoch + 7 })).toEqual({ ok: true, value: { leader: -1 } });
    expect(h.run({ type: 'electRecovered', topic: 't', partition: 0, leaderEpoch: epoch })).toEqual({ ok: true, value: { leader: b } });
    expect(h.part()).toMatchObject({ leader: b, isr: [b], recovery: { leaderEpoch: epoch + 1, lastEpoch: 0, endOffset: 2000, missing: [c] } });
    expect(h.recoveries()).toEqual([expect.objectContaining({ leader: b, endOffset: 2000, missing: [c] })]);
    // The next ordinary election forgets it.
    h.fence(b);
    h.register(a, true);
    h.unfence(a);
    h.unfence(b);
    expect(h.part().recovery).toBeUndefined();
  });

  it('a replica that left the ISR while the rest could still commit is compared, but never elected on a timeout alone', () => {
    const h = cluster();
    const { a, b, c } = h;
    h.fence(a); // the ISR b, c carries on committing without a
    h.fence(b);
    h.fence(c);
    expect(h.part()).toMatchObject({ isr: [c], leftIsr: [a], elr: [b], leader: -1 });
    h.register(a);
    h.unfence(a);
    h.report(a, 0, 500);
    expect(h.s.pendingRecoveries()).toEqual([expect.objectContaining({ missing: [b, c], electable: false })]);
    expect(h.run({ type: 'electRecovered', topic: 't', partition: 0, leaderEpoch: h.part().leaderEpoch })).toEqual({ ok: true, value: { leader: -1 } });
    // b (ELR: it has every acks=all commit) comes back: now a timeout may elect the longer of a and b.
    h.register(b);
    h.unfence(b);
    h.report(b, 0, 900);
    expect(h.s.pendingRecoveries()).toEqual([expect.objectContaining({ missing: [c], electable: true })]);
    h.run({ type: 'electRecovered', topic: 't', partition: 0, leaderEpoch: h.part().leaderEpoch });
    expect(h.part().leader).toBe(b);
  });

  it('a last ISR member that shut down cleanly, or whose topic flushes always, is trusted and elected at once, as before', () => {
    for (const [clean, configs] of [
      [true, { 'min.insync.replicas': '2' }],
      [false, { 'min.insync.replicas': '2', 'flush.policy': 'always' }],
    ] as const) {
      const h = cluster({ ...configs });
      const { a, b, c } = h;
      h.fence(a);
      h.fence(b);
      h.fence(c);
      h.register(c, clean);
      expect(h.part().unverified).toBeUndefined();
      h.unfence(c);
      expect(h.part()).toMatchObject({ leader: c, isr: [c] });
      expect(h.recoveries()).toEqual([]);
    }
    // The broker's own default flush policy counts when the topic sets none.
    const h = cluster();
    h.fence(h.a);
    h.fence(h.b);
    h.fence(h.c);
    h.register(h.c, false, true);
    h.unfence(h.c);
    expect(h.part().leader).toBe(h.c);
  });

  it('a single unclean last ISR member with no other candidate is elected once it reports', () => {
    const h = cluster({});
    const { a, b, c } = h;
    h.fence(a);
    h.fence(b);
    h.fence(c);
    // Without min.insync.replicas, both left as last ISR; they never come back within the wait.
    h.register(c);
    h.unfence(c);
    expect(h.part().leader).toBe(-1);
    h.report(c, 0, 10);
    expect(h.s.pendingRecoveries()).toEqual([expect.objectContaining({ missing: [a, b], electable: true })]);
    h.run({ type: 'electRecovered', topic: 't', partition: 0, leaderEpoch: h.part().leaderEpoch });
    expect(h.part()).toMatchObject({ leader: c, isr: [c] });
  });

  it('reports count only from the current run of a candidate, only while the partition has no leader', () => {
    const h = cluster();
    const { a, b, c } = h;
    // With a leader, a report is ignored.
    expect(h.report(a, 0, 1)).toEqual({ ok: true, value: { accepted: 0 } });
    h.register(a);
    h.register(b);
    h.fence(c);
    h.unfence(a);
    h.report(a, 0, 3000);
    // a restarts again (its log may have changed): its report is gone, and the old run's epoch is refused.
    const stale = h.s.broker(a)!.brokerEpoch;
    h.register(a);
    expect(h.part().logEnds).toBeUndefined();
    expect(h.run({ type: 'reportLogEnds', brokerId: a, brokerEpoch: stale, partitions: [{ topic: 't', partition: 0, lastEpoch: 0, endOffset: 3000 }] })).toMatchObject({
      ok: false,
      code: 'STALE_BROKER_EPOCH',
    });
  });

  it('a report about the log of another incarnation of the topic (deleted and created again) is ignored', () => {
    const h = cluster();
    const { a, b, c } = h;
    h.register(a);
    h.register(b);
    h.fence(c);
    h.unfence(a);
    const reportFor = (topicId: string) =>
      h.run({ type: 'reportLogEnds', brokerId: a, brokerEpoch: h.s.broker(a)!.brokerEpoch, partitions: [{ topic: 't', topicId, partition: 0, lastEpoch: 0, endOffset: 3000 }] });
    expect(reportFor('id-deleted')).toEqual({ ok: true, value: { accepted: 0 } });
    expect(h.part().logEnds).toBeUndefined();
    expect(reportFor('id-t')).toEqual({ ok: true, value: { accepted: 1 } });
  });

  it('electRecovered for a deleted incarnation of the topic elects nothing in the new one', () => {
    const h = cluster();
    const { a, b, c } = h;
    h.register(a);
    h.register(b);
    h.fence(c);
    h.unfence(a);
    h.unfence(b);
    h.report(b, 0, 2000); // b is an ELR member: electable once the wait is over (c never reports)
    const waiting = h.part();
    expect(waiting.leader).toBe(-1);
    const elect = (topicId: string) => h.run({ type: 'electRecovered', topic: 't', topicId, partition: 0, leaderEpoch: waiting.leaderEpoch });
    expect(elect('id-deleted')).toEqual({ ok: true, value: { leader: -1 } });
    expect(h.part().leader).toBe(-1);
    expect(elect('id-t')).toEqual({ ok: true, value: { leader: b } });
  });

  it('a member the leader lets back into the ISR is no longer a recovery candidate of its own; a full ISR clears them all', () => {
    const h = cluster();
    const { a, b, c } = h;
    h.fence(b);
    h.fence(c);
    expect(h.part()).toMatchObject({ isr: [a], leftIsr: [b], elr: [c], leader: a });
    h.register(b);
    h.unfence(b);
    const p = h.part();
    h.run({ type: 'alterPartition', topic: 't', partition: 0, leaderId: a, leaderEpoch: p.leaderEpoch, partitionEpoch: p.partitionEpoch, isr: [a, b] });
    expect(h.part()).toMatchObject({ isr: [a, b], elr: [c] });
    expect(h.part().leftIsr).toBeUndefined();
    h.register(c);
    h.unfence(c);
    const q = h.part();
    h.run({ type: 'alterPartition', topic: 't', partition: 0, leaderId: a, leaderEpoch: q.leaderEpoch, partitionEpoch: q.partitionEpoch, isr: [a, b, c] });
    expect(h.part().elr).toBeUndefined();
  });

  it('bad reportLogEnds and electRecovered commands are refused with a typed error', () => {
    expect(() => decodeCommand(Buffer.from(JSON.stringify({ type: 'reportLogEnds', brokerId: 1, brokerEpoch: 1, partitions: [{ topic: 't', partition: 0, lastEpoch: -2, endOffset: 0 }] })))).toThrow(
      /lastEpoch must be an integer >= -1/,
    );
    expect(() => decodeCommand(Buffer.from(JSON.stringify({ type: 'electRecovered', topic: 't', partition: 0 })))).toThrow(/leaderEpoch/);
    expect(() => decodeCommand(Buffer.from(JSON.stringify({ type: 'registerBroker', id: 1, host: 'h', port: 1, httpPort: 2, rack: '', incarnation: 'x', cleanShutdown: 'yes' })))).toThrow(/cleanShutdown must be a boolean/);
  });

  it('the metadata survives a snapshot with the recovery state', () => {
    const h = cluster();
    h.register(h.a);
    h.register(h.b);
    h.fence(h.c);
    h.unfence(h.a);
    h.report(h.a, 0, 10);
    const copy = new MetadataState();
    copy.restore(h.s.snapshot(), 99);
    expect(copy.topic('t')).toEqual(h.s.topic('t'));
    expect(copy.pendingRecoveries()).toEqual(h.s.pendingRecoveries());
  });
});

describe('RecoveryWaits (the active controller clock, injected)', () => {
  const pending = (over: Partial<{ leaderEpoch: number; electable: boolean; topicId: string }> = {}) => ({ topic: 't', topicId: 'id-t', partition: 0, leaderEpoch: 3, candidates: [1, 2, 3], missing: [3], fenced: [], electable: true, ...over });

  it('waits unclean.recovery.wait.ms from when it first saw the partition waiting, then elects once', () => {
    const w = new RecoveryWaits(5000);
    expect(w.round([pending()], 1000)).toEqual({ started: [pending()], due: [] });
    expect(w.round([pending()], 5999)).toEqual({ started: [], due: [] });
    expect(w.round([pending()], 6000)).toEqual({ started: [], due: [pending()] });
    // Still pending after the command (it was refused or lost): a new wait starts.
    expect(w.round([pending()], 6100)).toEqual({ started: [pending()], due: [] });
  });

  it('a new leader epoch restarts the wait; an unelectable partition keeps waiting; a resolved one is forgotten', () => {
    const w = new RecoveryWaits(1000);
    w.round([pending()], 0);
    expect(w.round([pending({ leaderEpoch: 4 })], 900).started).toHaveLength(1);
    expect(w.round([pending({ leaderEpoch: 4 })], 1800).due).toEqual([]);
    expect(w.round([pending({ leaderEpoch: 4, electable: false })], 5000).due).toEqual([]);
    expect(w.round([], 5001)).toEqual({ started: [], due: [] });
    expect(w.round([pending({ leaderEpoch: 4 })], 5002).started).toHaveLength(1);
  });

  it('a topic deleted and created again under the name (leader epoch 0 again) waits afresh: the old incarnation\'s wait does not count', () => {
    const w = new RecoveryWaits(1000);
    w.round([pending({ leaderEpoch: 0 })], 0);
    const recreated = pending({ leaderEpoch: 0, topicId: 'id-t-2' });
    expect(w.round([recreated], 900)).toEqual({ started: [recreated], due: [] });
    expect(w.round([recreated], 1500).due).toEqual([]);
    expect(w.round([recreated], 1900).due).toEqual([recreated]);
  });
});
