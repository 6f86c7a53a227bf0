/**
 * The read-process-write copier (e2e/txn-copier.mjs) in its own process, for
 * the transaction tests: SIGKILL it at any moment; its events (ready,
 * committed n, error) come back as JSON lines. And a reader of a topic at
 * either isolation level.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { MqClient } from '@mq/client';
import { REPO_ROOT } from './harness.js';

export interface CopierConfig {
  bootstrap: string | string[];
  source: string;
  dest: string;
  partitions: number;
  transactionalId: string;
  group: string;
  perTxn?: number;
}

export class Copier {
  readonly events: Array<{ ev: string; n?: number; message?: string; code?: string }> = [];
  private readonly proc: ChildProcess;
  readonly exit: Promise<number | null>;
  stderr = '';

  constructor(config: CopierConfig) {
    this.proc = spawn(process.execPath, [path.join(REPO_ROOT, 'e2e', 'txn-copier.mjs'), JSON.stringify(config)], {
      cwd: path.join(REPO_ROOT, 'e2e'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let buf = '';
    this.proc.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (line.trim()) this.events.push(JSON.parse(line) as { ev: string });
      }
    });
    this.proc.stderr!.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-4000)));
    this.exit = new Promise((resolve) => this.proc.once('exit', (code) => resolve(code)));
  }

  /** Records copied in committed transactions by this instance. */
  get committed(): number {
    return this.events.filter((e) => e.ev === 'committed').at(-1)?.n ?? 0;
  }

  errors(): Array<{ ev: string; message?: string; code?: string }> {
    return this.events.filter((e) => e.ev === 'error');
  }

  /** SIGSTOP: the process stops where it is (its connections stay open, its requests unanswered or unsent). */
  pause(): void {
    this.proc.kill('SIGSTOP');
  }

  /** SIGCONT after {@link pause}. */
  resume(): void {
    this.proc.kill('SIGCONT');
  }

  async kill(): Promise<void> {
    this.proc.kill('SIGKILL');
    await this.exit;
  }
}

/** Values of every partition of `topic` read at `isolationLevel`, until `expected` records or `ms` passed. */
export async function readTopic(
  client: MqClient,
  topic: string,
  partitions: number,
  isolationLevel: 'read_committed' | 'read_uncommitted',
  expected: number,
  ms = 5000,
): Promise<string[][]> {
  const c = client.consumer({ isolationLevel, autoOffsetReset: 'earliest', maxWaitMs: 100 });
  c.assign(Array.from({ length: partitions }, (_, partition) => ({ topic, partition, offset: 0 })));
  const out: string[][] = Array.from({ length: partitions }, () => []);
  let n = 0;
  const deadline = Date.now() + ms;
  try {
    while (Date.now() < deadline && n < expected) {
      for (const r of await c.poll(200)) {
        out[r.partition]!.push(r.value!.toString());
        n++;
      }
    }
    for (const r of await c.poll(300)) out[r.partition]!.push(r.value!.toString());
  } finally {
    await c.close();
  }
  return out;
}
