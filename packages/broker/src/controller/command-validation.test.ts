/**
 * Every metadata command is checked in the controller before it is
 * committed, whatever door it came through: a real one-voter RaftController
 * gets the commands a hostile ControllerForward carried (handleForward, as
 * the broker's handler calls it), and nothing that breaks a rule reaches the
 * metadata log.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { freePort, waitFor } from '../test-support/net.js';
import type { MetadataCommand } from './commands.js';
import { RaftController } from './controller.js';
import type { CommandLimits } from './command-limits.js';

const logger = pino({ level: 'silent' });



describe('controller: commands are validated before they are committed', () => {
  let dir = '';
  let ctrl: RaftController | undefined;

  async function start(limits: Partial<CommandLimits> = {}): Promise<RaftController> {
    dir = await mkdtemp(path.join(tmpdir(), 'mq-validate-'));
    ctrl = new RaftController(
      { brokerId: 1, voters: `1@127.0.0.1:${await freePort()}`, tickMs: 20, sessionTimeoutMs: 600, livenessCheckMs: 50, fsync: false, limits },
      { logger, forward: async () => ({ ok: false, code: 'NOT_CONTROLLER', message: 'single voter' }) },
    );
    await ctrl.start(dir);
    await waitFor(() => ctrl!.isActive);
    const c = ctrl;
    await c.submit({ type: 'registerBroker', id: 1, host: '127.0.0.1', port: 9092, httpPort: 9093, rack: '', incarnation: 'run1' }, 3000);
    await waitFor(() => c.metadata.broker(1)?.fenced === false);
    return c;
  }

  afterEach(async () => {
    await ctrl?.close();
    ctrl = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  const forward = (c: RaftController, command: unknown) => c.handleForward(command as MetadataCommand, 3000);
  const topic = (name: string, numPartitions = 1, configs: Record<string, string> = {}, topicId = `id-${name.length}-${numPartitions}`): MetadataCommand => ({
    type: 'createTopic',
    name,
    topicId,
    numPartitions,
    replicationFactor: 1,
    configs,
  });

  it('one CreatePartitions request takes the whole cluster down: a count past topic.max.partitions is refused and never committed', async () => {
    const c = await start({ maxPartitionsPerTopic: 100 });
    expect(await forward(c, topic('grow'))).toMatchObject({ ok: true });
    const commit = c.status().raftCommit;
    const r = await forward(c, { type: 'createPartitions', name: 'grow', count: 100_000 });
    expect(r).toMatchObject({ ok: false, code: 'INVALID_PARTITIONS' });
    expect(c.metadata.topic('grow')!.partitions).toHaveLength(1);
    expect(c.status().raftCommit).toBe(commit);
    // Through the broker's own submit (CreatePartitions from the client API) the same.
    await expect(c.submit({ type: 'createPartitions', name: 'grow', count: 150 }, 3000)).rejects.toMatchObject({ code: 'INVALID_PARTITIONS' });
    expect(await forward(c, { type: 'createPartitions', name: 'grow', count: 100 })).toMatchObject({ ok: true });
    expect(await forward(c, topic('wide', 101))).toMatchObject({ ok: false, code: 'INVALID_PARTITIONS' });
  });

  it('one request, thousands of partitions: max.partitions.per.request and the per-broker replica budget bound every command', async () => {
    const c = await start({ maxPartitionsPerRequest: 500, maxReplicasPerBroker: 1200 });
    const big = await forward(c, topic('big', 10_000));
    expect(big).toMatchObject({ ok: false, code: 'INVALID_PARTITIONS' });
    expect(!big.ok && big.message).toContain('max.partitions.per.request');
    expect(await forward(c, topic('a', 500))).toMatchObject({ ok: true });
    expect(await forward(c, { type: 'createPartitions', name: 'a', count: 1000 })).toMatchObject({ ok: true });
    const over = await forward(c, topic('b', 300));
    expect(over).toMatchObject({ ok: false, code: 'POLICY_VIOLATION' });
    expect(!over.ok && over.message).toContain('max.partition.replicas.per.broker');
    expect(c.metadata.replicaCount()).toBe(1000);
    // Concurrent requests are checked one after another: together they cannot overrun the budget.
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => forward(c, topic(`c${i}`, 50))));
    expect(results.filter((r) => r.ok)).toHaveLength(4);
    expect(c.metadata.replicaCount()).toBe(1200);
  });

  it('ControllerForward path traversal: every forwarded command is validated as if it came from the client API', async () => {
    const c = await start();
    const cases: [unknown, string][] = [
      [topic('../../fz-escape-probe'), 'INVALID_TOPIC'],
      [topic('a/b'), 'INVALID_TOPIC'],
      [topic('..'), 'INVALID_TOPIC'],
      [topic('x'.repeat(250)), 'INVALID_TOPIC'],
      [topic('ok-name', 1, {}, '../../etc'), 'INVALID_REQUEST'],
      [topic('tiny-segments', 1, { 'segment.bytes': '1' }), 'INVALID_CONFIG'],
      [topic('unknown-config', 1, { 'no.such.key': '1' }), 'INVALID_CONFIG'],
      [topic('min-isr', 1, { 'min.insync.replicas': '2' }), 'INVALID_CONFIG'],
      [{ type: 'deleteTopic', name: '../x' }, 'INVALID_TOPIC'],
      [{ type: 'createPartitions', name: '../x', count: 2 }, 'INVALID_TOPIC'],
      [{ type: 'registerBroker', id: 77, host: 'a b', port: 1, httpPort: 2, rack: '', incarnation: 'r1' }, 'INVALID_REQUEST'],
      [{ type: 'registerBroker', id: 77, host: '127.0.0.1', port: 70_000, httpPort: 2, rack: '', incarnation: 'r1' }, 'INVALID_REQUEST'],
      [{ type: 'registerBroker', id: 77, host: '127.0.0.1', port: 1, httpPort: 2, rack: '', incarnation: '../r1' }, 'INVALID_REQUEST'],
      [{ type: 'allocateProducerIds', brokerId: 1, count: 2 ** 52 }, 'INVALID_REQUEST'],
      [{ type: 'alterTopicConfigs', name: '../x', topicId: 'abc', set: {}, delete: [] }, 'INVALID_TOPIC'],
      [{ type: 'alterTopicConfigs', name: 'x', topicId: 'abc', set: { 'segment.bytes': '1' }, delete: [] }, 'INVALID_CONFIG'],
      [{ type: 'alterTopicConfigs', name: 'x', topicId: 'abc', set: {}, delete: 'all' }, 'INVALID_REQUEST'],
    ];
    const commit = c.status().raftCommit;
    for (const [command, code] of cases) expect({ command, result: await forward(c, command) }).toMatchObject({ command, result: { ok: false, code } });
    expect(c.status().raftCommit).toBe(commit);
    expect(c.metadata.topics()).toEqual([]);
    expect(c.metadata.brokers().map((b) => b.id)).toEqual([1]);
  });

  it('alterTopicConfigs is held to the limits a topic is created with: min.insync.replicas above the replication factor, max.message.bytes past a frame', async () => {
    const c = await start({ maxFrameBytes: 64 * 1024 });
    expect(await forward(c, topic('cfg'))).toMatchObject({ ok: true });
    const id = c.metadata.topic('cfg')!.topicId;
    const commit = c.status().raftCommit;
    expect(await forward(c, { type: 'alterTopicConfigs', name: 'cfg', topicId: id, set: { 'min.insync.replicas': '2' }, delete: [] })).toMatchObject({ ok: false, code: 'INVALID_CONFIG' });
    expect(await forward(c, { type: 'alterTopicConfigs', name: 'cfg', topicId: id, set: { 'max.message.bytes': String(1024 * 1024) }, delete: [] })).toMatchObject({ ok: false, code: 'INVALID_CONFIG' });
    expect(c.status().raftCommit).toBe(commit);
    expect(await forward(c, { type: 'alterTopicConfigs', name: 'cfg', topicId: id, set: { 'max.message.bytes': '4096' }, delete: [] })).toMatchObject({ ok: true });
    expect(c.metadata.topic('cfg')!.configs).toEqual({ 'max.message.bytes': '4096' });
  });

  it('names the cluster accepts but cannot serve: rp.col and rp_col collide, as on a single broker', async () => {
    const c = await start();
    expect(await forward(c, topic('rp.col'))).toMatchObject({ ok: true });
    expect(await forward(c, topic('rp_col', 1, {}, 'other-id'))).toMatchObject({ ok: false, code: 'INVALID_TOPIC' });
    expect(c.metadata.topic('rp_col')).toBeUndefined();
    // A 249-character name is Kafka's limit and is accepted (its partition directories are derived to fit; see partition-dir).
    expect(await forward(c, topic('y'.repeat(249)))).toMatchObject({ ok: true });
  });
});
