/**
 * The well-behaved client that runs beside the fuzzer: it produces acks=all
 * records one after another (timing each acknowledgment) and consumes them,
 * then checks that every acknowledged {partition, offset} holds exactly the
 * record acknowledged. With `trace` it keeps each acknowledgment's time.
 */
import { MqClient } from '@mq/client';

export const STEADY_PARTITIONS = 3;

/** `clock()` names the fuzz frame being sent now, so a slow acknowledgment can be laid beside the frames sent while it waited. */
export async function startSteadyClient(bootstrap, topic, clock = () => 0, { trace = false } = {}) {
  const client = new MqClient({ bootstrap, clientId: 'fuzz-steady' });
  await client.admin().createTopic(topic, { numPartitions: STEADY_PARTITIONS });
  const producer = client.producer({ acks: 'all', lingerMs: 0 });
  const consumer = client.consumer({ autoOffsetReset: 'earliest' });
  consumer.assign(Array.from({ length: STEADY_PARTITIONS }, (_, partition) => ({ topic, partition })));
  const acked = new Map();
  const seen = new Map();
  const latencies = [];
  /** With `trace`: each acknowledgment's wall-clock time and latency. */
  const acks = [];
  const slowest = [];
  const errors = [];
  let running = true;
  let seq = 0;

  const produceLoop = (async () => {
    while (running) {
      const value = `steady-${seq}-${'v'.repeat(seq % 64)}`;
      const key = `k-${seq % 17}`;
      seq++;
      const t0 = performance.now();
      const fromFrame = clock();
      try {
        const m = await producer.send(topic, { key, value });
        const ms = performance.now() - t0;
        latencies.push(ms);
        if (trace) acks.push([Date.now(), Math.round(ms)]);
        slowest.push({ ms, fromFrame, toFrame: clock() });
        slowest.sort((a, b) => b.ms - a.ms);
        if (slowest.length > 3) slowest.pop();
        acked.set(`${m.partition}:${m.offset}`, value);
      } catch (err) {
        errors.push(`produce ${seq}: ${err.message}`);
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  const consumeLoop = (async () => {
    while (running) {
      try {
        for (const r of await consumer.poll(200)) seen.set(`${r.partition}:${r.offset}`, r.value?.toString());
      } catch (err) {
        errors.push(`consume: ${err.message}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  })();

  return {
    latencies,
    acks,
    async finish({ readBackTimeoutMs = 30_000 } = {}) {
      running = false;
      await produceLoop;
      await consumeLoop;
      const deadline = Date.now() + readBackTimeoutMs;
      while ([...acked.keys()].some((k) => !seen.has(k)) && Date.now() < deadline) {
        for (const r of await consumer.poll(200)) seen.set(`${r.partition}:${r.offset}`, r.value?.toString());
      }
      const bad = [];
      for (const [k, v] of acked) if (seen.get(k) !== v) bad.push(`${k}: acknowledged ${JSON.stringify(v)}, read ${JSON.stringify(seen.get(k))}`);
      await client.close({ timeoutMs: 2000 }).catch(() => undefined);
      const sorted = [...latencies].sort((a, b) => a - b);
      const q = (p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : NaN);
      return { slowest, acked: acked.size, bad, errors, p50Ms: q(0.5), p99Ms: q(0.99), maxMs: sorted.at(-1) ?? NaN };
    },
  };
}
