/**
 * Delivery semantics with a consumer process that crashes (SIGKILL) in the
 * middle of its work, and a second member of the same group that takes over:
 * - at-least-once: records processed but not yet committed come again;
 *   nothing is skipped.
 * - at-most-once: offsets are committed before processing, so the records
 *   the crash interrupted are skipped; nothing is delivered twice.
 */
import { cleanup, startBroker, uniqueName, waitFor, type BrokerProcess } from './src/harness.js';
import { GROUP_BROKER_ARGS, Worker, createTopic, killAllWorkers, produce } from './groups-helpers.js';

const RECORDS = 100;

describe('delivery semantics across a consumer crash', () => {
  let broker: BrokerProcess;
  beforeAll(async () => {
    broker = await startBroker({ args: GROUP_BROKER_ARGS });
  });
  afterAll(async () => {
    await killAllWorkers();
    await cleanup();
  });

  async function scenario(delivery: 'at-least-once' | 'at-most-once') {
    const topic = uniqueName('jobs');
    const group = uniqueName('g');
    await createTopic(broker.bootstrap, topic, 1);
    await produce(broker.bootstrap, topic, RECORDS);
    const base = { bootstrap: broker.bootstrap, topic, group, sessionTimeoutMs: 2000, heartbeatIntervalMs: 200, maxPollRecords: 10 };
    // at-least-once: commit explicitly after every 10th record, crash after the 25th.
    // at-most-once: poll commits before handing out each batch of 10; crash after the 15th.
    const first = new Worker(
      delivery === 'at-least-once'
        ? { ...base, name: 'first', autoCommit: false, commitEvery: 10, crashAfter: 25 }
        : { ...base, name: 'first', delivery: 'at-most-once', crashAfter: 15 },
    );
    await first.waitExit();
    const second = new Worker({ ...base, name: 'second', delivery });
    await waitFor(() => second.records().some((r) => r.o === RECORDS - 1), { timeout: 30_000, message: 'the second consumer did not reach the end' });
    await second.stop();
    return { first: first.records().map((r) => r.o!), second: second.records().map((r) => r.o!) };
  }

  it('at-least-once: the crashed consumer\'s uncommitted records come again, nothing is skipped', async () => {
    const { first, second } = await scenario('at-least-once');
    expect(first).toEqual(Array.from({ length: 25 }, (_, i) => i));
    // Committed through offset 20 (after the 20th record); 20..24 were processed but not committed.
    expect(second[0]).toBe(20);
    expect(second).toEqual(Array.from({ length: RECORDS - 20 }, (_, i) => 20 + i));
    const all = new Set([...first, ...second]);
    expect(all.size).toBe(RECORDS);
  });

  it('at-most-once: the records the crash interrupted are skipped, none is delivered twice', async () => {
    const { first, second } = await scenario('at-most-once');
    expect(first).toEqual(Array.from({ length: 15 }, (_, i) => i));
    // The batch 10..19 was committed before processing: 15..19 are lost, 20.. come to the second consumer.
    expect(second[0]).toBe(20);
    const both = [...first, ...second];
    expect(new Set(both).size).toBe(both.length);
    expect(both).toHaveLength(RECORDS - 5);
  });
});
