/**
 * Property tests of bad input: random frames never crash the broker or
 * leave a connection hanging (each gets an answer or a close), and a produce
 * batch with any flipped byte is either refused as corrupt or, when the byte
 * is outside the CRC (base offset, length-preserving epoch), stored intact.
 */
import fc from 'fast-check';
import { decodeBatchSync, encodeBatchSync, iterateBatches } from '@mq/protocol/batch';
import { errorNumber } from '@mq/protocol/errors';
import { createTopic, startTestBroker, TestClient, topicName, type TestBroker } from './helpers.js';

describe('fuzzed input', () => {
  let t: TestBroker;
  let watcher: TestClient;
  beforeAll(async () => {
    t = await startTestBroker();
    watcher = await TestClient.connect(t.url);
  });
  afterAll(async () => {
    await watcher.close();
    await t.cleanup();
  });

  it('answers or closes on any random frame, and keeps serving', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 0, maxLength: 300 }), async (bytes) => {
        const c = await TestClient.connect(t.url);
        const outcome = await new Promise<string>((resolve) => {
          c.ws.once('message', () => resolve('answered'));
          void c.closed.then(({ code }) => resolve(`closed ${code}`));
          c.sendRaw(Buffer.from(bytes));
        });
        expect(outcome).toMatch(/^(answered|closed 1007)$/);
        await c.close();
        const md = await watcher.request({ metadata: {} });
        expect(md.errorCode).toBe(0);
      }),
      { numRuns: 60 },
    );
  });

  it('never stores a corrupted batch: a flipped byte is refused or harmless', async () => {
    const name = topicName('flip');
    await createTopic(watcher, name, 1);
    const original = encodeBatchSync([{ key: 'k', value: 'the value' }, { value: 'second' }], { now: 1_700_000_000_000 });
    let stored = 0;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: original.length - 1 }), fc.integer({ min: 1, max: 255 }), async (pos, mask) => {
        const batch = Buffer.from(original);
        batch[pos]! ^= mask;
        const r = await watcher.request({ produce: { acks: 1, topics: [{ name, partitions: [{ partition: 0, records: batch }] }] } });
        const p = r.produce!.topics[0]!.partitions[0]!;
        if (p.errorCode === 0) {
          stored++;
          // Accepted only when the flip was outside the CRC's coverage: the records read back intact.
          expect(pos).toBeLessThan(21);
          const f = await watcher.request({ fetch: { topics: [{ name, partitions: [{ partition: 0, fetchOffset: p.baseOffset }] }] } });
          const buf = Buffer.from(f.fetch!.topics[0]!.partitions[0]!.records);
          const span = [...iterateBatches(buf)].find((s) => s.header.baseOffset === p.baseOffset)!;
          expect(decodeBatchSync(buf, span.position).records.map((x) => x.value?.toString())).toEqual(['the value', 'second']);
        } else {
          expect([errorNumber('CORRUPT_MESSAGE'), errorNumber('RECORD_TOO_LARGE'), errorNumber('UNSUPPORTED_COMPRESSION'), errorNumber('INVALID_RECORD')]).toContain(
            p.errorCode,
          );
        }
      }),
      { numRuns: 150 },
    );
    const lo = await watcher.request({ listOffsets: { topics: [{ name, partitions: [{ partition: 0, timestamp: -1 }] }] } });
    expect(lo.listOffsets!.topics[0]!.partitions[0]!.highWatermark).toBe(stored * 2);
  });
});
