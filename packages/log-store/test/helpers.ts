import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { decodeBatchSync, encodeBatchSync, iterateBatches, type EncodeBatchOptions } from '@mq/protocol/batch';
import { nodeFileSystem, type LogFile, type LogFileSystem } from '../src/file-system.js';
import { openLog } from '../src/log.js';
import type { LogOptions } from '../src/options.js';
import type { Log, LogComponents } from '../src/types.js';

export function tempDir(prefix = 'mq-log-'): { dir: string; cleanup: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** A batch of `count` records whose values say where they came from. */
export function batch(tag: string, count = 1, options: EncodeBatchOptions & { valueBytes?: number } = {}): Buffer {
  const pad = options.valueBytes ? 'x'.repeat(options.valueBytes) : '';
  const records = Array.from({ length: count }, (_, i) => ({ key: `k-${tag}-${i}`, value: `${tag}:${i}${pad}` }));
  return encodeBatchSync(records, { now: 1_000_000, ...options });
}

/** Values of every record in `buf`, in order, with their offsets. */
export function values(buf: Buffer): Array<{ offset: number; value: string }> {
  const out: Array<{ offset: number; value: string }> = [];
  for (const span of iterateBatches(buf)) {
    for (const r of decodeBatchSync(buf, span.position).records) out.push({ offset: r.offset, value: r.value!.toString('utf8').replace(/x+$/, '') });
  }
  return out;
}

export function batchOffsets(buf: Buffer): Array<[number, number]> {
  return [...iterateBatches(buf)].map((s) => [s.header.baseOffset, s.header.baseOffset + s.header.lastOffsetDelta]);
}

export interface FaultyFs extends LogFileSystem {
  datasyncs: number;
  /** Writes to .log files through the async write, and through writeSync (the log's synchronous fast path). */
  logWrites: { async: number; sync: number };
  /** The next write to a .log file writes half its bytes and then fails with this errno. */
  failNextLogWrite(code: string): void;
  failDatasync(code: string | null): void;
}

/**
 * nodeFileSystem with injectable failures and counters. With `{ sync: true }`
 * its files also have writeSync/truncateSync, so the log's synchronous append
 * path runs (and can fail) too.
 */
export function faultyFs(options: { sync?: boolean } = {}): FaultyFs {
  let pendingWriteFailure: string | null = null;
  let datasyncFailure: string | null = null;
  const wrap = (file: string, f: LogFile): LogFile => ({
    read: (b, o, l, p) => f.read(b, o, l, p),
    async write(b, o, l, p) {
      if (file.endsWith('.log')) faulty.logWrites.async++;
      if (pendingWriteFailure && file.endsWith('.log')) {
        const code = pendingWriteFailure;
        pendingWriteFailure = null;
        const half = Math.max(1, Math.floor(l / 2));
        await f.write(b, o, half, p);
        throw Object.assign(new Error(`${code}: injected failure, write`), { code });
      }
      return f.write(b, o, l, p);
    },
    ...(options.sync && f.writeSync && f.truncateSync
      ? {
          writeSync(b: Buffer, o: number, l: number, p: number): number {
            if (file.endsWith('.log')) faulty.logWrites.sync++;
            if (pendingWriteFailure && file.endsWith('.log')) {
              const code = pendingWriteFailure;
              pendingWriteFailure = null;
              f.writeSync!(b, o, Math.max(1, Math.floor(l / 2)), p);
              throw Object.assign(new Error(`${code}: injected failure, writeSync`), { code });
            }
            return f.writeSync!(b, o, l, p);
          },
          truncateSync: (n: number) => f.truncateSync!(n),
        }
      : {}),
    async datasync() {
      if (datasyncFailure) throw Object.assign(new Error(`${datasyncFailure}: injected fdatasync failure`), { code: datasyncFailure });
      faulty.datasyncs++;
      return f.datasync();
    },
    truncate: (n) => f.truncate(n),
    size: () => f.size(),
    close: () => f.close(),
  });
  const faulty: FaultyFs = {
    ...nodeFileSystem,
    datasyncs: 0,
    logWrites: { async: 0, sync: 0 },
    async open(file, create) {
      return wrap(file, await nodeFileSystem.open(file, create));
    },
    failNextLogWrite(code) {
      pendingWriteFailure = code;
    },
    failDatasync(code) {
      datasyncFailure = code;
    },
  };
  return faulty;
}

export function segmentFiles(dir: string, ext = '.log'): string[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(ext))
    .sort();
}

/**
 * The per-test log fixture of the log's unit tests: a fresh temporary
 * directory before each test, and after it every log opened through the
 * fixture closed and the directory removed.
 */
export interface LogFixture {
  /** This test's directory. */
  readonly dir: string;
  /** Opens a log (checkpoints off unless asked) that is closed after the test; `at` defaults to `dir`. */
  open(options?: LogOptions, components?: LogComponents, at?: string): Promise<Log>;
  /** Closes a log opened through the fixture before the test ends. */
  close(log: Log): Promise<void>;
  /** Runs `fn` after this test, once its logs are closed. */
  onCleanup(fn: () => void): void;
}

export function logFixture(): LogFixture {
  let current: { dir: string; cleanup: () => void } | undefined;
  const logs: Log[] = [];
  const cleanups: Array<() => void> = [];
  beforeEach(() => {
    current = tempDir();
  });
  afterEach(async () => {
    for (const l of logs.splice(0)) await l.close().catch(() => undefined);
    current?.cleanup();
    for (const c of cleanups.splice(0)) c();
  });
  return {
    get dir() {
      return current!.dir;
    },
    async open(options = {}, components = {}, at) {
      const log = await openLog(at ?? current!.dir, { checkpointIntervalMs: 0, ...options }, components);
      logs.push(log);
      return log;
    },
    async close(log) {
      logs.splice(logs.indexOf(log), 1);
      await log.close();
    },
    onCleanup(fn) {
      cleanups.push(fn);
    },
  };
}
