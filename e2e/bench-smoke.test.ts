/**
 * CI smoke run of `mq bench`: produce and consume a few thousand records
 * against a fresh broker and check the JSON each prints, so the harness
 * cannot rot. No assertion on speed: speed is what the report shows.
 */
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { cleanup, makeTempDir, runCli, startBroker, uniqueName } from './src/harness.js';

const LATENCY_KEYS = ['p50', 'p90', 'p99', 'p999', 'max'];

function parseResult(stdout: string): Record<string, any> {
  const lines = stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]);
}

function expectCommonShape(r: Record<string, any>, workload: string, records: number, bytes: number): void {
  expect(r.workload).toBe(workload);
  expect(r.target).toBe('mq');
  expect(r.records).toBe(records);
  expect(r.bytes).toBe(bytes);
  expect(r.errors).toBe(0);
  expect(r.seconds).toBeGreaterThan(0);
  expect(r.recordsPerSec).toBeGreaterThan(0);
  expect(r.mbPerSec).toBeGreaterThan(0);
  expect(r.environment).toMatchObject({ cpuModel: expect.any(String), cores: expect.any(Number), node: process.version });
  expect(r.environment).toHaveProperty('commit');
  expect(r.durability).toEqual(expect.any(String));
}

describe('mq bench (real CLI, real broker)', () => {
  afterAll(async () => {
    await cleanup();
  });

  it('produce prints one JSON object with throughput and send-to-ack latency', async () => {
    const broker = await startBroker();
    const topic = uniqueName('bench');
    const res = await runCli(['bench', 'produce', '--bootstrap', broker.bootstrap, '--topic', topic, '--records', '3000', '--size', '100', '--partitions', '2', '--keys', 'uniform:10', '--json', '--quiet'], { timeoutMs: 45_000 });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const r = parseResult(res.stdout);
    // values of 100 bytes plus keys k0..k9 of 2 bytes
    expectCommonShape(r, 'produce', 3000, 3000 * 102);
    for (const k of LATENCY_KEYS) expect(r.latencyMs[k]).toBeGreaterThan(0);
    expect(r.latencyMs.p50).toBeLessThanOrEqual(r.latencyMs.p99);
    expect(r.latencyMs.p99).toBeLessThanOrEqual(r.latencyMs.max);
    expect(r.parameters).toMatchObject({ topic, records: 3000, size: 100, partitions: 2, keys: 'uniform:10', acks: 1 });
  });

  it('consume prepares a topic and reads it back alone and as a group', async () => {
    const broker = await startBroker();
    const alone = await runCli(['bench', 'consume', '--bootstrap', broker.bootstrap, '--records', '4000', '--size', '64', '--json', '--quiet'], { timeoutMs: 45_000 });
    expect(alone.code).toBe(0);
    const r = parseResult(alone.stdout);
    expectCommonShape(r, 'consume', 4000, 4000 * 64);
    expect(r.latencyMs).toBeNull();

    const group = await runCli(
      ['bench', 'consume', '--bootstrap', broker.bootstrap, '--records', '4000', '--size', '64', '--partitions', '3', '--consumers', '2', '--group', uniqueName('g'), '--json', '--quiet'],
      { timeoutMs: 45_000 },
    );
    expect(group.code).toBe(0);
    const g = parseResult(group.stdout);
    expectCommonShape(g, 'consume', 4000, 4000 * 64);
    expect(g.parameters).toMatchObject({ consumers: 2, partitions: 3 });
  });

  it('starts and stops its own broker when no --bootstrap is given, and rejects bad flags with exit code 2', async () => {
    const res = await runCli(['bench', 'e2e', '--rate', '2000', '--records', '1000', '--json', '--quiet'], { timeoutMs: 45_000 });
    expect(res.code).toBe(0);
    const r = parseResult(res.stdout);
    expectCommonShape(r, 'e2e', 1000, 1000 * 100);
    expect(r.targetRate).toBe(2000);
    expect(r.parameters.localBroker).toBe(true);

    const bad = await runCli(['bench', 'produce', '--keys', 'zipf', '--bootstrap', '127.0.0.1:1']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--keys "zipf" is not valid/);
  });

  it('the CI recipe: five --json runs per side, alternating, appended to a file per side, then bench compare states the noise and fails only on a real drop', async () => {
    const broker = await startBroker();
    const dir = await makeTempDir('mq-bench-compare-');
    const baseline = path.join(dir, 'baseline.json');
    const current = path.join(dir, 'current.json');
    // The two sides' runs alternate (as the README recommends when both builds are at hand): a load that changes
    // while the runs go on then falls on both sides alike instead of on the later side only, which no within-side
    // noise measure can see (it failed a loaded CI run once, with the sides run one after the other).
    const RUNS = 5;
    for (let i = 0; i < RUNS; i++) {
      for (const file of [baseline, current]) {
        const res = await runCli(['bench', 'produce', '--bootstrap', broker.bootstrap, '--records', '3000', '--size', '100', '--json', '--quiet'], { timeoutMs: 45_000 });
        expect(res.code).toBe(0);
        await appendFile(file, res.stdout);
      }
    }
    // Same build on both sides: no regression (the limit is at least the noise measured).
    const same = await runCli(['bench', 'compare', baseline, current, '--max-drop', '50%', '--json']);
    expect(same.code).toBe(0);
    const report = JSON.parse(same.stdout);
    expect(report).toMatchObject({ regressed: false, maxDrop: 0.5, scenarios: [{ scenario: 'produce/mq' }] });
    const tput = report.scenarios[0].metrics.find((m: { metric: string }) => m.metric === 'recordsPerSec');
    expect(tput).toMatchObject({ baseline: { runs: RUNS }, current: { runs: RUNS } });
    expect(tput.noise).toEqual(expect.any(Number));

    // A current build at a tenth of the baseline's throughput (the baseline's runs scaled, so exactly 90% worse
    // whatever the machine did between the two sides) is a regression: exit 1, the table on stdout, one line on stderr.
    const slow = path.join(dir, 'slow.json');
    const runs = (await readFile(baseline, 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    await writeFile(slow, runs.map((r) => JSON.stringify({ ...r, recordsPerSec: Math.round(r.recordsPerSec / 10) })).join('\n') + '\n');
    const worse = await runCli(['bench', 'compare', baseline, slow, '--max-drop', '15%']);
    expect(worse.code).toBe(1);
    expect(worse.stdout).toMatch(/recordsPerSec.*REGRESSED/);
    expect(worse.stdout).toMatch(/NOISE/);
    expect(worse.stderr).toMatch(/^mq: bench compare: regression: produce\/mq recordsPerSec 90\.0% worse/);

    expect((await runCli(['bench', 'compare', baseline, path.join(dir, 'missing.json')])).code).toBe(2);
  }, 240_000);
});
