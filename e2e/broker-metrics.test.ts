/**
 * GET /metrics of a real broker process, parsed with a Prometheus text parser: the documented series exist, are
 * well-formed, and move with what clients do (requests and their latency histogram, bytes per topic, partition
 * offsets, group lag, Raft state, Node's process metrics).
 */
import { createRequire } from 'node:module';
import { MqClient } from '@mq/client';
import { cleanup, startBroker, uniqueName, type BrokerProcess } from './src/harness.js';

const require = createRequire(import.meta.url);
interface Family {
  name: string;
  type: string;
  metrics: Array<{ labels?: Record<string, string>; value?: string; buckets?: Record<string, string>; count?: string; sum?: string }>;
}
const parsePrometheus = require('parse-prometheus-text-format') as (text: string) => Family[];

let broker: BrokerProcess;
beforeAll(async () => {
  broker = await startBroker();
}, 60_000);
afterAll(async () => {
  await cleanup();
});

type Scrape = Map<string, Family> & { text: string };

async function scrape(): Promise<Scrape> {
  const res = await fetch(`${broker.httpUrl}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  const text = await res.text();
  return Object.assign(new Map(parsePrometheus(text).map((f) => [f.name, f])), { text });
}

/**
 * One sample line of a labelled histogram (`name_bucket{le="+Inf",api="produce"}`, `name_count{api="produce"}`):
 * read from the text, since the parser merges a labelled histogram's series into one.
 */
function histogramSample(s: Scrape, line: string): number {
  const escaped = line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const m = new RegExp(`^${escaped} (\\S+)$`, 'm').exec(s.text);
  if (!m) throw new Error(`no ${line} in /metrics`);
  return Number(m[1]);
}

function value(families: Scrape, name: string, labels: Record<string, string> = {}): number {
  const f = families.get(name);
  if (!f) throw new Error(`no ${name} in /metrics`);
  const m = f.metrics.find((x) => Object.entries(labels).every(([k, v]) => x.labels?.[k] === v));
  if (!m) throw new Error(`no ${name}${JSON.stringify(labels)} in /metrics`);
  return Number(m.value ?? m.count);
}

describe('broker /metrics (prom-client)', () => {
  it('exposes the documented series and they move with traffic', async () => {
    const mq = new MqClient({ bootstrap: broker.bootstrap, clientId: 'metrics-test' });
    try {
      const topic = uniqueName('metrics');
      const group = uniqueName('metrics-group');
      await mq.admin().createTopic(topic, { numPartitions: 1 });
      const before = await scrape();

      for (const type of [
        ['mq_requests_total', 'counter'],
        ['mq_request_duration_seconds', 'histogram'],
        ['mq_requests_in_flight', 'gauge'],
        ['mq_partition_high_watermark', 'gauge'],
        ['mq_leader_partitions', 'gauge'],
        ['mq_under_replicated_partitions', 'gauge'],
        ['mq_under_min_isr_partitions', 'gauge'],
        ['mq_offline_partitions', 'gauge'],
        ['mq_produce_purgatory_size', 'gauge'],
        ['mq_fetch_purgatory_size', 'gauge'],
        ['mq_raft_term', 'gauge'],
        ['mq_raft_elections_total', 'counter'],
        ['mq_controller_changes_total', 'counter'],
        ['mq_controller_active', 'gauge'],
        ['mq_leader_elections_total', 'counter'],
        ['mq_isr_shrinks_total', 'counter'],
        ['process_cpu_seconds_total', 'counter'],
        ['process_resident_memory_bytes', 'gauge'],
        ['nodejs_eventloop_lag_p99_seconds', 'gauge'],
        ['nodejs_gc_duration_seconds', 'histogram'],
      ]) {
        expect([type[0], before.get(type[0]!)?.type]).toEqual([type[0], type[1]!.toUpperCase()]);
      }
      expect(value(before, 'mq_controller_active')).toBe(1);
      expect(value(before, 'mq_raft_term')).toBeGreaterThanOrEqual(1);
      // The one voter elected itself at start and so learned of a controller.
      expect(value(before, 'mq_raft_elections_total')).toBeGreaterThanOrEqual(1);
      expect(value(before, 'mq_controller_changes_total')).toBeGreaterThanOrEqual(1);
      expect(value(before, 'mq_fetch_purgatory_size', { kind: 'follower' })).toBe(0);
      expect(value(before, 'mq_partition_high_watermark', { topic, partition: '0' })).toBe(0);
      expect(value(before, 'mq_offline_partitions')).toBe(0);
      const producesBefore = before.text.includes('mq_request_duration_seconds_count{api="produce"}') ? histogramSample(before, 'mq_request_duration_seconds_count{api="produce"}') : 0;

      const producer = mq.producer({ acks: 'all' });
      for (let i = 0; i < 10; i++) await producer.send(topic, { key: `k${i}`, value: `value-${i}` });
      // A group reads all ten and commits them on close; five more records make its lag 5.
      const consumer = mq.consumer({ groupId: group, autoOffsetReset: 'earliest' });
      consumer.subscribe([topic]);
      const done = new AbortController();
      let seen = 0;
      await consumer.run({
        eachMessage: async () => {
          if (++seen === 10) done.abort();
        },
        signal: done.signal,
      });
      await consumer.close();
      for (let i = 0; i < 5; i++) await producer.send(topic, { value: `more-${i}` });

      // A consumer long-polling an empty topic is parked in the fetch purgatory until its wait runs out (its own
      // client: closing it closes the connection, which answers the parked fetch).
      const idle = uniqueName('metrics-idle');
      await mq.admin().createTopic(idle, { numPartitions: 1 });
      const waitingClient = new MqClient({ bootstrap: broker.bootstrap, clientId: 'metrics-waiting' });
      const stopWaiting = new AbortController();
      let waitingRun: Promise<void> | undefined;
      try {
        const waiting = waitingClient.consumer({ maxWaitMs: 30_000 });
        waiting.assign([{ topic: idle, partition: 0 }]);
        waitingRun = waiting.poll(60_000, { signal: stopWaiting.signal }).then(() => undefined);
        let parked = 0;
        for (let i = 0; i < 100 && parked < 1; i++) {
          parked = value(await scrape(), 'mq_fetch_purgatory_size', { kind: 'consumer' });
          if (parked < 1) await new Promise((r) => setTimeout(r, 100));
        }
        expect(parked).toBeGreaterThanOrEqual(1);
      } finally {
        stopWaiting.abort();
        await waitingRun?.catch(() => undefined);
        await waitingClient.close({ timeoutMs: 2000 });
      }
      let left = 1;
      for (let i = 0; i < 100 && left > 0; i++) {
        left = value(await scrape(), 'mq_fetch_purgatory_size', { kind: 'consumer' });
        if (left > 0) await new Promise((r) => setTimeout(r, 100));
      }
      expect(left).toBe(0);

      const after = await scrape();
      expect(value(after, 'mq_partition_high_watermark', { topic, partition: '0' })).toBe(15);
      const produces = histogramSample(after, 'mq_request_duration_seconds_count{api="produce"}');
      expect(produces).toBeGreaterThanOrEqual(producesBefore + 15);
      expect(value(after, 'mq_requests_total', { api: 'produce' })).toBeGreaterThanOrEqual(15);
      expect(value(after, 'mq_topic_bytes_in_total', { topic })).toBeGreaterThan(15 * 7);
      expect(value(after, 'mq_partition_bytes_in_total', { topic, partition: '0' })).toBe(value(after, 'mq_topic_bytes_in_total', { topic }));
      expect(value(after, 'mq_topic_bytes_out_total', { topic })).toBeGreaterThan(10 * 7);
      expect(value(after, 'mq_group_lag', { group, topic, partition: '0' })).toBe(5);
      expect(value(after, 'mq_group_members', { group })).toBe(0);
      expect(value(after, 'mq_partition_segments', { topic, partition: '0' })).toBeGreaterThanOrEqual(1);
      expect(histogramSample(after, 'mq_request_duration_seconds_bucket{le="+Inf",api="produce"}')).toBe(produces);
      expect(histogramSample(after, 'mq_request_duration_seconds_sum{api="produce"}')).toBeGreaterThan(0);
      expect(value(after, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    } finally {
      await mq.close({ timeoutMs: 2000 });
    }
  }, 90_000);
});
