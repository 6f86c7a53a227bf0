/**
 * One seeded run of the whole cluster: N brokers in the combined layout
 * (each a controller voter and a broker), real @mq/client producers (plain
 * and idempotent, acks=all) and a consumer, faults from the seed for
 * `durationMs` of simulated time, then a heal and a settle phase, with the
 * invariants checked every 100 simulated ms and at the end.
 */
import { Rng } from '@mq/consensus/sim';
import { MqClient, type Producer, type Consumer, type ConsumerRecord } from '@mq/client';
import { decodeBatchSync, iterateBatches } from '@mq/protocol/batch';
import { ClusterChecker, SimViolation, type Acked } from './checker.js';
import { brokerHost, CLIENT_PORT, SimBroker } from './sim-broker.js';
import { SimNetwork } from './sim-network.js';
import { SimTime, type SimProcess } from './sim-time.js';
import { staleEpochRound } from './stale-epoch-script.js';
import { TxnChecker, txnValue } from './txn-checker.js';

export interface ClusterSimOptions {
  seed: number;
  brokers?: 3 | 5;
  /** Simulated ms of faulty operation (default 20,000). */
  durationMs?: number;
  /** Simulated ms after the heal within which every partition must have a leader and a full ISR and every send an answer. */
  settleMs?: number;
  partitions?: number;
  /** Faults on (default); off: a clean run (the checker's own test). */
  faults?: boolean;
  /** Keep the trace (faults, leader changes, broker warnings). */
  trace?: boolean;
  /**
   * The nemesis: `random` (default) picks a fault every 0.3-2.5 s; `stale-epoch` runs the scripted rounds of
   * `stale-epoch-script.ts` one after the other instead (one broker's metadata held back while a partition's
   * leadership goes away and back), over the same background noise of dropped, duplicated and slow messages.
   */
  script?: ClusterSimScript;
}

export type ClusterSimScript = 'random' | 'stale-epoch';

export interface ClusterSimResult {
  seed: number;
  ok: boolean;
  violation?: string;
  simulatedMs: number;
  events: number;
  acked: number;
  consumed: number;
  /** Records given to the consumer group, partition commits answered, group members (sessions). */
  groupReads: number;
  groupCommits: number;
  groupSessions: number;
  /** Transactions the transactional producer was answered committed / aborted, or neither; records read_committed. */
  txnCommitted: number;
  txnAborted: number;
  txnUnknown: number;
  txnConsumed: number;
  crashes: number;
  partitions: number;
  leaderChanges: number;
  trace: string[];
}

export const TOPIC = 'sim';
export const GROUP = 'sim-group';
const TOPIC_ID = 'c2ltLXRvcGljLWlkLTAwMQ';
/** The transactional pipeline's topic: only the transactional producer writes it. */
export const TXN_TOPIC = 'sim-txn';
const TXN_TOPIC_ID = 'c2ltLXR4bi10b3BpYy0wMDE';
export const TRANSACTIONAL_ID = 'sim-txn-producer';

/**
 * The workload's intensity per simulated second, chosen for speed (README: Speed): what costs is the real code
 * handling each frame, and the frames follow the produce requests (each wakes the followers' and the consumers' long
 * polls), not the records. So each producer sends a burst of 1-PRODUCE_BURST_MAX records (to random partitions, in
 * one request per leader after the producer's linger) every PRODUCE_PAUSE_MS, and the consumers ask for
 * CONSUMER_MIN_BYTES per fetch (answered at once when that much is there, else after the 500 ms long poll): a third
 * fewer events per simulated second than one record every 2-40 ms and answers at every record. Every re-introduced
 * bug of the README's table is still caught within the CI seeds.
 */
const PRODUCE_PAUSE_MS = [20, 300] as const;
const PRODUCE_BURST_MAX = 6;
const CONSUMER_MIN_BYTES = 2000;

interface ProducerRun {
  name: string;
  idempotent: boolean;
  producer: Producer;
  outstanding: number;
  seq: number;
}

export async function runClusterSimulation(o: ClusterSimOptions): Promise<ClusterSimResult> {
  const n = o.brokers ?? 3;
  const durationMs = o.durationMs ?? 20_000;
  const settleMs = o.settleMs ?? 30_000;
  const partitions = o.partitions ?? 3;
  const faults = o.faults ?? true;
  const rng = new Rng(o.seed);
  const time = new SimTime(rng.fork());
  const net = new SimNetwork(time, rng.fork());
  const faultRng = rng.fork();
  const workRng = rng.fork();
  const trace: string[] = [];
  const note = (line: string) => {
    if (o.trace || trace.length < 100_000) trace.push(`${String(time.elapsed()).padStart(7)} ${line}`);
  };
  const ids = Array.from({ length: n }, (_, i) => i + 1);
  const brokers = ids.map((id) => new SimBroker(id, ids, { time, net, rng: rng.fork(), logLine: (l) => note(`log ${l}`) }));
  const checker = new ClusterChecker({ topic: TOPIC, partitions, brokers, note });
  const txnChecker = new TxnChecker({ topic: TXN_TOPIC, partitions, brokers, time, note, flag: (m) => checker.flagFrom(m) });
  const result: ClusterSimResult = {
    seed: o.seed, ok: true, simulatedMs: 0, events: 0, acked: 0, consumed: 0, groupReads: 0, groupCommits: 0, groupSessions: 0,
    txnCommitted: 0, txnAborted: 0, txnUnknown: 0, txnConsumed: 0, crashes: 0, partitions, leaderChanges: 0, trace,
  };
  const uninstall = time.install();
  let done = false;
  const bootstrap = ids.map((id) => `${brokerHost(id)}:${CLIENT_PORT}`);
  const clients: { proc: SimProcess; client: MqClient }[] = [];
  const clientOf = (name: string): MqClient => {
    const proc: SimProcess = { name, alive: true };
    const client = time.within(proc, () => new MqClient({ bootstrap, clientId: name, requestTimeoutMs: 5000, connectTimeoutMs: 1000 }, { connect: net.connector(proc) }));
    clients.push({ proc, client });
    return client;
  };
  const startBroker = (b: SimBroker): void => {
    note(`start broker ${b.id} (run ${b.runs + 1})`);
    b.start().catch((err: unknown) => {
      if (b.alive) note(`broker ${b.id} failed to start: ${(err as Error).message}`);
    });
  };

  /** A workload loop's failure is the harness's, reported as such (never an unhandled rejection). */
  const harnessLoop = (name: string, p: Promise<void>): Promise<void> =>
    p.catch((err: unknown) => {
      checker.harnessError(`${name}: ${(err as Error).stack ?? String(err)}`);
    });

  let stage = 'start';
  const scenario = async (): Promise<void> => {
    for (const b of brokers) startBroker(b);
    // The quorum forms and every broker registers.
    await until(() => brokers.every((b) => b.node?.controller.metadata.broker(b.id)?.fenced === false), 30_000, 'the cluster never formed');
    const active = () => brokers.find((b) => b.node?.controller.isActive);
    await until(() => active() !== undefined, 10_000, 'no active controller');
    const leader = active()!;
    for (const [name, topicId] of [[TOPIC, TOPIC_ID], [TXN_TOPIC, TXN_TOPIC_ID]] as const) {
      await time.within(leader.proc, () =>
        leader.node!.controller.submit({ type: 'createTopic', name, topicId, numPartitions: partitions, replicationFactor: Math.min(3, n), configs: {} }, 10_000),
      );
      await until(() => brokers.every((b) => b.node?.controller.metadata.topic(name)?.partitions.every((p) => p.leader > 0)), 10_000, `topic ${name} got no leaders`);
      note(`topic ${name} created: ${partitions} partitions`);
    }

    // Continuous checks.
    const checkEvery = 100;
    const tick = (): void => {
      if (done) return;
      try {
        checker.check();
        txnChecker.check();
      } catch {
        return; // the violation is recorded; the run stops
      }
      time.schedule(checkEvery, tick, undefined);
    };
    time.schedule(checkEvery, tick, undefined);

    // Workload: an idempotent and a plain producer, acks=all; one consumer of every partition from offset 0.
    let producing = true;
    const runs: ProducerRun[] = [
      { name: 'p-idem', idempotent: true, producer: clientOf('p-idem').producer({ acks: 'all', idempotent: true, lingerMs: 2 }), outstanding: 0, seq: 0 },
      { name: 'p-plain', idempotent: false, producer: clientOf('p-plain').producer({ acks: 'all', idempotent: false, lingerMs: 2, maxInFlight: 1 }), outstanding: 0, seq: 0 },
    ];
    const producerLoops = runs.map((r, i) =>
      harnessLoop(r.name, time.within(clients[i]!.proc, async () => {
        while (producing) {
          await time.sleep(workRng.int(PRODUCE_PAUSE_MS[0], PRODUCE_PAUSE_MS[1]));
          for (let k = workRng.int(1, PRODUCE_BURST_MAX); k > 0; k--) {
            if (r.outstanding >= 40) continue;
            const partition = workRng.int(0, partitions - 1);
            const value = `${r.name}:${r.seq++}`;
            r.outstanding++;
            checker.sent(r.name, partition, value);
            r.producer.send(TOPIC, { value, partition }).then(
              (md) => {
                r.outstanding--;
                checker.acked({ producer: r.name, idempotent: r.idempotent, partition, offset: md.offset, value } satisfies Acked);
              },
              (err: unknown) => {
                r.outstanding--;
                checker.failed(r.name, partition, value, (err as Error).message);
              },
            );
          }
        }
      })),
    );
    const consumerClient = clientOf('consumer');
    const consumerProc = clients.at(-1)!.proc;
    let consuming = true;
    const consumer: Consumer = time.within(consumerProc, () => consumerClient.consumer({ minBytes: CONSUMER_MIN_BYTES }));
    /** One poll(300) of a workload consumer: its records (after an empty answer given at once, a pause so the loop yields); undefined when it failed (noted, after a pause). */
    const pollOnce = async (c: Consumer, name: string): Promise<ConsumerRecord[] | undefined> => {
      const polledAt = time.elapsed();
      let records;
      try {
        records = await c.poll(300);
      } catch (err) {
        note(`${name} poll failed: ${(err as Error).message}`);
        await time.sleep(100);
        return undefined;
      }
      if (records.length === 0 && time.elapsed() === polledAt) {
        checker.emptyPollAtOnce();
        await time.sleep(50);
      }
      return records;
    };
    const consumerLoop = harnessLoop('consumer', time.within(consumerProc, async () => {
      consumer.assign(Array.from({ length: partitions }, (_, p) => ({ topic: TOPIC, partition: p, offset: 0 })));
      while (consuming) {
        for (const r of (await pollOnce(consumer, 'consumer')) ?? []) checker.consumed(r.partition, r.offset, r.value?.toString('utf8') ?? '');
      }
    }));

    // A consumer group of one member at a time, committing what it polled; each session ends after 2-8 s and the
    // next member resumes from the committed offsets (so commits, their durability and resumption are exercised).
    const groupClient = clientOf('group');
    const groupProc = clients.at(-1)!.proc;
    let grouping = true;
    let groupStep = '';
    const groupLoop = harnessLoop('group', time.within(groupProc, async () => {
      while (grouping) {
        const gc = groupClient.consumer({ minBytes: CONSUMER_MIN_BYTES, groupId: GROUP, autoCommit: false, autoOffsetReset: 'earliest', sessionTimeoutMs: 3000, heartbeatIntervalMs: 1000 });
        gc.subscribe([TOPIC]);
        checker.groupSession();
        const sessionEnd = time.elapsed() + workRng.int(2000, 8000);
        while (grouping && time.elapsed() < sessionEnd) {
          let records;
          const polledAt = time.elapsed();
          try {
            groupStep = 'poll(300)';
            records = await gc.poll(300);
          } catch (err) {
            note(`group poll failed: ${(err as Error).message}`);
            await time.sleep(100);
            continue;
          }
          // poll(300) answered empty at once (no assignment yet): without a pause this loop would never yield.
          if (records.length === 0 && time.elapsed() === polledAt) {
            checker.emptyPollAtOnce();
            await time.sleep(50);
          }
          const next = new Map<number, number>();
          for (const r of records) {
            checker.groupConsumed(r.partition, r.offset, r.value?.toString('utf8') ?? '');
            next.set(r.partition, r.offset + 1);
          }
          if (next.size === 0) continue;
          const offsets = [...next].map(([partition, offset]) => ({ topic: TOPIC, partition, offset }));
          try {
            groupStep = `commit of ${JSON.stringify(offsets.map((x) => [x.partition, x.offset]))}`;
            await gc.commit(offsets);
            checker.groupCommitted(offsets, true);
          } catch (err) {
            checker.groupCommitted(offsets, false);
            note(`group commit failed: ${(err as Error).message}`);
          }
        }
        groupStep = 'close()';
        await gc.close().catch((err: unknown) => note(`group member close failed: ${(err as Error).message}`));
      }
    }));

    // The transactional pipeline: a transactional producer commits (70%) or aborts transactions of 1-6 records across
    // the partitions of TXN_TOPIC, one at a time; a read_committed consumer reads every partition from offset 0. A
    // fenced or stuck producer is closed and a new instance of the same transactional id takes over (InitProducerId
    // fences the old one and settles its open transaction).
    const txnClient = clientOf('p-txn');
    const txnProc = clients.at(-1)!.proc;
    let txnStep = '';
    const txnLoop = harnessLoop('p-txn', time.within(txnProc, async () => {
      const newProducer = () => txnClient.producer({ acks: 'all', transactionalId: TRANSACTIONAL_ID, transactionTimeoutMs: 10_000, lingerMs: 2 });
      let producer = newProducer();
      let k = 0;
      const replace = async (why: string) => {
        note(`p-txn: a new producer instance (${why})`);
        await producer.close().catch(() => undefined);
        producer = newProducer();
      };
      while (producing) {
        await time.sleep(workRng.int(5, 60));
        try {
          txnStep = 'beginTransaction()';
          await producer.beginTransaction();
        } catch (err) {
          note(`p-txn begin failed: ${(err as Error).message}`);
          if (producer.transactionState !== 'ready') await replace('begin failed');
          await time.sleep(100);
          continue;
        }
        const txn = ++k;
        txnChecker.begun(txn);
        const count = workRng.int(1, 6);
        for (let i = 0; i < count; i++) {
          const partition = workRng.int(0, partitions - 1);
          const value = txnValue(txn, i);
          txnChecker.sent(txn, partition, value);
          producer.send(TXN_TOPIC, { value, partition }).then(
            (md) => txnChecker.acked(partition, md.offset, value),
            (err: unknown) => note(`p-txn send ${value} p${partition} failed: ${(err as Error).message}`),
          );
          if (workRng.chance(0.5)) await time.sleep(workRng.int(1, 20));
        }
        const commit = workRng.chance(0.7);
        txnChecker.ending(txn, commit);
        try {
          txnStep = `${commit ? 'commit' : 'abort'}Transaction() of txn ${txn}`;
          if (commit) await producer.commitTransaction();
          else await producer.abortTransaction();
          txnChecker.ended(txn, commit ? 'committed' : 'aborted');
          continue;
        } catch (err) {
          note(`p-txn ${commit ? 'commit' : 'abort'} of txn ${txn} failed: ${(err as Error).message}`);
        }
        // Not answered: abort when the producer still may (a commit that failed on a send), else a new instance.
        const state = producer.transactionState;
        if (state === 'in-transaction' || state === 'abortable') {
          try {
            txnStep = `abortTransaction() of txn ${txn} after a failed end`;
            await producer.abortTransaction();
            txnChecker.ended(txn, 'aborted');
            continue;
          } catch (err) {
            note(`p-txn abort of txn ${txn} failed: ${(err as Error).message}`);
          }
        }
        txnChecker.ended(txn, 'unknown');
        if (producer.transactionState !== 'ready') await replace(`state ${producer.transactionState}`);
      }
      txnStep = 'close()';
      await producer.close();
    }));
    const txnConsumerClient = clientOf('c-txn');
    const txnConsumerProc = clients.at(-1)!.proc;
    const txnConsumer: Consumer = time.within(txnConsumerProc, () => txnConsumerClient.consumer({ minBytes: CONSUMER_MIN_BYTES, isolationLevel: 'read_committed' }));
    const txnConsumerLoop = harnessLoop('c-txn', time.within(txnConsumerProc, async () => {
      txnConsumer.assign(Array.from({ length: partitions }, (_, p) => ({ topic: TXN_TOPIC, partition: p, offset: 0 })));
      while (consuming) {
        const records = await pollOnce(txnConsumer, 'c-txn');
        if (!records) continue;
        for (const r of records) txnChecker.consumed(r.partition, r.offset, r.value?.toString('utf8') ?? '');
        for (let p = 0; p < partitions; p++) txnChecker.positions[p] = await txnConsumer.position({ topic: TXN_TOPIC, partition: p });
      }
    }));

    // Faults.
    let down = 0;
    /** Mostly a live broker that believes it leads a partition of the topic; now and then (or when none does) any broker. */
    const leaderOfSomething = (): SimBroker | undefined => {
      const leading = brokers.filter((b) => b.alive && Array.from({ length: partitions }, (_, p) => b.node?.replicas.hostedPartition(TOPIC, p)?.role).includes('leader'));
      return leading.length > 0 && faultRng.chance(0.8) ? faultRng.pick(leading) : undefined;
    };
    // Usually at most a minority down at once (the quorum and every partition's ISR survive); now and then more,
    // up to all but one broker (a rack's power loss): under flush.policy=always even that loses no acknowledged write.
    const maxDown = (): number => (faultRng.chance(0.3) ? n - 1 : Math.floor((n - 1) / 2));
    if (faults) net.faults = { raftDrop: 0.03, raftDuplicate: 0.02, slow: 0.03 };
    const faultsUntil = time.elapsed() + durationMs;
    while (faults && o.script === 'stale-epoch' && time.elapsed() < faultsUntil) {
      await time.sleep(faultRng.int(300, 1500));
      const crash = (b: SimBroker): void => {
        b.crash(0.5);
        down++;
        result.crashes++;
        note(`CRASH broker ${b.id}`);
      };
      const restart = (b: SimBroker): void => {
        down--;
        startBroker(b);
      };
      await staleEpochRound({ time, net, brokers, rng: faultRng, topics: [TOPIC, TXN_TOPIC], note, crash, restart }, faultRng.chance(0.5) ? 'follower' : 'leader');
    }
    while (faults && o.script !== 'stale-epoch' && time.elapsed() < faultsUntil) {
      await time.sleep(faultRng.int(300, 2500));
      const kind = faultRng.int(0, 12);
      if (kind <= 3 && down < maxDown()) {
        const b = faultRng.pick(brokers.filter((x) => x.alive));
        const r = b.crash(0.5);
        down++;
        result.crashes++;
        note(`CRASH broker ${b.id} (${r.filesLost} files lost unsynced bytes)`);
        const after = faultRng.int(200, 6000);
        time.schedule(after, () => {
          down--;
          startBroker(b);
        }, undefined);
      } else if (kind <= 6) {
        const b = faultRng.pick(brokers);
        for (const x of [...ids.map(brokerHost), ...clients.map((c) => c.proc.name)]) {
          if (x === b.proc.name) continue;
          net.cutLink(b.proc.name, x);
          net.cutLink(x, b.proc.name);
        }
        net.resetCutConnections();
        note(`PARTITION broker ${b.id} isolated`);
        await time.sleep(faultRng.int(200, 5000));
        net.heal();
        note('HEAL');
      } else if (kind <= 8) {
        const a = faultRng.pick(ids);
        const c = faultRng.pick(ids.filter((x) => x !== a));
        net.cutLink(brokerHost(a), brokerHost(c));
        note(`CUT one way ${a} -> ${c}`);
        await time.sleep(faultRng.int(200, 4000));
        net.heal();
        note('HEAL');
      } else if (kind === 10) {
        // A deposed leader that keeps running: the Raft messages to (and usually from) a broker leading a partition
        // are cut, so its metadata freezes and the controller fences it and moves its partitions, while its
        // connections still work: clients and followers that have not moved on still reach it.
        const b = leaderOfSomething() ?? faultRng.pick(brokers);
        const both = faultRng.chance(0.7);
        for (const x of ids.map(brokerHost)) {
          if (x === b.proc.name) continue;
          net.cutRaft(x, b.proc.name);
          if (both) net.cutRaft(b.proc.name, x);
        }
        note(`DEPOSE broker ${b.id}: Raft cut ${both ? 'both ways' : 'to it'}, connections kept`);
        await time.sleep(faultRng.int(1000, 6000));
        net.heal();
        note('HEAL');
      } else if (kind === 11) {
        // Metadata lag: Raft messages to a broker arrive 0.5-4 s late (it stays a live voter now and then, so it is
        // fenced and unfenced, elected and deposed, and learns each epoch late) while its connections keep up.
        const b = leaderOfSomething() ?? faultRng.pick(brokers);
        for (const x of ids.map(brokerHost)) if (x !== b.proc.name) net.slowLink(x, b.proc.name, 500, 4000, true);
        note(`LAG metadata to broker ${b.id}`);
        await time.sleep(faultRng.int(2000, 8000));
        net.heal();
        note('HEAL');
      } else if (kind === 12) {
        // A congested link: every frame (fetch answers of an old epoch too) and Raft message from one broker to
        // another arrives 0.1-1.5 s late.
        const a = faultRng.pick(ids);
        const c = faultRng.pick(ids.filter((x) => x !== a));
        net.slowLink(brokerHost(a), brokerHost(c), 100, 1500);
        note(`SLOW link ${a} -> ${c}`);
        await time.sleep(faultRng.int(1000, 5000));
        net.heal();
        note('HEAL');
      } else {
        const c = faultRng.pick(clients);
        const b = faultRng.pick(ids);
        net.cutLink(c.proc.name, brokerHost(b));
        net.cutLink(brokerHost(b), c.proc.name);
        note(`PARTITION client ${c.proc.name} from broker ${b}`);
        await time.sleep(faultRng.int(200, 3000));
        net.heal();
        note('HEAL');
      }
    }

    // Heal: everything up, no more faults; the cluster must converge.
    net.heal();
    net.faults = { raftDrop: 0, raftDuplicate: 0, slow: 0 };
    note('HEAL ALL: faults stop');
    await until(() => down === 0 && brokers.every((b) => b.alive), 10_000, 'a crashed broker was never restarted');
    producing = false;
    stage = 'waiting for the producers to stop';
    await Promise.all(producerLoops);
    const txnStuck = time.schedule(settleMs, () => (stage = `waiting for the transactional producer to stop: its ${txnStep} has not returned for ${settleMs} ms`), undefined);
    await txnLoop;
    time.clearTimeout(txnStuck);
    stage = 'waiting for every send to be answered';
    await until(() => runs.every((r) => r.outstanding === 0), settleMs, 'sends still unanswered after the heal (liveness)');
    stage = 'waiting for every partition to converge';
    await until(() => checker.converged(), settleMs, () => `partitions without a leader or a full ISR after the heal (liveness): ${checker.describe()}`);
    await until(() => checker.consumerCaughtUp(), settleMs, () => `the consumer did not reach the high watermark after the heal (liveness): ${checker.describeConsumer()}`);
    stage = 'waiting for the transactions to settle';
    await until(() => checker.converged(TXN_TOPIC) && txnChecker.settled(), settleMs, () => `transactions still open or the read_committed consumer behind after the heal (liveness): ${txnChecker.describe()}`);
    consuming = false;
    grouping = false;
    stage = 'waiting for the consumer to stop';
    await consumerLoop;
    await txnConsumerLoop;
    stage = 'waiting for the group member to stop';
    const groupStuck = time.schedule(settleMs, () => (stage = `waiting for the group member to stop: its ${groupStep} has not returned for ${settleMs} ms`), undefined);
    await groupLoop;
    time.clearTimeout(groupStuck);
    // The leadership may have moved while the consumers and the group member stopped (a preferred leader taking
    // over, sim seed 128): converged again, every replica at the leader's HW, right before the comparison.
    stage = 'waiting for the partitions to converge again before the final check';
    await until(() => checker.converged() && checker.converged(TXN_TOPIC), settleMs, () => `partitions did not converge again before the final check (liveness): ${checker.describe()}`);
    stage = 'final check';
    await checker.finalCheck(readReplica);
    await txnChecker.finalCheck();
    if (checker.violation !== undefined) throw new SimViolation(checker.violation);
  };

  /** Decoded records of one replica's log below `below` (default: its own high watermark): offset -> value. */
  async function readReplica(b: SimBroker, partition: number, below?: number): Promise<{ hw: number; records: Map<number, string> }> {
    const h = b.node!.replicas.hostedPartition(TOPIC, partition);
    const hw = below ?? b.node!.replicas.highWatermarkOf(TOPIC, partition) ?? 0;
    const records = new Map<number, string>();
    if (!h) return { hw: 0, records };
    let offset = h.log.logStartOffset;
    while (offset < hw) {
      const r = await time.within(b.proc, () => h.log.read(offset, 1 << 20, { maxOffset: hw }));
      if (r.records.length === 0) break;
      for (const span of iterateBatches(r.records)) {
        const batch = decodeBatchSync(r.records, span.position);
        for (const rec of batch.records) {
          const off = rec.offset;
          if (off < hw) records.set(off, rec.value?.toString('utf8') ?? '');
        }
      }
      offset = r.nextOffset;
    }
    return { hw, records };
  }

  /** Waits for `cond`; past `withinMs` a violation, described as things stand then. */
  async function until(cond: () => boolean, withinMs: number, what: string | (() => string)): Promise<void> {
    const deadline = time.elapsed() + withinMs;
    while (!cond()) {
      if (time.elapsed() > deadline) throw new SimViolation(typeof what === 'string' ? what : what());
      await time.sleep(50);
    }
  }

  let finished = false;
  const started = scenario()
    .then(
      () => undefined,
      (err: unknown) => {
        result.ok = false;
        result.violation = err instanceof SimViolation ? err.message : `harness error: ${(err as Error).stack ?? String(err)}`;
      },
    )
    .finally(() => (finished = true));
  try {
    // Every stage has its own bound; this one catches a wait that has none.
    const limitMs = durationMs + 3 * settleMs + 60_000;
    await time.run(limitMs, () => finished || checker.violation !== undefined);
    if (checker.violation !== undefined) {
      result.ok = false;
      result.violation = checker.violation;
    } else if (!finished) {
      result.ok = false;
      result.violation =
        time.elapsed() >= limitMs ? `liveness: the run did not finish within ${limitMs} simulated ms (stuck ${stage})` : `deadlock: no event left to run (${stage})`;
    }
  } finally {
    done = true;
    for (const b of brokers) b.proc.alive = false;
    for (const c of clients) c.proc.alive = false;
    uninstall();
  }
  if (finished) await started;
  result.simulatedMs = time.elapsed();
  result.events = time.events;
  result.acked = checker.ackedCount;
  result.consumed = checker.consumedCount;
  result.groupReads = checker.groupReads;
  result.groupCommits = checker.groupCommits;
  result.groupSessions = checker.groupSessions;
  result.txnCommitted = txnChecker.committed;
  result.txnAborted = txnChecker.aborted;
  result.txnUnknown = txnChecker.unknown;
  result.txnConsumed = txnChecker.consumedCount;
  result.leaderChanges = checker.leaderChanges;
  if (!result.ok && result.violation) note(`VIOLATION: ${result.violation}`);
  return result;
}
