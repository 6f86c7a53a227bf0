/**
 * Static membership against a real broker: a member with a group instance
 * id that is killed (SIGKILL) and restarted within its session timeout gets
 * the same partitions back, and the other members see no rebalance at all.
 */
import { cleanup, startBroker, uniqueName, type BrokerProcess } from './src/harness.js';
import { GROUP_BROKER_ARGS, Worker, createTopic, killAllWorkers, ownershipViolations, waitForOwners } from './groups-helpers.js';

describe('static membership', () => {
  let broker: BrokerProcess;
  beforeAll(async () => {
    broker = await startBroker({ args: GROUP_BROKER_ARGS });
  });
  afterAll(async () => {
    await killAllWorkers();
    await cleanup();
  });

  it('a restart within the session timeout keeps the assignment without a rebalance', async () => {
    const topic = uniqueName('static');
    const group = uniqueName('g');
    await createTopic(broker.bootstrap, topic, 6);
    const base = { bootstrap: broker.bootstrap, topic, group, sessionTimeoutMs: 10_000, heartbeatIntervalMs: 300 };
    const a = new Worker({ ...base, name: 'a', instanceId: 'host-a' });
    const b = new Worker({ ...base, name: 'b', instanceId: 'host-b' });
    await waitForOwners([a, b], [3, 3]);
    const aParts = a.owned();
    const bEvents = b.events.length;
    await a.kill();
    const a2 = new Worker({ ...base, name: 'a2', instanceId: 'host-a' });
    await waitForOwners([a2, b], [3, 3], 8000);
    expect(a2.owned()).toEqual(aParts);
    // b heard nothing: no revocation, no new assignment.
    await new Promise((r) => setTimeout(r, 1000));
    expect(b.events.slice(bEvents).filter((e) => e.ev !== 'record')).toEqual([]);
    expect(ownershipViolations([a, b, a2])).toEqual([]);
    await a2.stop();
    await b.stop();
  });
});
