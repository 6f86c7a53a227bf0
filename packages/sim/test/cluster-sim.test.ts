/**
 * The cluster simulator in CI: a bounded number of seeds of the whole
 * cluster (3 and 5 brokers) under faults, every invariant checked; a seed
 * replays byte for byte; and the checker catches what it is there to catch.
 */
import { describe, expect, it } from '@jest/globals';
import { runClusterSimulation } from '../src/index.js';

/**
 * Seeds per CI run: 12 + 3 random seeds and 7 of the stale-epoch script. Re-checked on 2026-12-03 night (main
 * 5020b7e, README: Does it find bugs?): of the random nemesis's bugs, the last first caught is the unclean election
 * at 3-broker seed 11 (5-broker seed 3); the scripted seeds catch `stale-epoch-leader` at seeds 1 and 2, but
 * `stale-epoch-follower` only from scripted seed 7 (seeds 1-2 missed it), so CI runs scripted seeds 1-7 (was 2). A
 * scripted seed costs about a random seed and a quarter (the five more: about 12 s on an idle machine). The time limits are for a loaded 2-core
 * machine (150 s wall at load 14, 300 s at load 16).
 */
const CI_SEEDS_3 = 12;
const CI_SEEDS_5 = 3;
const CI_SEEDS_SCRIPT = 7;
const DURATION_MS = 8000;

describe('cluster simulation', () => {
  it(`runs ${CI_SEEDS_3} seeds of 3 brokers under faults with every invariant holding`, async () => {
    for (let seed = 1; seed <= CI_SEEDS_3; seed++) {
      const r = await runClusterSimulation({ seed, brokers: 3, durationMs: DURATION_MS });
      if (!r.ok) throw new Error(`seed ${seed}: ${r.violation}\n${r.trace.slice(-40).join('\n')}`);
      expect(r.acked).toBeGreaterThan(0);
      expect(r.consumed).toBeGreaterThan(0);
    }
  }, 600_000);

  it(`runs ${CI_SEEDS_5} seeds of 5 brokers under faults with every invariant holding`, async () => {
    for (let seed = 1; seed <= CI_SEEDS_5; seed++) {
      const r = await runClusterSimulation({ seed, brokers: 5, durationMs: DURATION_MS });
      if (!r.ok) throw new Error(`seed ${seed}: ${r.violation}\n${r.trace.slice(-40).join('\n')}`);
    }
  }, 600_000);

  it(`runs ${CI_SEEDS_SCRIPT} seeds of the stale-epoch script (metadata held back across two leader epochs) with every invariant holding`, async () => {
    for (let seed = 1; seed <= CI_SEEDS_SCRIPT; seed++) {
      const r = await runClusterSimulation({ seed, brokers: 3, durationMs: DURATION_MS, script: 'stale-epoch' });
      if (!r.ok) throw new Error(`seed ${seed}: ${r.violation}\n${r.trace.slice(-40).join('\n')}`);
      // At least one round went as scripted: the leadership went away and came back while a broker's metadata was held.
      expect(r.trace.some((l) => / SCRIPT \S+: epoch \d+ led by \d+ again/.test(l))).toBe(true);
    }
  }, 600_000);

  it('replays a seed exactly: the same trace, byte for byte', async () => {
    const a = await runClusterSimulation({ seed: 42, brokers: 3, durationMs: 4000, trace: true });
    const b = await runClusterSimulation({ seed: 42, brokers: 3, durationMs: 4000, trace: true });
    expect(a.trace.length).toBeGreaterThan(5);
    expect(b.trace.join('\n')).toBe(a.trace.join('\n'));
    expect(b.events).toBe(a.events);
  }, 120_000);
});
