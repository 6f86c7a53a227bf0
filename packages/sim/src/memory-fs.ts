/**
 * An in-memory file system for one simulated broker, with crash semantics:
 * a write lands in the "page cache" (visible to reads at once) and becomes
 * durable only when its file is fsynced; a crash throws the page cache away,
 * except that a random prefix of a file's unsynced tail may have reached the
 * disk anyway (a torn write). Metadata operations (create, rename, unlink,
 * mkdir) are durable at once, as on a journaling file system after its
 * directory fsync; an atomic file write is durable when it resolves.
 *
 * It serves @mq/log-store's LogFileSystem (partition logs), the broker's
 * DirFileSystem (deleted replicas, the start-up sweep) and the replicas'
 * high-watermark checkpoints. Every operation completes after a simulated
 * disk delay on the simulated clock.
 */
import * as path from 'node:path';
import type { FileInfo, LogFile, LogFileSystem } from '@mq/log-store';
import type { DirFileSystem } from '@mq/broker/internal';
import type { HighWatermarkCheckpoint } from '@mq/replication';
import type { Rng } from '@mq/consensus/sim';

/**
 * A file: `buf` holds what reads see (the page cache) in its first `len`
 * bytes, with room to grow. What survives a crash is its first `durableLen`
 * bytes as of the last fsync; when a write or truncate changes that region
 * before the next fsync, `durableCopy` keeps the synced bytes (copy on write),
 * so an append and its fsync cost no copy of the whole file.
 */
interface MemFile {
  buf: Buffer;
  len: number;
  durableLen: number;
  durableCopy: Buffer | undefined;
  mtimeMs: number;
}

function memFile(data: Buffer, durable: boolean, now: number): MemFile {
  const buf = Buffer.from(data);
  return { buf, len: buf.length, durableLen: durable ? buf.length : 0, durableCopy: undefined, mtimeMs: now };
}

/** Keeps the synced bytes before a change below the durable length. */
function beforeDurableChange(f: MemFile, position: number): void {
  if (position < f.durableLen && !f.durableCopy) f.durableCopy = Buffer.from(f.buf.subarray(0, f.durableLen));
}

function ensureCapacity(f: MemFile, size: number): void {
  if (size <= f.buf.length) return;
  const grown = Buffer.alloc(Math.max(size, f.buf.length * 2, 4096));
  f.buf.copy(grown, 0, 0, f.len);
  f.buf = grown;
}

function errno(code: string, what: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${what}`), { code });
}

export interface DiskTiming {
  /** Delay of one operation in simulated ms. */
  delayMs(): number;
  now(): number;
  /** Resolves after `ms` simulated milliseconds (never, if the node crashes first). */
  sleep(ms: number): Promise<void>;
}

export class MemoryFileSystem implements LogFileSystem {
  private readonly files = new Map<string, MemFile>();
  private readonly dirs = new Set<string>(['/']);
  /** Bytes written and fsynced, for the summary. */
  syncs = 0;

  constructor(private readonly timing: DiskTiming) {}

  private async io(): Promise<void> {
    await this.timing.sleep(this.timing.delayMs());
  }

  private ensureParent(file: string): void {
    const dir = path.dirname(file);
    if (!this.dirs.has(dir)) throw errno('ENOENT', `no directory ${dir}`);
  }

  private file(name: string): MemFile {
    const f = this.files.get(name);
    if (!f) throw errno('ENOENT', `no file ${name}`);
    return f;
  }

  private handle(name: string): LogFile {
    let closed = false;
    const file = (n: string): MemFile => this.file(n);
    const io = (): Promise<void> => this.io();
    const now = (): number => this.timing.now();
    const synced = (): void => {
      this.syncs++;
    };
    const get = (): MemFile => {
      if (closed) throw errno('EBADF', `${name} is closed`);
      return file(name);
    };
    const writeNow = (buffer: Buffer, offset: number, length: number, position: number): number => {
      const f = get();
      beforeDurableChange(f, position);
      const end = position + length;
      ensureCapacity(f, end);
      if (position > f.len) f.buf.fill(0, f.len, position);
      buffer.copy(f.buf, position, offset, offset + length);
      f.len = Math.max(f.len, end);
      f.mtimeMs = now();
      return length;
    };
    const truncateNow = (length: number): void => {
      const f = get();
      beforeDurableChange(f, length);
      ensureCapacity(f, length);
      if (length > f.len) f.buf.fill(0, f.len, length);
      f.len = length;
    };
    return {
      async read(buffer, offset, length, position) {
        await io();
        const f = get();
        if (position >= f.len) return 0;
        return f.buf.copy(buffer, offset, position, Math.min(f.len, position + length));
      },
      async write(buffer, offset, length, position) {
        const n = writeNow(buffer, offset, length, position);
        await io();
        return n;
      },
      writeSync: writeNow,
      truncateSync: truncateNow,
      async datasync() {
        const f = get();
        await io();
        // What is in the page cache when the fsync returns is on disk.
        f.durableLen = f.len;
        f.durableCopy = undefined;
        synced();
      },
      async truncate(length) {
        truncateNow(length);
        await io();
      },
      async size() {
        await io();
        return get().len;
      },
      async close() {
        closed = true;
      },
    };
  }

  async open(file: string, create: boolean): Promise<LogFile> {
    await this.io();
    if (!this.files.has(file)) {
      if (!create) throw errno('ENOENT', `no file ${file}`);
      this.ensureParent(file);
      this.files.set(file, memFile(Buffer.alloc(0), true, this.timing.now()));
    }
    return this.handle(file);
  }

  async createExclusive(file: string, data: Buffer): Promise<boolean> {
    await this.io();
    if (this.files.has(file)) return false;
    this.ensureParent(file);
    this.files.set(file, memFile(data, true, this.timing.now()));
    return true;
  }

  async readFile(file: string): Promise<Buffer | null> {
    await this.io();
    const f = this.files.get(file);
    return f ? Buffer.from(f.buf.subarray(0, f.len)) : null;
  }

  async writeFileAtomic(file: string, data: Buffer): Promise<void> {
    await this.io();
    this.ensureParent(file);
    this.files.set(file, memFile(data, true, this.timing.now()));
  }

  async readdir(dir: string): Promise<string[]> {
    await this.io();
    if (!this.dirs.has(dir)) throw errno('ENOENT', `no directory ${dir}`);
    const prefix = dir.endsWith('/') ? dir : `${dir}/`;
    const names = new Set<string>();
    for (const p of [...this.files.keys(), ...this.dirs]) {
      if (p.startsWith(prefix) && p.length > prefix.length) names.add(p.slice(prefix.length).split('/')[0]!);
    }
    return [...names].sort();
  }

  async mkdir(dir: string): Promise<undefined> {
    await this.io();
    for (let d = dir; d !== '/' && d !== '.'; d = path.dirname(d)) this.dirs.add(d);
    return undefined;
  }

  /** null when the path does not exist (LogFileSystem's contract). */
  async stat(file: string): Promise<FileInfo | null> {
    await this.io();
    const f = this.files.get(file);
    if (f) return { size: f.len, mtimeMs: f.mtimeMs };
    if (this.dirs.has(file)) return { size: 0, mtimeMs: 0 };
    return null;
  }

  async unlink(file: string): Promise<void> {
    await this.io();
    this.files.delete(file);
  }

  async rename(from: string, to: string): Promise<void> {
    await this.io();
    const f = this.files.get(from);
    if (f) {
      this.ensureParent(to);
      this.files.delete(from);
      this.files.set(to, f);
      return;
    }
    if (!this.dirs.has(from)) throw errno('ENOENT', `no file ${from}`);
    const prefix = `${from}/`;
    for (const d of [...this.dirs]) {
      if (d === from || d.startsWith(prefix)) {
        this.dirs.delete(d);
        this.dirs.add(to + d.slice(from.length));
      }
    }
    for (const [p, file] of [...this.files]) {
      if (p.startsWith(prefix)) {
        this.files.delete(p);
        this.files.set(to + p.slice(from.length), file);
      }
    }
  }

  async rm(target: string, options: { recursive?: boolean; force?: boolean }): Promise<void> {
    await this.io();
    if (this.files.delete(target)) return;
    if (this.dirs.has(target)) {
      if (!options.recursive) throw errno('EISDIR', target);
      const prefix = `${target}/`;
      for (const d of [...this.dirs]) if (d === target || d.startsWith(prefix)) this.dirs.delete(d);
      for (const p of [...this.files.keys()]) if (p.startsWith(prefix)) this.files.delete(p);
      return;
    }
    if (!options.force) throw errno('ENOENT', target);
  }

  async syncDir(): Promise<void> {
    await this.io();
  }

  /**
   * The file system as one process run sees it: the same files, a new
   * component identity (a crashed run's directory locks die with it, as an
   * OS releases a killed process's locks).
   */
  view(): LogFileSystem {
    return {
      open: (f, c) => this.open(f, c),
      createExclusive: (f, d) => this.createExclusive(f, d),
      readFile: (f) => this.readFile(f),
      writeFileAtomic: (f, d) => this.writeFileAtomic(f, d),
      readdir: (d) => this.readdir(d),
      mkdir: (d) => this.mkdir(d),
      stat: (f) => this.stat(f),
      unlink: (f) => this.unlink(f),
      rename: (a, b) => this.rename(a, b),
      syncDir: () => this.syncDir(),
    };
  }

  /** The broker's directory operations on these files (stat rejects with ENOENT, as node:fs does). */
  dirView(): DirFileSystem {
    return {
      mkdir: (d) => this.mkdir(d),
      readdir: (d) => this.readdir(d),
      rename: (a, b) => this.rename(a, b),
      rm: (t, o) => this.rm(t, o),
      stat: async (f) => {
        const s = await this.stat(f);
        if (!s) throw errno('ENOENT', `no file ${f}`);
        return s;
      },
    };
  }

  /** The replica's high-watermark checkpoint as a file here (written atomically, as FileCheckpoint does). */
  checkpoint(file: string): HighWatermarkCheckpoint {
    return {
      load: async () => {
        const data = await this.readFile(file);
        return data ? Number(data.toString('utf8')) : undefined;
      },
      save: async (hw) => {
        await this.writeFileAtomic(file, Buffer.from(String(hw)));
      },
    };
  }

  /**
   * A crash: the page cache is lost. A file's unsynced tail (when the durable
   * content is a prefix of what was written) may survive in part: a torn write
   * with probability `tornChance`. Returns how many files lost bytes.
   */
  crash(rng: Rng, tornChance: number): number {
    let lost = 0;
    for (const f of this.files.values()) {
      if (!f.durableCopy && f.len === f.durableLen) continue;
      lost++;
      let keep = f.durableCopy ?? f.buf.subarray(0, f.durableLen);
      // The unsynced tail of an append-only change may have reached the disk in part (a torn write).
      if (!f.durableCopy && f.len > f.durableLen && rng.chance(tornChance)) keep = f.buf.subarray(0, rng.int(f.durableLen, f.len));
      const survived = memFile(keep, true, f.mtimeMs);
      Object.assign(f, survived);
    }
    return lost;
  }

  /** An empty disk (the broker's disk was replaced). */
  wipe(): void {
    this.files.clear();
    this.dirs.clear();
    this.dirs.add('/');
  }
}
