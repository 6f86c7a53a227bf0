import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error plain ESM helper shared with the benchmark
import { setup } from './kv-cluster.mjs';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');

describe('example KV store as 3 real processes', () => {
  let c: Awaited<ReturnType<typeof setup>>;
  beforeAll(async () => {
    // The example imports the built package.
    execFileSync(process.execPath, [join(pkg, '../../node_modules/typescript/bin/tsc'), '-b', pkg], { stdio: 'inherit' });
    execFileSync('sh', ['-c', 'mkdir -p dist/gen && cp src/gen/*.js src/gen/*.d.ts dist/gen/'], { cwd: pkg });
    c = await setup({ nodes: 3, tickMs: 50 });
  }, 60_000);
  afterAll(async () => {
    await c?.cleanup();
  });

  it('elects a new leader after SIGKILL of the leader under load and loses no acknowledged write', async () => {
    const first = await c.waitForLeader();
    const acked = new Map<string, string>();
    let stop = false;
    let seq = 0;
    const writer = async (w: number) => {
      while (!stop) {
        const key = `w${w}-${seq++}`;
        const value = `v${seq}`;
        const r = await c.put(key, value, { deadlineMs: 3000 });
        if (r.ok) acked.set(key, value);
      }
    };
    const writers = Array.from({ length: 8 }, (_, i) => writer(i));
    await new Promise((r) => setTimeout(r, 800));
    const beforeKill = acked.size;
    expect(beforeKill).toBeGreaterThan(10);
    const killedAt = Date.now();
    await c.kill(first, 'SIGKILL');
    const second = await c.waitForLeader(15000, first);
    const electedMs = Date.now() - killedAt;
    await new Promise((r) => setTimeout(r, 800));
    stop = true;
    await Promise.all(writers);
    expect(second).not.toBe(first);
    expect(acked.size).toBeGreaterThan(beforeKill); // writes went on under the new leader
    expect(electedMs).toBeLessThan(10_000);

    // The killed node restarts from its disk and catches up.
    await c.start(first);
    const survivors = c.ids.filter((id: number) => id !== first);
    for (const [key, value] of acked) {
      const r = await c.get(survivors[0], key);
      if (r.status === 421) continue;
      expect({ key, status: r.status, value: r.body?.value }).toEqual({ key, status: 200, value });
    }
    // And every acknowledged write is on every node once it catches up (read through the leader's read barrier).
    const leaderNow = await c.waitForLeader();
    let missing = 0;
    for (const [key, value] of acked) {
      const r = await c.get(leaderNow, key);
      if (r.status !== 200 || r.body.value !== value) missing++;
    }
    expect(missing).toBe(0);
  }, 60_000);
});
