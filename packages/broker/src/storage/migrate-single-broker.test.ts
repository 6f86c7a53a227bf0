/**
 * The single-broker data directory checked in as e2e/fixtures/single-broker-v1
 * opens as a one-node cluster's: logs moved to cluster-logs/, topics created
 * with their old ids, producer ids above the old block, topics.json gone
 * last; and a start that crashed part way resumes.
 */
import { cp, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { startBroker, type Broker } from '../broker.js';
import { TestClient } from '../../test/wire-client.js';
import { moveSingleBrokerLogs, readSingleBrokerLayout, SINGLE_BROKER_TOPICS_FILE } from './migrate-single-broker.js';

const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../e2e/fixtures/single-broker-v1');
const quiet = { logger: pino({ level: 'silent' }) };

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

describe('migrating a single broker data directory', () => {
  let dir: string;
  let broker: Broker | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'mq-migrate-'));
    await cp(FIXTURE, dir, { recursive: true });
  });
  afterEach(async () => {
    await broker?.close();
    broker = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('reads the old layout: topics with ids, partition counts and configs, and the producer-id block', async () => {
    const layout = (await readSingleBrokerLayout(dir))!;
    expect(layout.producerIdsEnd).toBe(1000);
    expect(layout.topics.map((t) => [t.name, t.topicId, t.partitions]).sort()).toEqual([
      ['__consumer_offsets', 'fgt6_5XSJYKcg4ox21e0qg', 1],
      ['accounts', 'LzMMFZplN1oNn3mcIaQlSA', 1],
      ['orders', 'OvUymXNhKfFIMsKqauxk3g', 2],
    ]);
    expect(layout.topics.find((t) => t.name === 'accounts')!.configs).toEqual({ 'cleanup.policy': 'compact', 'delete.retention.ms': '3600000' });
    expect(await readSingleBrokerLayout(path.join(dir, 'orders-0'))).toBeUndefined();
  });

  it('refuses a damaged producer-id block or topics.json with STORAGE_ERROR rather than reuse ids or lose topics', async () => {
    await writeFile(path.join(dir, 'producer-id-block'), 'garbage');
    await expect(readSingleBrokerLayout(dir)).rejects.toMatchObject({ code: 'STORAGE_ERROR' });
    await writeFile(path.join(dir, SINGLE_BROKER_TOPICS_FILE), '{"topics": ');
    await expect(startBroker({ dataDir: dir, port: 0, httpPort: 0 }, quiet)).rejects.toMatchObject({ code: 'STORAGE_ERROR' });
  });

  async function checkServed(b: Broker): Promise<void> {
    const c = await TestClient.connect(`ws://127.0.0.1:${b.port}`);
    try {
      const md = await c.request({ metadata: { topics: ['orders', 'accounts'] } });
      expect(md.metadata!.topics.map((t) => [t.name, t.topicId, t.partitions.map((p) => [p.leader, p.replicas])])).toEqual([
        ['orders', 'OvUymXNhKfFIMsKqauxk3g', [[1, [1]], [1, [1]]]],
        ['accounts', 'LzMMFZplN1oNn3mcIaQlSA', [[1, [1]]]],
      ]);
      const lo = await c.request({ listOffsets: { topics: [{ name: 'orders', partitions: [{ partition: 0, timestamp: -1 }, { partition: 1, timestamp: -1 }] }] } });
      expect(lo.listOffsets!.topics[0]!.partitions.map((p) => [p.errorCode, p.offset])).toEqual([
        [0, 12],
        [0, 12],
      ]);
      const init = await c.request({ initProducerId: { transactionalId: '' } });
      expect(Number(init.initProducerId!.producerId)).toBeGreaterThanOrEqual(1000);
    } finally {
      await c.close();
    }
  }

  it('moves the logs, creates the topics with their ids, burns the old producer ids and removes topics.json last', async () => {
    broker = await startBroker({ dataDir: dir, port: 0, httpPort: 0 }, quiet);
    expect(broker.brokerId).toBe(1);
    const top = await readdir(dir);
    expect(top.filter((d) => /-\d+$/.test(d))).toEqual([]);
    expect(top).not.toContain(SINGLE_BROKER_TOPICS_FILE);
    expect(top).not.toContain('producer-id-block');
    expect((await readdir(path.join(dir, 'cluster-logs'))).filter((d) => !d.endsWith('.hw')).sort()).toEqual([
      '__consumer_offsets-0.fgt6_5XSJYKcg4ox21e0qg',
      'accounts-0.LzMMFZplN1oNn3mcIaQlSA',
      'orders-0.OvUymXNhKfFIMsKqauxk3g',
      'orders-1.OvUymXNhKfFIMsKqauxk3g',
    ]);
    await checkServed(broker);
    // The next start is an ordinary one-node cluster start.
    await broker.close();
    broker = await startBroker({ dataDir: dir, port: 0, httpPort: 0 }, quiet);
    await checkServed(broker);
  });

  it('resumes a start that crashed after moving the logs (topics.json still there)', async () => {
    const layout = (await readSingleBrokerLayout(dir))!;
    expect(await moveSingleBrokerLogs(dir, layout, quiet.logger)).toBe(4);
    expect(await exists(path.join(dir, 'orders-0'))).toBe(false);
    // Moving again moves nothing.
    expect(await moveSingleBrokerLogs(dir, layout, quiet.logger)).toBe(0);
    broker = await startBroker({ dataDir: dir, port: 0, httpPort: 0 }, quiet);
    expect(await exists(path.join(dir, SINGLE_BROKER_TOPICS_FILE))).toBe(false);
    await checkServed(broker);
  });

  it('refuses to start a cluster member on a single broker directory with topics', async () => {
    await expect(startBroker({ dataDir: dir, port: 0, httpPort: 0, config: { 'controller.quorum.voters': '1@127.0.0.1:19999' } }, quiet)).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringMatching(/start it once without cluster settings/),
    });
    expect(await exists(path.join(dir, 'orders-0'))).toBe(true);
  });
});
