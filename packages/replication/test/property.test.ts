/**
 * Property: under random produces, crashes, restarts, follower disk wipes,
 * network cuts and leader changes (clean elections, from the ISR), no offset
 * below a replica's high watermark ever holds two different batches across
 * replicas, and every
 * acks=all write that was acknowledged stays at the offset it was
 * acknowledged at. A failing case prints its fast-check seed and replays
 * exactly (the cluster is in memory with a manual clock).
 */
import fc from 'fast-check';
import { decodeBatchSync } from '@mq/protocol/batch';
import { SimCluster } from './sim.js';

type Op =
  | { kind: 'produce'; acks: -1 | 1; n: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'crash'; broker: number }
  | { kind: 'restart'; broker: number }
  | { kind: 'wipe'; broker: number }
  | { kind: 'elect'; broker: number }
  | { kind: 'cut'; a: number; b: number }
  | { kind: 'heal' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('produce' as const), acks: fc.constantFrom(-1 as const, 1 as const), n: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 10, max: 4_000 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('crash' as const), broker: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('restart' as const), broker: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('wipe' as const), broker: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('elect' as const), broker: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cut' as const), a: fc.integer({ min: 1, max: 3 }), b: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('heal' as const) }) },
);

function valueOf(bytes: Buffer): string {
  return decodeBatchSync(bytes).records[0]!.value!.toString();
}

/** The high watermark a replica vouches for: its live leader's or fetcher's, else its checkpoint. */
function replicaHw(sim: SimCluster, id: number): number {
  const b = sim.broker(id);
  if (b.alive && b.leader && !b.leader.closed) return b.leader.highWatermark;
  if (b.alive && b.fetcher) return b.fetcher.status('t', 0)?.highWatermark ?? 0;
  return b.checkpoint.value ?? 0;
}

async function run(ops: Op[], minInsyncReplicas: number, seed: number, assignLeaderEpoch: boolean): Promise<void> {
  const t0 = Date.now();
  try {
    await runInner(ops, minInsyncReplicas, seed, assignLeaderEpoch);
  } finally {
    if (process.env.DEBUG_SIM) process.stderr.write(`run ${ops.length} ops ${Date.now() - t0} ms\n`);
  }
}

async function runInner(ops: Op[], minInsyncReplicas: number, seed: number, assignLeaderEpoch: boolean): Promise<void> {
  const sim = new SimCluster({ brokers: 3, minInsyncReplicas, replicaLagTimeMaxMs: 3_000, seed, assignLeaderEpoch });
  const committed = new Map<number, Buffer>();
  const acked = new Map<number, string>();
  const pending: Promise<unknown>[] = [];
  let next = 0;

  const check = (where: string): void => {
    for (const id of [1, 2, 3]) {
      const hw = replicaHw(sim, id);
      for (const b of sim.memoryLog(id).batches()) {
        if (b.lastOffset >= hw) break;
        const known = committed.get(b.baseOffset);
        if (!known) committed.set(b.baseOffset, b.bytes);
        else if (!known.equals(b.bytes)) {
          throw new Error(`${where}: offset ${b.baseOffset} below broker ${id}'s HW ${hw} holds "${valueOf(b.bytes)}", committed is "${valueOf(known)}"`);
        }
      }
    }
    for (const [offset, value] of acked) {
      const c = committed.get(offset);
      if (!c) throw new Error(`${where}: acknowledged offset ${offset} ("${value}") is not committed`);
      if (valueOf(c) !== value) throw new Error(`${where}: acknowledged offset ${offset} holds "${valueOf(c)}", acked "${value}"`);
    }
  };

  try {
    await sim.start();
    for (const [i, op] of ops.entries()) {
      if (process.env.DEBUG_SIM === '2') process.stderr.write(`op ${i} ${JSON.stringify(op)} leader=${sim.state.leader} isr=${sim.state.isr}\n`);
      switch (op.kind) {
        case 'produce': {
          const leader = sim.broker(sim.state.leader);
          if (!leader.alive || !leader.leader) break;
          for (let k = 0; k < op.n; k++) {
            const value = `w${next++}`;
            const p = sim.produce(value, op.acks, 5_000).then(
              (r) => {
                if (op.acks === -1) acked.set(r.baseOffset, value);
              },
              () => undefined,
            );
            pending.push(p);
          }
          break;
        }
        case 'advance':
          await sim.advance(op.ms);
          break;
        case 'crash':
          await sim.crash(op.broker);
          break;
        case 'restart':
          await sim.restart(op.broker);
          break;
        case 'wipe':
          await sim.wipe(op.broker);
          break;
        case 'elect':
          if (sim.broker(sim.state.leader).alive) await sim.elect(op.broker);
          break;
        case 'cut':
          if (op.a !== op.b) sim.cut.add(`${op.a}-${op.b}`);
          break;
        case 'heal':
          sim.cut.clear();
          break;
      }
      check(`after op ${i} ${JSON.stringify(op)}`);
    }
    if (process.env.DEBUG_SIM === '2') process.stderr.write('healing\n');
    // Heal everything: all replicas converge on one log holding every acknowledged write.
    sim.cut.clear();
    for (const id of [1, 2, 3]) await sim.restart(id);
    if (!sim.broker(sim.state.leader).alive) await sim.elect();
    await sim.until(() => sim.leader.isr.length === 3, 120_000, 'full ISR');
    await sim.until(
      () => [1, 2, 3].every((id) => sim.broker(id).log.logEndOffset === sim.leader.logEndOffset && replicaHw(sim, id) === sim.leader.logEndOffset),
      60_000,
      'replicas converged',
    );
    await sim.advance(6_000); // every waiting produce settles
    await Promise.all(pending);
    check('after healing');
    const reference = await sim.contents(sim.state.leader);
    for (const id of [1, 2, 3]) expect(await sim.contents(id)).toEqual(reference);
  } finally {
    await sim.close();
  }
}

describe('replication safety under random faults', () => {
  it('never lets two replicas disagree below the high watermark, and never loses an acknowledged write', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { minLength: 5, maxLength: 40 }),
        fc.constantFrom(1, 2),
        fc.integer({ min: 1, max: 1_000 }),
        fc.boolean(),
        run,
      ),
      { numRuns: Number(process.env.RUNS ?? 200), seed: process.env.SEED ? Number(process.env.SEED) : undefined, verbose: 1 },
    );
  });
});
