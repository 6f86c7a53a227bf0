/**
 * In-process test helpers: a broker on port 0 in a temporary directory with
 * its log lines captured, and a tiny raw WebSocket client speaking
 * @mq/protocol/wire frames (no @mq/client, so the broker is tested alone).
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { mq } from '@mq/protocol/wire';
import { TestClient } from './wire-client.js';
import { startBroker, type Broker } from '../src/index.js';
import type { BrokerComponents } from '../src/broker.js';

export { TestClient };

export interface LogLine {
  level: number;
  msg: string;
  [k: string]: unknown;
}

export interface TestBroker {
  broker: Broker;
  dataDir: string;
  lines: LogLine[];
  url: string;
  httpUrl: string;
  /** Restarts on the same data directory (and ports). */
  restart(config?: Record<string, string>): Promise<void>;
  cleanup(): Promise<void>;
}

/** Brokers started and not yet cleaned up; a failed test's broker is closed after its file. */
const live = new Set<TestBroker>();
afterAll(async () => {
  for (const t of [...live]) await t.cleanup().catch(() => undefined);
});

/** Small internal topics keep test brokers quick to start. */
const TEST_DEFAULTS: Record<string, string> = { 'offsets.topic.num.partitions': '1' };

export async function startTestBroker(
  explicit: Record<string, string> = {},
  components: Omit<BrokerComponents, 'logger'> = {},
): Promise<TestBroker> {
  const config = { ...TEST_DEFAULTS, ...explicit };
  const dataDir = await mkdtemp(path.join(tmpdir(), 'mq-broker-test-'));
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString('utf8').split('\n')) if (l) lines.push(JSON.parse(l) as LogLine);
      cb();
    },
  });
  const logger = pino({ level: 'debug' }, sink);
  const t: TestBroker = {
    broker: undefined as unknown as Broker,
    dataDir,
    lines,
    get url() {
      return `ws://127.0.0.1:${t.broker.port}`;
    },
    get httpUrl() {
      return `http://127.0.0.1:${t.broker.httpPort}`;
    },
    async restart(extra = config) {
      const { port, httpPort } = t.broker;
      await t.broker.close();
      t.broker = await startBroker({ dataDir, port, httpPort, config: extra }, { ...components, logger });
    },
    async cleanup() {
      live.delete(t);
      try {
        await t.broker.close();
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  };
  t.broker = await startBroker({ dataDir, port: 0, httpPort: 0, config }, { ...components, logger });
  live.add(t);
  return t;
}

import { waitFor } from '../src/test-support/net.js';

export { waitFor };

/**
 * Waits until a group coordinator answers for `groupId`: as in Kafka, the
 * broker creates `__consumer_offsets` on the first FindCoordinator.
 */
export async function coordinatorReady(c: TestClient, groupId = 'any-group'): Promise<void> {
  await waitFor(async () => (await c.request({ findCoordinator: { key: groupId } })).findCoordinator!.errorCode === 0 || undefined, 10_000);
}

/** The directory of a partition's log (cluster-logs/<topic>-<partition>.<topicId>). */
export async function partitionDir(dataDir: string, topic: string, partition: number): Promise<string> {
  const logs = path.join(dataDir, 'cluster-logs');
  const found = (await readdir(logs)).filter((d) => d.startsWith(`${topic}-${partition}.`) && !d.endsWith('.hw'));
  if (found.length !== 1) throw new Error(`expected one directory of ${topic}-${partition} in ${logs}, found ${found.join(', ') || 'none'}`);
  return path.join(logs, found[0]!);
}

let seq = 0;
export function topicName(prefix = 't'): string {
  return `${prefix}-${process.pid}-${++seq}`;
}

export async function createTopic(
  c: TestClient,
  name: string,
  numPartitions = 1,
  configs: Record<string, string> = {},
): Promise<mq.TopicResult> {
  const r = await c.request({ createTopics: { topics: [{ name, numPartitions, replicationFactor: 1, configs }] } });
  const res = r.createTopics!.results[0]!;
  if (res.errorCode !== 0) throw new Error(`create ${name} failed: ${res.errorMessage}`);
  return res as mq.TopicResult;
}

export async function httpJson(
  url: string,
  init: { method?: string; body?: unknown; raw?: string } = {},
): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method: init.method ?? (init.body !== undefined || init.raw !== undefined ? 'POST' : 'GET'),
    headers: { 'content-type': 'application/json' },
    body: init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON (metrics)
  }
  return { status: res.status, body };
}
