/**
 * The file-system component the log does all its I/O through. Production
 * uses `nodeFileSystem` (node:fs/promises); tests inject one that fails
 * writes part-way (ENOSPC) or records calls.
 */
import { ftruncateSync, writeSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';

/**
 * Writes up to this size go to the page cache synchronously (pwrite on the
 * event loop, as Kafka's request threads do) instead of through the libuv
 * thread pool: a small append is a memcpy, and two thread-pool hand-offs cost
 * more than it, with a long tail on a busy machine. Larger writes stay
 * asynchronous so one append never holds the event loop for long. Either
 * way the bytes are in the page cache, not on disk, when the write resolves.
 */
export const SYNC_WRITE_MAX_BYTES = 256 * 1024;

export interface LogFile {
  /** Reads up to `length` bytes at `position`; returns the count read (0 at end of file). */
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<number>;
  /** Writes up to `length` bytes at `position`; returns the count written (may be short). */
  write(buffer: Buffer, offset: number, length: number, position: number): Promise<number>;
  datasync(): Promise<void>;
  truncate(length: number): Promise<void>;
  size(): Promise<number>;
  close(): Promise<void>;
  /**
   * Optional synchronous pwrite and ftruncate (to the page cache, on the
   * event loop). A file that has both lets a small append finish without an
   * await (Log's fast path); one without them always takes the async path.
   */
  writeSync?(buffer: Buffer, offset: number, length: number, position: number): number;
  truncateSync?(length: number): void;
}

export interface FileInfo {
  size: number;
  mtimeMs: number;
}

export interface LogFileSystem {
  /** Opens for reading and writing, creating the file when `create` is set. */
  open(file: string, create: boolean): Promise<LogFile>;
  /** Creates the file only when it does not exist; null when it does. */
  createExclusive(file: string, data: Buffer): Promise<boolean>;
  readFile(file: string): Promise<Buffer | null>;
  /** Writes `data` to `file` atomically (temp file, fsync, rename, fsync of the directory). */
  writeFileAtomic(file: string, data: Buffer): Promise<void>;
  readdir(dir: string): Promise<string[]>;
  mkdir(dir: string): Promise<void>;
  stat(file: string): Promise<FileInfo | null>;
  /** Removes a file; missing files are not an error. */
  unlink(file: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  syncDir(dir: string): Promise<void>;
}

function isNotFound(err: unknown): boolean {
  return (err as NodeJS.ErrnoException)?.code === 'ENOENT';
}

class NodeLogFile implements LogFile {
  constructor(private readonly fh: fsp.FileHandle) {}

  async read(buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
    const { bytesRead } = await this.fh.read(buffer, offset, length, position);
    return bytesRead;
  }

  writeSync(buffer: Buffer, offset: number, length: number, position: number): number {
    return writeSync(this.fh.fd, buffer, offset, length, position);
  }

  truncateSync(length: number): void {
    ftruncateSync(this.fh.fd, length);
  }

  async write(buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
    if (length <= SYNC_WRITE_MAX_BYTES) return writeSync(this.fh.fd, buffer, offset, length, position);
    const { bytesWritten } = await this.fh.write(buffer, offset, length, position);
    return bytesWritten;
  }

  datasync(): Promise<void> {
    return this.fh.datasync();
  }

  truncate(length: number): Promise<void> {
    return this.fh.truncate(length);
  }

  async size(): Promise<number> {
    return (await this.fh.stat()).size;
  }

  close(): Promise<void> {
    return this.fh.close();
  }
}

export const nodeFileSystem: LogFileSystem = {
  async open(file, create) {
    if (create) {
      try {
        return new NodeLogFile(await fsp.open(file, 'r+'));
      } catch (err) {
        if (!isNotFound(err)) throw err;
        return new NodeLogFile(await fsp.open(file, 'w+'));
      }
    }
    return new NodeLogFile(await fsp.open(file, 'r+'));
  },
  async createExclusive(file, data) {
    let fh: fsp.FileHandle;
    try {
      fh = await fsp.open(file, 'wx');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
    try {
      await fh.writeFile(data);
      await fh.datasync();
    } finally {
      await fh.close();
    }
    return true;
  },
  async readFile(file) {
    try {
      return await fsp.readFile(file);
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  },
  async writeFileAtomic(file, data) {
    const tmp = `${file}.tmp`;
    const fh = await fsp.open(tmp, 'w');
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fsp.rename(tmp, file);
    await nodeFileSystem.syncDir(path.dirname(file));
  },
  readdir: (dir) => fsp.readdir(dir),
  async mkdir(dir) {
    await fsp.mkdir(dir, { recursive: true });
  },
  async stat(file) {
    try {
      const s = await fsp.stat(file);
      return { size: s.size, mtimeMs: s.mtimeMs };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  },
  async unlink(file) {
    try {
      await fsp.unlink(file);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  },
  rename: (from, to) => fsp.rename(from, to),
  async syncDir(dir) {
    const fh = await fsp.open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  },
};

/** Writes all of `buffer[offset, offset+length)` at `position`, looping over short writes. */
export async function writeFully(file: LogFile, buffer: Buffer, offset: number, length: number, position: number): Promise<void> {
  let done = 0;
  while (done < length) {
    const n = await file.write(buffer, offset + done, length - done, position + done);
    if (n <= 0) throw Object.assign(new Error('write made no progress'), { code: 'EIO' });
    done += n;
  }
}

/** writeFully through the file's synchronous write (which the caller checked it has). */
export function writeFullySync(file: LogFile, buffer: Buffer, offset: number, length: number, position: number): void {
  let done = 0;
  while (done < length) {
    const n = file.writeSync!(buffer, offset + done, length - done, position + done);
    if (n <= 0) throw Object.assign(new Error('write made no progress'), { code: 'EIO' });
    done += n;
  }
}

/** Reads up to `length` bytes at `position`, looping over short reads; returns the count read. */
export async function readFully(file: LogFile, buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
  let done = 0;
  while (done < length) {
    const n = await file.read(buffer, offset + done, length - done, position + done);
    if (n <= 0) break;
    done += n;
  }
  return done;
}
