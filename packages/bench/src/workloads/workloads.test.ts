import { createMemoryTarget } from '../targets/memory.js';
import { collectEnvironment } from '../env.js';
import type { BenchResult } from '../result.js';
import type { BenchTarget, TargetProducer } from '../target.js';
import { runConsume } from './consume.js';
import { runE2e } from './e2e.js';
import { runProduce } from './produce.js';

const environment = collectEnvironment();
const ctx = { progress: null, environment };

function expectShape(r: BenchResult): void {
  for (const k of ['records', 'bytes', 'seconds', 'recordsPerSec', 'mbPerSec'] as const) expect(typeof r[k]).toBe('number');
  expect(r.environment).toMatchObject({ cores: expect.any(Number), node: process.version });
  expect(typeof r.parameters.topic).toBe('string');
}

describe('produce workload', () => {
  it('sends every record once and measures send-to-ack latency', async () => {
    const r = await runProduce(createMemoryTarget({ ackDelayMs: 2 }), { records: 5000, size: 64, partitions: 3, keys: 'uniform:10', producers: 2, window: 100 }, ctx);
    expectShape(r);
    expect(r.records).toBe(5000);
    expect(r.bytes).toBeGreaterThanOrEqual(5000 * 64);
    expect(r.errors).toBe(0);
    expect(r.latencyMs!.p50).toBeGreaterThanOrEqual(1.5);
    expect(r.parameters).toMatchObject({ records: 5000, size: 64, partitions: 3, keys: 'uniform:10', producers: 2 });
  });

  it('a memory target that does not retain acknowledges every send and keeps nothing (no BUFFER_FULL past maxRecords)', async () => {
    const r = await runProduce(createMemoryTarget({ retain: false, maxRecords: 10 }), { records: 2000, size: 32, window: 64 }, ctx);
    expect(r.records).toBe(2000);
    expect(r.errors).toBe(0);
    const kept = await runProduce(createMemoryTarget({ maxRecords: 10 }), { records: 20, size: 32, window: 64 }, ctx);
    expect(kept.errors).toBe(10);
  });

  it('never has more than `window` records outstanding', async () => {
    const inner = createMemoryTarget({ ackDelayMs: 1 });
    let outstanding = 0;
    let peak = 0;
    const target: BenchTarget = {
      ...inner,
      async createProducer(o) {
        const p = await inner.createProducer(o);
        const wrapped: TargetProducer = {
          ...p,
          send(k, v) {
            outstanding++;
            peak = Math.max(peak, outstanding);
            return p.send(k, v).finally(() => outstanding--);
          },
        };
        return wrapped;
      },
    };
    const r = await runProduce(target, { records: 2000, window: 7 }, ctx);
    expect(r.records).toBe(2000);
    expect(peak).toBe(7);
  });

  it('runs the warm-up load first and counts only the measured records', async () => {
    const target = createMemoryTarget({ ackDelayMs: 1 });
    let sends = 0;
    const createProducer = target.createProducer.bind(target);
    target.createProducer = async (opts) => {
      const p = await createProducer(opts);
      const send = p.send.bind(p);
      p.send = (key, value) => {
        sends++;
        return send(key, value);
      };
      return p;
    };
    const r = await runProduce(target, { records: 500, window: 20, warmup: 0.2 }, ctx);
    expect(r.records).toBe(500);
    expect(sends).toBeGreaterThan(500);
    expect(r.parameters).toMatchObject({ warmup: 0.2 });
    await expect(runProduce(createMemoryTarget(), { records: 10, warmup: -1 }, ctx)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('counts failed sends instead of hiding them', async () => {
    const r = await runProduce(createMemoryTarget({ maxRecords: 300 }), { records: 1000, window: 50 }, ctx);
    expect(r.records).toBe(300);
    expect(r.errors).toBe(700);
    expect(r.firstError).toMatch(/BUFFER_FULL/);
  });

  it('measures open-loop latency from the intended send time', async () => {
    // Acks take 20 ms and only 1 record may be outstanding: at 1000/s the
    // sender falls behind, and open-loop latency must show the queueing.
    const r = await runProduce(createMemoryTarget({ ackDelayMs: 20 }), { records: 20, window: 1, rate: 1000 }, ctx);
    expect(r.records).toBe(20);
    expect(r.targetRate).toBe(1000);
    expect(r.latencyMs!.max).toBeGreaterThan(20 * 19 * 0.9);
  });

  it('open loop: acknowledgements that cut the wait for the next due record never make it send early', async () => {
    // Acks arrive on the event loop (setImmediate, as I/O callbacks would) while the loop waits for the
    // next due record: it wakes, sends what is due, and keeps to the schedule (8,000 at 20,000/s ≈ 0.4 s).
    const inner = createMemoryTarget({ retain: false });
    const target: BenchTarget = {
      ...inner,
      async createProducer(o) {
        const p = await inner.createProducer(o);
        return { ...p, send: () => new Promise<void>((resolve) => setImmediate(resolve)) };
      },
    };
    const r = await runProduce(target, { records: 8000, rate: 20_000, window: 1000 }, ctx);
    expect(r.records).toBe(8000);
    expect(r.errors).toBe(0);
    expect(r.seconds).toBeGreaterThan(0.39);
    expect(r.seconds).toBeLessThan(2);
  });

  it('stops a duration run on time', async () => {
    const r = await runProduce(createMemoryTarget({ ackDelayMs: 1, maxRecords: 10_000_000 }), { duration: 0.3, window: 64 }, ctx);
    expect(r.seconds).toBeGreaterThan(0.25);
    expect(r.seconds).toBeLessThan(1.5);
    expect(r.records).toBeGreaterThan(0);
  });
});

describe('consume workload', () => {
  it('prepares a topic and reads every record back alone', async () => {
    const r = await runConsume(createMemoryTarget(), { records: 4000, size: 100, partitions: 2 }, ctx);
    expectShape(r);
    expect(r.workload).toBe('consume');
    expect(r.records).toBe(4000);
    expect(r.bytes).toBe(400_000);
    expect(r.latencyMs).toBeNull();
    expect(r.errors).toBe(0);
  });

  it('reads with a group of consumers sharing the partitions', async () => {
    const r = await runConsume(createMemoryTarget(), { records: 3000, partitions: 4, consumers: 3, group: 'g1' }, ctx);
    expect(r.records).toBe(3000);
    expect(r.parameters).toMatchObject({ consumers: 3, group: 'g1' });
  });

  it('reports missing records when the topic holds fewer than asked', async () => {
    const target = createMemoryTarget();
    await runConsume(target, { records: 100, topic: 'short' }, ctx);
    const r = await runConsume(target, { records: 150, topic: 'short', prepare: false, idleTimeoutMs: 300 }, ctx);
    expect(r.records).toBe(100);
    expect(r.errors).toBe(50);
    expect(r.firstError).toMatch(/50 of 150/);
  });
});

describe('e2e workload', () => {
  it('delivers every record at the target rate and measures produce-to-delivery latency', async () => {
    const r = await runE2e(createMemoryTarget(), { rate: 2000, records: 600, size: 32 }, ctx);
    expectShape(r);
    expect(r.records).toBe(600);
    expect(r.targetRate).toBe(2000);
    expect(r.seconds).toBeGreaterThan(0.25);
    expect(r.latencyMs!.p50).toBeLessThan(50);
    expect(r.latencyCurve!.length).toBeGreaterThan(5);
  });
});
