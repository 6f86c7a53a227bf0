/**
 * Effectively once for a side effect outside mq (issue 15): the payments example
 * (packages/idempotent-consumer/examples/payments) charges a PostgreSQL ledger once
 * per payment id while its consumer is SIGKILLed again and again mid-batch (after
 * charges, before its offsets are committed) and the producer upstream sends
 * duplicates. Real processes: an mq broker, PostgreSQL and Redis from Debian on
 * loopback with private data directories, the example's consumer and producer.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { startPostgres, startRedis, type TestServer } from '../tools/test-servers.mjs';
import { cleanup, REPO_ROOT, runCli, startBroker, uniqueName, type BrokerProcess } from './src/harness.js';

const EXAMPLE = path.join(REPO_ROOT, 'packages', 'idempotent-consumer', 'examples', 'payments');

interface Run {
  child: ChildProcess;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

function runNode(script: string, args: string[]): Run {
  const child = spawn(process.execPath, [path.join(EXAMPLE, script), ...args], { cwd: EXAMPLE, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, exit };
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('payments: effectively once through an idempotent consumer (real broker, PostgreSQL, Redis)', () => {
  let broker: BrokerProcess;
  let postgres: TestServer;
  let redis: TestServer;

  beforeAll(async () => {
    [broker, postgres, redis] = await Promise.all([startBroker(), startPostgres(), startRedis()]);
  }, 90_000);

  afterAll(async () => {
    await Promise.all([postgres?.stop(), redis?.stop()]);
    await cleanup();
  });

  /**
   * Produces `payments` payments (with upstream duplicates) while a consumer with `store` is SIGKILLed
   * `kills` times at random moments, then lets a last consumer finish; returns the ledger's counts.
   */
  async function scenario(store: 'postgres' | 'redis' | 'memory', payments: number, kills: number) {
    const topic = uniqueName('payments');
    const group = uniqueName('billing');
    const db = uniqueName('db').replace(/-/g, '_');
    const admin = new pg.Client({ connectionString: postgres.url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${db}`);
    await admin.end();
    const pgUrl = postgres.url.replace(/\/postgres$/, `/${db}`);
    expect((await runCli(['topic', 'create', topic, '--partitions', '3', '--bootstrap', broker.bootstrap])).code).toBe(0);

    const producer = runNode('producer.mjs', ['--bootstrap', broker.bootstrap, '--topic', topic, '--count', String(payments), '--duplicates', '0.3']);
    const consumerArgs = ['--bootstrap', broker.bootstrap, '--topic', topic, '--group', group, '--instance-id', 'payments-1', '--store', store, '--postgres', pgUrl, '--redis', redis.url];
    const ledger = new pg.Client({ connectionString: pgUrl });
    await ledger.connect();
    const ledgerRows = async (): Promise<number> => {
      try {
        return (await ledger.query('SELECT count(*)::int AS n FROM ledger')).rows[0].n as number;
      } catch {
        return 0; // the first consumer has not created the table yet
      }
    };
    let killed = 0;
    for (let i = 0; i < kills; i++) {
      // Commits every 60 s: every kill falls after charges (the ledger grew) and before their offsets are committed.
      const c = runNode('consumer.mjs', [...consumerArgs, '--commit-interval-ms', '60000']);
      const start = await ledgerRows();
      const deadline = Date.now() + 30_000;
      const enough = Math.min(start + 20, payments); // once every payment is charged, a store-keeping consumer charges no more
      while ((await ledgerRows()) < enough && Date.now() < deadline && c.child.exitCode === null) await delay(50);
      await delay(Math.floor(Math.random() * 500));
      c.child.kill('SIGKILL');
      const { signal, stderr } = await c.exit;
      if (signal === 'SIGKILL') killed++;
      else throw new Error(`the consumer exited on its own before its kill: ${stderr}`);
    }
    const sent = await producer.exit;
    expect(sent.code).toBe(0);
    const { sent: records } = JSON.parse(sent.stdout) as { sent: number };
    const last = runNode('consumer.mjs', [...consumerArgs, '--commit-interval-ms', '1000', '--exit-when-idle-ms', '4000']);
    const done = await last.exit;
    expect(done.stderr).toBe('');
    expect(done.code).toBe(0);
    const r = await ledger.query('SELECT count(*)::int AS rows, count(DISTINCT payment_id)::int AS payments FROM ledger');
    await ledger.end();
    return { rows: r.rows[0].rows as number, distinct: r.rows[0].payments as number, killed, records, last: JSON.parse(done.stdout) as { charged: number; duplicates: number } };
  }

  it('PostgreSQL store: every payment charged exactly once across repeated SIGKILLs and upstream duplicates', async () => {
    const PAYMENTS = 1_500;
    const r = await scenario('postgres', PAYMENTS, 6);
    expect(r.killed).toBe(6);
    expect(r.records).toBeGreaterThan(PAYMENTS); // the producer really sent duplicates
    expect(r.distinct).toBe(PAYMENTS); // no payment missing
    expect(r.rows).toBe(PAYMENTS); // none charged twice
    // The killed consumers never committed (60 s interval), so the last one read every record from the start:
    // what they had charged came back to it as duplicates, with the upstream ones.
    expect(r.last.charged + r.last.duplicates).toBe(r.records);
    expect(r.last.charged).toBeLessThan(PAYMENTS); // the killed consumers did charge before dying
    expect(r.last.duplicates).toBeGreaterThan(r.records - PAYMENTS);
  }, 240_000);

  it('the control: with keys only in memory the same kills charge payments twice (what the store prevents)', async () => {
    const PAYMENTS = 600;
    const r = await scenario('memory', PAYMENTS, 3);
    expect(r.distinct).toBe(PAYMENTS); // at least once: nothing is lost
    expect(r.rows).toBeGreaterThan(PAYMENTS); // but redeliveries after the kills were charged again
  }, 240_000);

  it('Redis store: no payment missing; a payment charged twice only in the window between charge and mark', async () => {
    const PAYMENTS = 600;
    const r = await scenario('redis', PAYMENTS, 3);
    expect(r.distinct).toBe(PAYMENTS);
    // each kill can leave at most the charges in flight at that moment unmarked (one per partition here)
    expect(r.rows - PAYMENTS).toBeLessThanOrEqual(3 * 3);
  }, 240_000);
});
