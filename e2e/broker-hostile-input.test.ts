/**
 * Issue 22 ("Crashes") against a real broker process: a frame an attacker
 * builds from real traffic must get a typed error, and the broker must keep
 * serving everyone else (it used to exit).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { errorNumber } from '@mq/protocol/errors';
import { cleanup, makeTempDir, startBroker, uniqueName, type BrokerProcess } from './src/harness.js';
import { TestClient } from '../packages/broker/test/wire-client.js';

const SESSION_MS = 300;

describe('hostile input against a running broker', () => {
  let broker: BrokerProcess;
  let url: string;
  let watcher: TestClient;

  beforeAll(async () => {
    const dir = await makeTempDir('mq-e2e-cfg-');
    const config = path.join(dir, 'broker.properties');
    await writeFile(config, ['group.min.session.timeout.ms=100', 'group.initial.rebalance.delay.ms=0', 'offsets.topic.num.partitions=1', ''].join('\n'));
    broker = await startBroker({ args: ['--config', config] });
    url = `ws://${broker.bootstrap}`;
    watcher = await TestClient.connect(url);
  });

  afterAll(async () => {
    await watcher.close();
    await cleanup();
  });

  /** The broker is alive and serves a client that behaves: a group of its own goes through join and sync. */
  async function stillServes(): Promise<void> {
    expect(broker.exited).toBe(false);
    const group = uniqueName('good');
    const join = { groupId: group, sessionTimeoutMs: 10_000, protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.alloc(0) }] };
    const first = (await watcher.request({ joinGroup: join })).joinGroup!;
    expect(first.errorCode).toBe(errorNumber('MEMBER_ID_REQUIRED'));
    const joined = (await watcher.request({ joinGroup: { ...join, memberId: first.memberId } })).joinGroup!;
    expect(joined.errorCode).toBe(0);
    const sync = (await watcher.request({ syncGroup: { groupId: group, generationId: joined.generationId, memberId: joined.memberId, assignments: [] } })).syncGroup!;
    expect(sync.errorCode).toBe(0);
  }

  /**
   * What the attacker did: join (and rejoin with the member id given), then
   * go silent, so the session expires and a timer stores the now-empty group.
   * Returns the error code of the last join answered.
   */
  async function joinAndGoSilent(c: TestClient, clientId: string, join: Record<string, unknown>): Promise<number> {
    const request = { groupId: uniqueName('g'), sessionTimeoutMs: SESSION_MS, protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.alloc(0) }], ...join };
    // A refusal of the whole frame is a frame-level error code.
    const answer = async (join: Record<string, unknown>) => {
      const f = await c.request({ clientId, joinGroup: join });
      return f.joinGroup ?? { errorCode: f.errorCode, memberId: '' };
    };
    let r = await answer(request);
    if (r.errorCode === errorNumber('MEMBER_ID_REQUIRED')) r = await answer({ ...request, memberId: r.memberId });
    // Past the session timeout: the member expires and the empty group is stored (in a timer).
    await new Promise((resolve) => setTimeout(resolve, SESSION_MS * 4));
    return r.errorCode;
  }

  it('a long group id kills the broker: a 40,000-byte group id is INVALID_GROUP_ID and the broker keeps serving', async () => {
    const c = await TestClient.connect(url);
    const code = await joinAndGoSilent(c, 'attacker', { groupId: 'g'.repeat(40_000) });
    await stillServes();
    expect(code).toBe(errorNumber('INVALID_GROUP_ID'));
    await c.close();
  });

  it('a long frame client id (part of the member id) is INVALID_REQUEST and the broker keeps serving', async () => {
    const c = await TestClient.connect(url);
    const code = await joinAndGoSilent(c, 'c'.repeat(40_000), {});
    await stillServes();
    expect(code).toBe(errorNumber('INVALID_REQUEST'));
    await c.close();
  });

  it('a long or illegal group instance id is INVALID_REQUEST and the broker keeps serving', async () => {
    const c = await TestClient.connect(url);
    expect(await joinAndGoSilent(c, 'attacker', { groupInstanceId: 'i'.repeat(40_000) })).toBe(errorNumber('INVALID_REQUEST'));
    expect(await joinAndGoSilent(c, 'attacker', { groupInstanceId: 'host a/1' })).toBe(errorNumber('INVALID_REQUEST'));
    await stillServes();
    await c.close();
  });

  it('a rebalance timeout above 2^31-1 ms (it fired after 1 ms and ended the rebalance) is refused', async () => {
    const c = await TestClient.connect(url);
    const group = uniqueName('overflow');
    const join = { groupId: group, sessionTimeoutMs: 10_000, protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.alloc(0) }] };
    const first = (await c.request({ joinGroup: { ...join, rebalanceTimeoutMs: 4_257_207_169 } })).joinGroup!;
    expect(first.errorCode).toBe(errorNumber('INVALID_REQUEST'));
    expect(first.errorMessage).toMatch(/rebalance timeout 4257207169 ms is outside \[1, 2147483647\]/);
    const session = (await c.request({ joinGroup: { ...join, sessionTimeoutMs: 4_257_207_169 } })).joinGroup!;
    expect(session.errorCode).toBe(errorNumber('INVALID_SESSION_TIMEOUT'));
    await stillServes();
    await c.close();
  });
});
