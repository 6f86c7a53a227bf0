/**
 * Helpers of the consumer-group e2e tests (groups-*.test.ts): group members
 * in their own processes (groups-worker.mjs) that a test can SIGKILL, and
 * the check that no partition ever had two owners at once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { MqClient } from '@mq/client';
import { REPO_ROOT, waitFor } from './src/harness.js';

export const GROUP_BROKER_ARGS = [
  '--config-set',
  'group.initial.rebalance.delay.ms=0',
  '--config-set',
  'group.min.session.timeout.ms=1000',
  '--config-set',
  'offsets.topic.num.partitions=10',
];

export interface WorkerConfig {
  bootstrap: string;
  topic: string;
  group: string;
  name: string;
  assignors?: string[];
  sessionTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  instanceId?: string;
  autoCommit?: boolean;
  autoCommitIntervalMs?: number;
  delivery?: 'at-least-once' | 'at-most-once';
  maxPollRecords?: number;
  delayMs?: number;
  crashAfter?: number;
  commitEvery?: number;
}

export interface WorkerEvent {
  ev: 'assigned' | 'revoked' | 'lost' | 'record' | 'committed' | 'ready' | 'closed' | 'error';
  t: number;
  ps?: number[];
  p?: number;
  o?: number;
  v?: string | null;
  message?: string;
}

const WORKER = path.join(REPO_ROOT, 'e2e', 'groups-worker.mjs');
const live = new Set<Worker>();

export class Worker {
  readonly events: WorkerEvent[] = [];
  stderr = '';
  exited = false;
  /** When the process was SIGKILLed (it owns nothing after). */
  killedAt: number | null = null;
  private readonly proc: ChildProcess;
  private readonly exit: Promise<number | null>;

  constructor(readonly config: WorkerConfig) {
    this.proc = spawn(process.execPath, [WORKER, JSON.stringify(config)], { cwd: path.join(REPO_ROOT, 'e2e'), stdio: ['ignore', 'pipe', 'pipe'] });
    let buf = '';
    this.proc.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (line.trim()) this.events.push(JSON.parse(line) as WorkerEvent);
      }
    });
    this.proc.stderr!.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-4000)));
    this.exit = new Promise((resolve) => this.proc.once('exit', (code) => {
      this.exited = true;
      live.delete(this);
      resolve(code);
    }));
    live.add(this);
  }

  get name(): string {
    return this.config.name;
  }

  /** Partitions owned now, from the events. */
  owned(): number[] {
    const s = new Set<number>();
    for (const e of this.events) {
      if (e.ev === 'assigned') for (const p of e.ps!) s.add(p);
      if (e.ev === 'revoked' || e.ev === 'lost') for (const p of e.ps!) s.delete(p);
    }
    return this.killedAt !== null ? [] : [...s].sort((a, b) => a - b);
  }

  records(): WorkerEvent[] {
    return this.events.filter((e) => e.ev === 'record');
  }

  count(ev: WorkerEvent['ev']): number {
    return this.events.filter((e) => e.ev === ev).length;
  }

  async kill(): Promise<void> {
    if (this.exited) return;
    this.killedAt = Date.now();
    this.proc.kill('SIGKILL');
    await this.exit;
  }

  /** Graceful: the consumer commits, leaves the group and exits. */
  async stop(): Promise<number | null> {
    if (!this.exited) this.proc.kill('SIGTERM');
    return this.exit;
  }

  waitExit(): Promise<number | null> {
    return this.exit;
  }
}

export async function killAllWorkers(): Promise<void> {
  await Promise.all([...live].map((w) => w.kill()));
}

/** Produces `count` records spread over the partitions (value `${prefix}-${i}`, key i). */
export async function produce(bootstrap: string, topic: string, count: number, prefix = 'r', from = 0): Promise<void> {
  const mq = new MqClient({ bootstrap, clientId: 'e2e-producer' });
  try {
    const p = mq.producer({ acks: -1, lingerMs: 2 });
    await Promise.all(Array.from({ length: count }, (_, i) => p.send(topic, { key: `k${from + i}`, value: `${prefix}-${from + i}` })));
    await p.close();
  } finally {
    await mq.close();
  }
}

export async function createTopic(bootstrap: string, topic: string, partitions: number): Promise<void> {
  const mq = new MqClient({ bootstrap, clientId: 'e2e-admin' });
  try {
    await mq.admin().createTopic(topic, { numPartitions: partitions });
  } finally {
    await mq.close();
  }
}

/**
 * Ownership intervals per partition from every worker's events (assigned at
 * the start of the callback, revoked/lost at its end, a kill ends all); any
 * overlap of two workers on one partition is a violation.
 */
export function ownershipViolations(workers: readonly Worker[], now = Date.now()): string[] {
  const intervals = new Map<number, Array<{ who: string; from: number; to: number }>>();
  for (const w of workers) {
    const open = new Map<number, number>();
    const end = w.killedAt ?? (w.exited ? (w.events.at(-1)?.t ?? now) : now);
    for (const e of w.events) {
      if (e.ev === 'assigned') for (const p of e.ps!) open.set(p, e.t);
      if (e.ev === 'revoked' || e.ev === 'lost') {
        for (const p of e.ps!) {
          const from = open.get(p);
          if (from === undefined) continue;
          open.delete(p);
          if (!intervals.has(p)) intervals.set(p, []);
          intervals.get(p)!.push({ who: w.name, from, to: e.t });
        }
      }
    }
    for (const [p, from] of open) {
      if (!intervals.has(p)) intervals.set(p, []);
      intervals.get(p)!.push({ who: w.name, from, to: end });
    }
  }
  const out: string[] = [];
  for (const [p, list] of intervals) {
    list.sort((a, b) => a.from - b.from);
    for (let i = 1; i < list.length; i++) {
      const prev = list[i - 1]!;
      const cur = list[i]!;
      if (cur.from < prev.to && cur.who !== prev.who) out.push(`partition ${p}: ${prev.who} [${prev.from}, ${prev.to}] overlaps ${cur.who} from ${cur.from}`);
    }
  }
  return out;
}

export async function waitForOwners(workers: readonly Worker[], expected: number[], timeout = 30_000): Promise<void> {
  await waitFor(
    () => {
      const sizes = workers.map((w) => w.owned().length).sort((a, b) => a - b);
      return sizes.join(',') === [...expected].sort((a, b) => a - b).join(',');
    },
    { timeout, message: `owners never reached ${expected.join(',')}: ${workers.map((w) => `${w.name}=[${w.owned().join(',')}]`).join(' ')}` },
  );
}
