import { describe, expect, it } from '@jest/globals';
import { checkKvHistory, type KvOp } from './linearizability.js';
import { runSimulation } from './simulator.js';

// CI runs a few hundred seeds; `npm run sim -- --seeds N` runs any number.
const SEEDS_3 = Number(process.env.SIM_SEEDS_3 ?? 160);
const SEEDS_5 = Number(process.env.SIM_SEEDS_5 ?? 80);

describe('deterministic simulation', () => {
  it(`${SEEDS_3} seeds of a 3-node cluster under faults run clean`, async () => {
    const failures: string[] = [];
    let acked = 0;
    let confChanges = 0;
    let crashes = 0;
    for (let seed = 1; seed <= SEEDS_3; seed++) {
      const r = await runSimulation({ seed, nodes: 3 });
      acked += r.okOps;
      confChanges += r.confChanges;
      crashes += r.crashes;
      if (!r.ok) failures.push(`seed ${seed}: ${r.violation}`);
    }
    expect(failures).toEqual([]);
    expect(acked).toBeGreaterThan(SEEDS_3 * 50); // the clients made progress
    expect(confChanges).toBeGreaterThan(SEEDS_3 / 10); // and the faults did happen
    expect(crashes).toBeGreaterThan(SEEDS_3);
  }, 120_000);

  it(`${SEEDS_5} seeds of a 5-node cluster under faults run clean`, async () => {
    const failures: string[] = [];
    for (let seed = 1001; seed < 1001 + SEEDS_5; seed++) {
      const r = await runSimulation({ seed, nodes: 5 });
      if (!r.ok) failures.push(`seed ${seed}: ${r.violation}`);
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it('replays a seed exactly', async () => {
    const a = await runSimulation({ seed: 4242, nodes: 3, trace: true });
    const b = await runSimulation({ seed: 4242, nodes: 3, trace: true });
    expect(a.trace.length).toBeGreaterThan(5);
    expect(b.trace).toEqual(a.trace);
    expect(b.steps).toBe(a.steps);
    expect(b.okOps).toBe(a.okOps);
  });
});

describe('linearizability checker', () => {
  const op = (o: Partial<KvOp> & Pick<KvOp, 'kind' | 'value' | 'call' | 'ret'>): KvOp => ({ client: 1, key: 'k', ok: true, ...o });

  it('accepts a legal concurrent history', () => {
    const h = [op({ kind: 'put', value: 'a', call: 0, ret: 10 }), op({ kind: 'put', value: 'b', call: 5, ret: 15 }), op({ kind: 'get', value: 'a', call: 12, ret: 20 })];
    expect(checkKvHistory(h).ok).toBe(true);
  });

  it('rejects a stale read after a completed write', () => {
    const h = [op({ kind: 'put', value: 'a', call: 0, ret: 10 }), op({ kind: 'put', value: 'b', call: 11, ret: 15 }), op({ kind: 'get', value: 'a', call: 16, ret: 20 })];
    expect(checkKvHistory(h).ok).toBe(false);
  });

  it('lets an unknown-outcome write take effect late or never', () => {
    const late = [op({ kind: 'put', value: 'x', call: 0, ret: Infinity, ok: false }), op({ kind: 'get', value: null, call: 5, ret: 6 }), op({ kind: 'get', value: 'x', call: 50, ret: 60 })];
    expect(checkKvHistory(late).ok).toBe(true);
    const never = [op({ kind: 'put', value: 'x', call: 0, ret: Infinity, ok: false }), op({ kind: 'get', value: null, call: 50, ret: 60 })];
    expect(checkKvHistory(never).ok).toBe(true);
    const flipflop = [
      op({ kind: 'put', value: 'x', call: 0, ret: Infinity, ok: false }),
      op({ kind: 'get', value: 'x', call: 5, ret: 6 }),
      op({ kind: 'get', value: null, call: 50, ret: 60 }),
    ];
    expect(checkKvHistory(flipflop).ok).toBe(false);
  });
});
