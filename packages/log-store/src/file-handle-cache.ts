/**
 * Bounds the open segment files of one log, as Kafka's file and index
 * caches do: `.log` files are opened through a wrapper that keeps at most
 * `maxOpen` handles, closing the least recently used idle one (never one in
 * use, never a pinned one: the active segment) and reopening it on its next
 * use. Everything else passes through to the file system.
 */
import { MqError } from '@mq/protocol/errors';
import type { FileInfo, LogFile, LogFileSystem } from './file-system.js';
import { LOG_SUFFIX } from './segment.js';

export class CachedLogFile implements LogFile {
  private real: LogFile | null;
  private opening: Promise<LogFile> | null = null;
  private inflight = 0;
  private closed = false;
  /** The active segment's file: never closed by the cache. */
  pinned = false;

  constructor(
    private readonly cache: FileHandleCache,
    readonly path: string,
    real: LogFile,
  ) {
    this.real = real;
  }

  /**
   * The synchronous write, only while a handle is open (the log's fast path
   * checks for it and takes the async path, which reopens, when it is absent).
   */
  get writeSync(): ((buffer: Buffer, offset: number, length: number, position: number) => number) | undefined {
    return this.real?.writeSync ? this.syncWrite : undefined;
  }

  get truncateSync(): ((length: number) => void) | undefined {
    return this.real?.truncateSync ? this.syncTruncate : undefined;
  }

  private readonly syncWrite = (buffer: Buffer, offset: number, length: number, position: number): number =>
    this.openNow().writeSync!(buffer, offset, length, position);

  private readonly syncTruncate = (length: number): void => this.openNow().truncateSync!(length);

  get isOpen(): boolean {
    return this.real !== null;
  }

  get idle(): boolean {
    return this.inflight === 0 && this.opening === null && !this.pinned;
  }

  private openNow(): LogFile {
    if (!this.real) throw new MqError('STORAGE_ERROR', `${this.path} is not open for a synchronous write`);
    this.cache.touch(this);
    return this.real;
  }

  private async use<T>(fn: (f: LogFile) => Promise<T>): Promise<T> {
    if (this.closed) throw new MqError('STORAGE_ERROR', `${this.path} is closed`);
    this.inflight++;
    try {
      let f = this.real;
      if (!f) {
        this.opening ??= this.cache.reopen(this.path).finally(() => (this.opening = null));
        f = await this.opening;
        if (this.closed) {
          if (f !== this.real) await f.close();
          throw new MqError('STORAGE_ERROR', `${this.path} is closed`);
        }
        // Uses waiting on the same reopen share its handle; one from an earlier reopen that won is kept instead.
        if (!this.real) this.real = f;
        else if (this.real !== f) await f.close();
        f = this.real;
      }
      this.cache.touch(this);
      return await fn(f);
    } finally {
      this.inflight--;
      this.cache.trim();
    }
  }

  read(buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
    return this.use((f) => f.read(buffer, offset, length, position));
  }

  write(buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
    return this.use((f) => f.write(buffer, offset, length, position));
  }

  datasync(): Promise<void> {
    // fsync through any handle flushes the file's dirty pages, so a reopened handle syncs what a closed one wrote.
    return this.use((f) => f.datasync());
  }

  truncate(length: number): Promise<void> {
    return this.use((f) => f.truncate(length));
  }

  size(): Promise<number> {
    return this.use((f) => f.size());
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.cache.remove(this);
    const f = this.real;
    this.real = null;
    if (f) await f.close();
  }

  /** Closes the handle (the file stays usable: the next use reopens it). */
  evict(): void {
    const f = this.real;
    if (!f || !this.idle) return;
    this.real = null;
    f.close().catch((err: unknown) => this.cache.onCloseError(this.path, err));
  }
}

export class FileHandleCache implements LogFileSystem {
  /** Open wrappers, least recently used first. */
  private readonly lru = new Set<CachedLogFile>();

  constructor(
    private readonly fs: LogFileSystem,
    private readonly maxOpen: number,
    readonly onCloseError: (file: string, err: unknown) => void,
  ) {}

  /** Handles open now (segment `.log` files only). */
  get openHandles(): number {
    let n = 0;
    for (const f of this.lru) if (f.isOpen) n++;
    return n;
  }

  async open(file: string, create: boolean): Promise<LogFile> {
    const real = await this.fs.open(file, create);
    if (!file.endsWith(LOG_SUFFIX)) return real;
    const cached = new CachedLogFile(this, file, real);
    this.touch(cached);
    this.trim();
    return cached;
  }

  reopen(file: string): Promise<LogFile> {
    return this.fs.open(file, false);
  }

  touch(f: CachedLogFile): void {
    this.lru.delete(f);
    this.lru.add(f);
  }

  remove(f: CachedLogFile): void {
    this.lru.delete(f);
  }

  /** Closes least recently used idle handles while more than `maxOpen` are open. */
  trim(): void {
    let open = this.openHandles;
    if (open <= this.maxOpen) return;
    for (const f of this.lru) {
      if (open <= this.maxOpen) break;
      if (f.isOpen && f.idle) {
        f.evict();
        open--;
      }
    }
  }

  /** Pins the active segment's file (never evicted) and unpins the previous one. */
  static pin(file: LogFile, previous?: LogFile): void {
    if (previous instanceof CachedLogFile && previous !== file) previous.pinned = false;
    if (file instanceof CachedLogFile) file.pinned = true;
  }

  createExclusive(file: string, data: Buffer): Promise<boolean> {
    return this.fs.createExclusive(file, data);
  }
  readFile(file: string): Promise<Buffer | null> {
    return this.fs.readFile(file);
  }
  writeFileAtomic(file: string, data: Buffer): Promise<void> {
    return this.fs.writeFileAtomic(file, data);
  }
  readdir(dir: string): Promise<string[]> {
    return this.fs.readdir(dir);
  }
  mkdir(dir: string): Promise<void> {
    return this.fs.mkdir(dir);
  }
  stat(file: string): Promise<FileInfo | null> {
    return this.fs.stat(file);
  }
  unlink(file: string): Promise<void> {
    return this.fs.unlink(file);
  }
  rename(from: string, to: string): Promise<void> {
    return this.fs.rename(from, to);
  }
  syncDir(dir: string): Promise<void> {
    return this.fs.syncDir(dir);
  }
}
