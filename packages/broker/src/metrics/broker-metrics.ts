/**
 * The broker's Prometheus metrics, through prom-client: one registry per broker (several brokers can share a
 * process in tests and the simulator), Node's default process metrics (CPU, memory, GC, event-loop lag), and the
 * request path's counters and latency histograms. Counters the request path bumps are plain numbers read at scrape
 * time (no allocation per frame); a request's latency is one histogram observation on a per-API child.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { ParkedFetches } from '@mq/replication';
import { WindowRate } from './window-rate.js';

/** Request latency buckets, in seconds: 100 µs (a produce to the page cache) to 30 s (a long fetch wait). */
export const REQUEST_DURATION_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** A counter whose value is a plain number kept elsewhere, read at each scrape. */
export function counterOf(registry: Registry, name: string, help: string, read: () => number): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

/** A counter per label value from a Map of plain numbers, read at each scrape. */
function labelledCounterOf(registry: Registry, name: string, help: string, labels: string[], read: () => Iterable<[string[], number]>): void {
  new Counter({
    name,
    help,
    labelNames: labels,
    registers: [registry],
    collect() {
      this.reset();
      for (const [values, n] of read()) this.inc(Object.fromEntries(labels.map((l, i) => [l, values[i]!])), n);
    },
  });
}

export class BrokerMetrics {
  readonly registry = new Registry();
  readonly requests = new Map<string, number>();
  /** Requests dispatched and not yet answered, by API (fetches waiting for data among them). */
  readonly inFlight = new Map<string, number>();
  /** Whole requests refused, by "api\0code" (api "" when the frame named none the broker knows). */
  readonly refused = new Map<string, number>();
  /** Record bytes appended by produce requests, and record bytes sent to fetchers (consumers and followers), per topic. */
  readonly topicBytesIn = new Map<string, number>();
  readonly topicBytesOut = new Map<string, number>();
  /** ---- scaleout: record bytes appended by produce requests per partition ("topic\0partition"), to see a hot partition. */
  /** With the bytes per second over the last complete 10 s window (DescribeLogDirs answers it for partitions led here). */
  readonly partitionBytesIn: WindowRate;
  /** Fetch requests parked waiting for data (the fetch purgatory), counted by the fetch handler. */
  readonly parkedFetches = new ParkedFetches();
  badFrames = 0;
  connectionsAccepted = 0;
  bytesIn = 0;
  bytesOut = 0;
  private readonly latency: Histogram<'api'>;
  private readonly latencyByApi = new Map<string, { observe(v: number): void }>();

  constructor(options: { processMetrics?: boolean; clock?: () => number } = {}) {
    this.partitionBytesIn = new WindowRate(options.clock);
    const r = this.registry;
    if (options.processMetrics !== false) collectDefaultMetrics({ register: r });
    labelledCounterOf(r, 'mq_requests_total', 'Requests started, by API.', ['api'], () => [...this.requests].map(([api, n]) => [[api], n]));
    labelledCounterOf(r, 'mq_request_errors_total', 'Whole requests refused, by API and error code.', ['api', 'code'], () =>
      [...this.refused].map(([key, n]) => [key.split('\0'), n]),
    );
    const inFlight = this.inFlight;
    new Gauge({
      name: 'mq_requests_in_flight',
      help: 'Requests dispatched and not yet answered, by API (fetches waiting for data, acks=all produces waiting for the ISR).',
      labelNames: ['api'],
      registers: [r],
      collect() {
        this.reset();
        for (const [api, n] of inFlight) this.set({ api }, n);
      },
    });
    const parked = this.parkedFetches;
    new Gauge({
      name: 'mq_fetch_purgatory_size',
      help: 'Fetch requests parked waiting for data (minBytes not yet there), consumers and followers apart.',
      labelNames: ['kind'],
      registers: [r],
      collect() {
        this.set({ kind: 'consumer' }, parked.consumers);
        this.set({ kind: 'follower' }, parked.followers);
      },
    });
    this.latency = new Histogram({
      name: 'mq_request_duration_seconds',
      help: 'Time from a request being dispatched to its response being sent, by API (fetches include their wait for data).',
      labelNames: ['api'],
      buckets: REQUEST_DURATION_BUCKETS,
      registers: [r],
    });
    counterOf(r, 'mq_bad_frames_total', 'Frames that closed their connection (undecodable, text, too large).', () => this.badFrames);
    counterOf(r, 'mq_connections_accepted_total', 'WebSocket connections accepted.', () => this.connectionsAccepted);
    counterOf(r, 'mq_frame_bytes_in_total', 'Request frame bytes received.', () => this.bytesIn);
    counterOf(r, 'mq_frame_bytes_out_total', 'Response frame bytes sent.', () => this.bytesOut);
    labelledCounterOf(r, 'mq_topic_bytes_in_total', 'Record batch bytes appended by produce requests, per topic.', ['topic'], () =>
      [...this.topicBytesIn].map(([t, n]) => [[t], n]),
    );
    labelledCounterOf(r, 'mq_partition_bytes_in_total', 'Record batch bytes appended by produce requests, per partition this broker led (rate() of it shows a hot partition).', ['topic', 'partition'], () =>
      [...this.partitionBytesIn.totals()].map(([k, n]) => [k.split('\0'), n]),
    );
    labelledCounterOf(r, 'mq_topic_bytes_out_total', 'Record batch bytes returned by fetch requests (consumers and followers), per topic.', ['topic'], () =>
      [...this.topicBytesOut].map(([t, n]) => [[t], n]),
    );
  }

  /** A request dispatched to its handler; returns the start time for {@link requestDone}. */
  request(api: string): number {
    this.requests.set(api, (this.requests.get(api) ?? 0) + 1);
    this.inFlight.set(api, (this.inFlight.get(api) ?? 0) + 1);
    return performance.now();
  }

  /** A request answered (or refused by its handler): its latency since {@link request}. */
  requestDone(api: string, startedAt: number): void {
    this.inFlight.set(api, (this.inFlight.get(api) ?? 1) - 1);
    let child = this.latencyByApi.get(api);
    if (!child) {
      child = this.latency.labels(api);
      this.latencyByApi.set(api, child);
    }
    child.observe((performance.now() - startedAt) / 1000);
  }

  refusal(code: string, api = ''): void {
    const key = `${api}\0${code}`;
    this.refused.set(key, (this.refused.get(key) ?? 0) + 1);
  }

  producedBytes(topic: string, bytes: number, partition?: number): void {
    this.topicBytesIn.set(topic, (this.topicBytesIn.get(topic) ?? 0) + bytes);
    if (partition !== undefined) {
      const k = `${topic}\0${partition}`;
      this.partitionBytesIn.add(k, bytes);
    }
  }

  fetchedBytes(topic: string, bytes: number): void {
    this.topicBytesOut.set(topic, (this.topicBytesOut.get(topic) ?? 0) + bytes);
  }

  /** Forgets a deleted topic's series. */
  dropTopic(topic: string): void {
    this.topicBytesIn.delete(topic);
    this.topicBytesOut.delete(topic);
    this.partitionBytesIn.delete((k) => k.startsWith(`${topic}\0`));
  }

  /** The Prometheus text exposition of every metric registered here. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
