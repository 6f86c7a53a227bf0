/**
 * The stores against real servers: PostgreSQL and Redis from Debian, each
 * started on loopback with a private data directory (tools/test-servers.mjs).
 */
import pg from 'pg';
import { createClient } from 'redis';
import { startPostgres, startRedis, type TestServer } from '../../../tools/test-servers.mjs';
import { MemoryStore, PostgresStore, RedisStore, type IdempotencyStore } from '../src/index.js';

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('PostgresStore (real PostgreSQL)', () => {
  let server: TestServer;
  let pool: pg.Pool;

  beforeAll(async () => {
    server = await startPostgres();
    pool = new pg.Pool({ connectionString: server.url, max: 8 });
    await pool.query('CREATE TABLE charges (id serial PRIMARY KEY, payment_id text NOT NULL, amount int NOT NULL)');
  }, 60_000);

  afterAll(async () => {
    await pool?.end();
    await server?.stop();
  });

  beforeEach(async () => {
    await pool.query('TRUNCATE charges');
  });

  async function charges(paymentId: string): Promise<number> {
    const r = await pool.query('SELECT count(*)::int AS n FROM charges WHERE payment_id = $1', [paymentId]);
    return r.rows[0].n as number;
  }

  it('runs the effect once per key and commits it with the key', async () => {
    const store = new PostgresStore<pg.PoolClient>({ pool, scope: 'payments' });
    await store.init();
    await store.init(); // idempotent
    const charge = (client: pg.PoolClient) => client.query('INSERT INTO charges (payment_id, amount) VALUES ($1, 5)', ['p1']).then(() => undefined);
    expect(await store.runOnce('p1', charge)).toBe('processed');
    expect(await store.runOnce('p1', charge)).toBe('duplicate');
    expect(await charges('p1')).toBe(1);
    // another scope (another application) has its own keys
    const other = new PostgresStore<pg.PoolClient>({ pool, scope: 'refunds' });
    expect(await other.runOnce('p1', async () => undefined)).toBe('processed');
  });

  it('an effect that throws rolls back its writes and the key, so the record can run again', async () => {
    const store = new PostgresStore<pg.PoolClient>({ pool, scope: 'payments' });
    await store.init();
    await expect(
      store.runOnce('p2', async (client) => {
        await client.query('INSERT INTO charges (payment_id, amount) VALUES ($1, 5)', ['p2']);
        throw new Error('card declined by a flaky gateway');
      }),
    ).rejects.toThrow('flaky gateway');
    expect(await charges('p2')).toBe(0);
    expect(await store.runOnce('p2', (c) => c.query("INSERT INTO charges (payment_id, amount) VALUES ('p2', 5)").then(() => undefined))).toBe('processed');
    expect(await charges('p2')).toBe(1);
  });

  it('a connection lost mid-effect (a crashed consumer) leaves neither the effect nor the key', async () => {
    const store = new PostgresStore<pg.PoolClient>({ pool, scope: 'payments' });
    await store.init();
    await expect(
      store.runOnce('p3', async (client) => {
        await client.query("INSERT INTO charges (payment_id, amount) VALUES ('p3', 5)");
        // the server ends this session, as if the consumer's process had died before COMMIT
        await pool.query('SELECT pg_terminate_backend($1)', [(client as unknown as { processID: number }).processID]);
        await client.query('SELECT 1');
      }),
    ).rejects.toThrow();
    expect(await charges('p3')).toBe(0);
    expect(await store.runOnce('p3', (c) => c.query("INSERT INTO charges (payment_id, amount) VALUES ('p3', 5)").then(() => undefined))).toBe('processed');
    expect(await charges('p3')).toBe(1);
  });

  it('two deliveries of one key at once: one runs, the other waits for its commit and is a duplicate', async () => {
    const store = new PostgresStore<pg.PoolClient>({ pool, scope: 'payments' });
    await store.init();
    const charge = async (client: pg.PoolClient) => {
      await client.query("INSERT INTO charges (payment_id, amount) VALUES ('p4', 5)");
      await delay(200);
    };
    const outcomes = await Promise.all([store.runOnce('p4', charge), store.runOnce('p4', charge)]);
    expect(outcomes.sort()).toEqual(['duplicate', 'processed']);
    expect(await charges('p4')).toBe(1);
  });

  it('prune forgets old keys of its scope only; bad names and scopes are refused', async () => {
    const store = new PostgresStore<pg.PoolClient>({ pool, scope: 'prune-me' });
    await store.init();
    await store.runOnce('old', async () => undefined);
    await pool.query("UPDATE mq_processed_keys SET processed_at = now() - interval '2 hours' WHERE scope = 'prune-me'");
    await store.runOnce('new', async () => undefined);
    expect(await store.prune(60 * 60 * 1000)).toBe(1);
    expect(await store.runOnce('old', async () => undefined)).toBe('processed');
    expect(await store.runOnce('new', async () => undefined)).toBe('duplicate');
    expect(() => new PostgresStore<pg.PoolClient>({ pool, scope: 's', table: 'keys; DROP TABLE charges' })).toThrow(/plain SQL identifier/);
    expect(() => new PostgresStore<pg.PoolClient>({ pool, scope: '' })).toThrow(/scope/);
  });
});

describe('RedisStore (real Redis)', () => {
  let server: TestServer;
  let redis: ReturnType<typeof createClient>;

  beforeAll(async () => {
    server = await startRedis();
    redis = createClient({ url: server.url });
    await redis.connect();
  }, 60_000);

  afterAll(async () => {
    await redis?.quit();
    await server?.stop();
  });

  it('runs the effect once per key and remembers it for the ttl', async () => {
    const store = new RedisStore({ redis, scope: 'payments', ttlMs: 60_000 });
    let runs = 0;
    expect(await store.runOnce('r1', async () => void runs++)).toBe('processed');
    expect(await store.runOnce('r1', async () => void runs++)).toBe('duplicate');
    expect(runs).toBe(1);
    expect(await redis.get('mq:idem:payments:r1')).toBe('done');
    const ttl = await redis.pTTL('mq:idem:payments:r1');
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('an effect that throws releases its claim: the record can run again at once', async () => {
    const store = new RedisStore({ redis, scope: 'payments' });
    await expect(store.runOnce('r2', async () => Promise.reject(new Error('gateway down')))).rejects.toThrow('gateway down');
    expect(await redis.get('mq:idem:payments:r2')).toBeNull();
    expect(await store.runOnce('r2', async () => undefined)).toBe('processed');
  });

  it('a claim left by a crashed consumer holds until its lease expires, then the record runs (the window: at least once)', async () => {
    const store = new RedisStore({ redis, scope: 'payments', leaseMs: 5_000 });
    await redis.set('mq:idem:payments:r3', 'processing:crashed', { PX: 400 });
    const started = Date.now();
    let runs = 0;
    expect(await store.runOnce('r3', async () => void runs++)).toBe('processed');
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(runs).toBe(1);
  });

  it('two deliveries of one key at once: one runs, the other waits and is a duplicate', async () => {
    const store = new RedisStore({ redis, scope: 'payments' });
    let runs = 0;
    const effect = async () => {
      runs++;
      await delay(150);
    };
    const outcomes = await Promise.all([store.runOnce('r4', effect), store.runOnce('r4', effect)]);
    expect(outcomes.sort()).toEqual(['duplicate', 'processed']);
    expect(runs).toBe(1);
  });

  it('refuses bad options', () => {
    expect(() => new RedisStore({ redis, scope: '' })).toThrow(/scope/);
    expect(() => new RedisStore({ redis, scope: 's', leaseMs: 0 })).toThrow(/leaseMs/);
  });
});

describe('MemoryStore', () => {
  it('dedupes, serialises one key, retries after a throw and forgets the oldest past maxKeys', async () => {
    const store: IdempotencyStore & { size: number } = new MemoryStore({ maxKeys: 2 });
    let runs = 0;
    const effect = async () => {
      runs++;
      await delay(20);
    };
    expect((await Promise.all([store.runOnce('a', effect), store.runOnce('a', effect)])).sort()).toEqual(['duplicate', 'processed']);
    await expect(store.runOnce('b', async () => Promise.reject(new Error('x')))).rejects.toThrow('x');
    expect(await store.runOnce('b', effect)).toBe('processed');
    expect(await store.runOnce('c', effect)).toBe('processed');
    expect(store.size).toBe(2);
    expect(await store.runOnce('a', effect)).toBe('processed'); // forgotten: the documented bound
    expect(runs).toBe(4);
    expect(() => new MemoryStore({ maxKeys: 0 })).toThrow(/maxKeys/);
  });
});
