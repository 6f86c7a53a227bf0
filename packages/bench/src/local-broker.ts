import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MqError } from '@mq/protocol/errors';

export interface LocalBrokerOptions {
  /**
   * The command that runs `mq` (without `broker start`). Default: this Node
   * running @mq/cli's dist/bin.js, resolved from here.
   */
  command?: string[];
  /** Data directory; a fresh temporary one (removed on close) by default. */
  dataDir?: string;
  /** Broker configuration (e.g. `log.flush.policy`), passed as `--config-set key=value`. */
  config?: Record<string, string>;
  /** Extra Node flags for the broker process (e.g. `--cpu-prof`), after `heapFlags`. */
  nodeFlags?: string[];
  /** V8 heap flags for the broker process; default BROKER_HEAP_FLAGS, `[]` for V8's own defaults. */
  heapFlags?: readonly string[];
  startTimeoutMs?: number;
  /** Client port (default 0: a free one, read back from the broker's "broker listening" line). */
  port?: number;
  /** HTTP port (default 0: a free one). */
  httpPort?: number;
  /** More `broker start` arguments (a cluster member's `--broker-id`, `--controller-voters`). */
  args?: readonly string[];
  /** Where the broker's own output goes (default: kept in memory, last lines shown on failure). */
  log?: NodeJS.WritableStream;
}

export interface LocalBroker {
  readonly bootstrap: string;
  readonly port: number;
  readonly pid: number;
  readonly dataDir: string;
  /** SIGTERM, wait for the exit (SIGKILL after 10 s), remove a temporary data dir. */
  close(): Promise<void>;
}

export const DEFAULT_BROKER_START_TIMEOUT_MS = 20_000;

/**
 * The heap the bench's broker runs with (a broker is a long-lived server, as
 * Kafka's scripts give the JVM its heap options).
 * - `--initial-old-space-size=128`: with V8's defaults the old generation
 *   starts small, and at a few hundred thousand records/s the broker ran a
 *   full mark-compact every 0.3–0.7 s (11 in 4 s at 300k records/s, pauses up
 *   to 7.9 ms, plus incremental steps); with 128 MB it ran none in those 4 s.
 * - `--min-semi-space-size=16`: V8 starts the young generation at 1 MB and
 *   grows it only when much survives, which a request/response server never
 *   does, so one-at-a-time produce ran a scavenge every ~60 ms; 16 MB from the
 *   start halves to quarters that, and in a traced run the slowest 1% of
 *   one-at-a-time sends that overlapped a GC went from 111 of 200 to 39.
 * - `--max-semi-space-size=32` (V8's default maximum is 16 MB): in-flight
 *   requests at high rates die young instead of being promoted.
 * Cost: up to ~100 MB more heap before collections (young 3 × 32 MB, old 128 MB).
 */
export const BROKER_HEAP_FLAGS: readonly string[] = ['--min-semi-space-size=16', '--max-semi-space-size=32', '--initial-old-space-size=128'];
const KEEP_LINES = 50;

function defaultCommand(): string[] {
  let bin: string;
  try {
    // @mq/cli's entry is dist/index.js; its binary sits beside it.
    bin = path.join(path.dirname(fileURLToPath(import.meta.resolve('@mq/cli'))), 'bin.js');
  } catch {
    throw new MqError('INVALID_ARGUMENT', 'cannot find @mq/cli to start a local broker (build it with: npm run build -w @mq/cli, or pass --bootstrap)');
  }
  return [process.execPath, bin];
}

/**
 * Starts `mq broker start` as a child process on a free port for one run.
 * The broker runs in its own process, as the peers' servers do, so client and
 * broker each have a core.
 */
export async function startLocalBroker(options: LocalBrokerOptions = {}): Promise<LocalBroker> {
  // Resolve the command first: a missing CLI must not leave a temporary directory behind.
  const [exe, ...base] = options.command ?? defaultCommand();
  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(tmpdir(), 'mq-bench-')));
  const args = [...(options.heapFlags ?? BROKER_HEAP_FLAGS), ...(options.nodeFlags ?? []), ...base, 'broker', 'start', '--data-dir', dataDir, '--port', String(options.port ?? 0), '--http-port', String(options.httpPort ?? 0), ...(options.args ?? [])];
  for (const [k, v] of Object.entries(options.config ?? {})) args.push('--config-set', `${k}=${v}`);
  const child: ChildProcess = spawn(exe, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MQ_LOG_LEVEL: process.env.MQ_LOG_LEVEL ?? 'info' } });
  const lines: string[] = [];
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => {
    exited = true;
    resolve();
  }));
  const listening = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => fail(new MqError('REQUEST_TIMED_OUT', `local broker did not report "broker listening" within ${options.startTimeoutMs ?? DEFAULT_BROKER_START_TIMEOUT_MS} ms`)), options.startTimeoutMs ?? DEFAULT_BROKER_START_TIMEOUT_MS);
    const fail = (err: Error): void => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(Object.assign(err, { output: lines.slice() }));
    };
    let pending = '';
    const onData = (chunk: Buffer): void => {
      options.log?.write(chunk);
      pending += chunk.toString();
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        lines.push(line);
        if (lines.length > KEEP_LINES) lines.shift();
        if (line.includes('broker listening')) {
          try {
            const parsed = JSON.parse(line) as { port?: number };
            if (typeof parsed.port === 'number') {
              clearTimeout(timer);
              resolve(parsed.port);
            }
          } catch {
            // not JSON: keep waiting
          }
        }
      }
      if (pending.length > 65_536) pending = pending.slice(-65_536);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    // 'close' comes after the output has been read, so the message carries the broker's last words.
    child.once('close', (code, signal) => fail(new MqError('BROKER_NOT_AVAILABLE', `local broker exited (${code ?? signal}) before listening:\n${lines.join('\n')}`)));
    child.once('error', (err) => fail(err));
  });
  let port: number;
  try {
    port = await listening;
  } catch (err) {
    if (child.pid !== undefined) await exit;
    if (ownDir) await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
  return {
    bootstrap: `127.0.0.1:${port}`,
    port,
    pid: child.pid ?? -1,
    dataDir,
    async close() {
      if (!exited) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exit;
        clearTimeout(timer);
      }
      if (ownDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}
