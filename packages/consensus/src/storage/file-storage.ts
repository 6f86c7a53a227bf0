import { crc32c } from '@node-rs/crc32';
import { MqError } from '@mq/protocol/errors';
import { constants, promises as fsp, readFileSync, existsSync, writeFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { raft as pb } from '../gen/raft.js';
import { cloneConfState, type ConfState, type Entry, type EntryType, type HardState, type Snapshot, type SnapshotMeta } from '../core/types.js';
import { MemoryStorage } from './memory-storage.js';

/**
 * Durable Raft storage in a directory:
 *  - `wal`: append-only records [u32 length][u32 crc32c][WalRecord protobuf];
 *    one record per save() (entries, hard state, snapshot marker), one
 *    fdatasync per record. A record with a snapshot marker drops every
 *    entry before it and resets the log start to the marker.
 *  - `snapshot`: the latest snapshot (metadata + data + crc32c), replaced
 *    atomically (write to a temporary file, fsync, rename, fsync the directory).
 * The log since the last snapshot is also kept in memory for reads.
 * At open, a torn last WAL record (a crash mid-write; never acknowledged)
 * is cut off; a corrupt record followed by more data, a bad snapshot file or
 * an inconsistent hard state refuse to open with CORRUPT_MESSAGE.
 */
export interface FileStorageOptions {
  /** fsync writes (default true). Turning it off loses Raft's durability guarantees. */
  sync?: boolean;
  /**
   * The WAL grows in zero-filled steps of this many bytes (default 16 MiB,
   * 0 = grow on every append). Overwriting allocated blocks lets fdatasync
   * skip the file-size metadata journal commit, which is what makes fsync
   * latency tails short on ext4/xfs (etcd preallocates its WAL for the same reason).
   */
  preallocateBytes?: number;
}

export const DEFAULT_PREALLOCATE_BYTES = 16 * 1024 * 1024;

const HEADER = 8;
const SNAP_MAGIC = 0x4d51534e; // 'MQSN'
const MAX_RECORD = 256 * 1024 * 1024;

export class FileStorage extends MemoryStorage {
  private wal!: fsp.FileHandle;
  private walSize = 0;
  private allocated = 0;
  private readonly preallocate: number;
  private chain: Promise<unknown> = Promise.resolve();
  private readonly sync: boolean;
  /** Bytes cut from a torn tail at open (0 if the WAL ended cleanly). */
  truncatedBytes = 0;

  private constructor(
    readonly dir: string,
    options: FileStorageOptions,
  ) {
    super();
    this.sync = options.sync ?? true;
    this.preallocate = options.preallocateBytes ?? DEFAULT_PREALLOCATE_BYTES;
    if (!Number.isSafeInteger(this.preallocate) || this.preallocate < 0) {
      throw new MqError('INVALID_ARGUMENT', `preallocateBytes must be a non-negative integer, got ${options.preallocateBytes}`);
    }
  }

  static async open(dir: string, options: FileStorageOptions = {}): Promise<FileStorage> {
    await fsp.mkdir(dir, { recursive: true });
    const s = new FileStorage(dir, options);
    s.lock();
    try {
      await s.load();
    } catch (err) {
      s.unlock();
      throw err;
    }
    return s;
  }

  private lock(): void {
    const file = join(this.dir, 'LOCK');
    if (existsSync(file)) {
      const pid = Number(readFileSync(file, 'utf8'));
      let alive = false;
      if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid) {
        try {
          process.kill(pid, 0);
          alive = true;
        } catch {
          alive = false;
        }
      }
      if (alive) throw new MqError('LOG_DIR_LOCKED', `raft storage ${this.dir} is in use by process ${pid}`);
      if (pid === process.pid && FileStorage.openDirs.has(this.dir)) {
        throw new MqError('LOG_DIR_LOCKED', `raft storage ${this.dir} is already open in this process`);
      }
    }
    writeFileSync(file, String(process.pid));
    FileStorage.openDirs.add(this.dir);
  }

  private unlock(): void {
    FileStorage.openDirs.delete(this.dir);
    try {
      unlinkSync(join(this.dir, 'LOCK'));
    } catch {
      // already gone
    }
  }

  private static openDirs = new Set<string>();

  private async load(): Promise<void> {
    await fsp.rm(join(this.dir, 'snapshot.tmp'), { force: true });
    await fsp.rm(join(this.dir, 'wal.tmp'), { force: true });
    const snapPath = join(this.dir, 'snapshot');
    if (existsSync(snapPath)) this.snap = decodeSnapshotFile(await fsp.readFile(snapPath), snapPath);
    const walPath = join(this.dir, 'wal');
    const buf = existsSync(walPath) ? await fsp.readFile(walPath) : Buffer.alloc(0);
    let off = 0;
    while (off < buf.length) {
      if (buf.length - off < HEADER) break; // torn header
      const len = buf.readUInt32BE(off);
      const crc = buf.readUInt32BE(off + 4);
      if (len === 0) break; // preallocated space: the end of the log
      if (len > MAX_RECORD || off + HEADER + len > buf.length) break; // torn (or garbage) tail
      const payload = buf.subarray(off + HEADER, off + HEADER + len);
      if (crc32c(payload) !== crc) {
        if (validRecordAt(buf, off + HEADER + len)) {
          throw new MqError('CORRUPT_MESSAGE', `raft WAL ${walPath}: record at byte ${off} fails its checksum and valid records follow; refusing to start`, { offset: off });
        }
        break; // torn last record
      }
      let rec: pb.WalRecord;
      try {
        rec = pb.WalRecord.decode(payload);
      } catch (cause) {
        throw new MqError('CORRUPT_MESSAGE', `raft WAL ${walPath}: record at byte ${off} does not decode`, { offset: off, cause });
      }
      this.replay(rec, walPath, off);
      off += HEADER + len;
    }
    // Anything non-zero after the last good record is a torn write that was never acknowledged.
    let lastNonZero = buf.length - 1;
    while (lastNonZero >= off && buf[lastNonZero] === 0) lastNonZero--;
    this.truncatedBytes = lastNonZero >= off ? lastNonZero + 1 - off : 0;
    // Reconcile with the snapshot file (it may be newer than the WAL's last marker).
    const si = this.snap.meta.index;
    if (si > this.dummyIndex) {
      if (si <= this.lastIndex() && this.term(si) === this.snap.meta.term) {
        // the log still covers the snapshot point: keep it
      } else {
        this.ents = [];
        this.dummyIndex = si;
        this.dummyTerm = this.snap.meta.term;
      }
    }
    if (this.hard.commit > this.lastIndex()) {
      throw new MqError('CORRUPT_MESSAGE', `raft storage ${this.dir}: commit index ${this.hard.commit} is beyond the last entry ${this.lastIndex()}`);
    }
    this.wal = await fsp.open(walPath, constants.O_RDWR | constants.O_CREAT);
    if (this.truncatedBytes > 0) {
      // Zero the torn bytes from the back, so that a crash midway still leaves a torn (not corrupt) tail.
      const zeros = Buffer.alloc(64 * 1024);
      for (let end = off + this.truncatedBytes; end > off; ) {
        const start = Math.max(off, end - zeros.length);
        await this.wal.write(zeros, 0, end - start, start);
        end = start;
      }
      if (this.sync) await this.wal.sync();
    }
    this.walSize = off;
    this.allocated = buf.length;
  }

  private replay(rec: pb.WalRecord, walPath: string, off: number): void {
    if (rec.snapshot) {
      this.ents = [];
      this.dummyIndex = Number(rec.snapshot.index);
      this.dummyTerm = Number(rec.snapshot.term);
    }
    if (rec.entries.length > 0) {
      const ents = rec.entries.map(fromPbEntry);
      const first = ents[0]!.index;
      if (first > this.lastIndex() + 1) {
        throw new MqError('CORRUPT_MESSAGE', `raft WAL ${walPath}: record at byte ${off} starts at entry ${first} after last entry ${this.lastIndex()}`, { offset: off });
      }
      this.appendEntries(ents);
    }
    if (rec.hardState) {
      this.hard = { term: Number(rec.hardState.term), vote: Number(rec.hardState.vote), commit: Number(rec.hardState.commit) };
    }
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.chain.then(fn, fn);
    this.chain = p.catch(() => undefined);
    return p;
  }

  override save(update: { hardState?: HardState; entries?: Entry[]; snapshot?: Snapshot }): Promise<void> {
    return this.serial(async () => {
      this.checkOpen();
      if (update.snapshot) {
        if (update.snapshot.meta.index <= this.snap.meta.index && this.snap.meta.index > 0) {
          throw new MqError('SNAPSHOT_OUT_OF_DATE', `snapshot at ${update.snapshot.meta.index} is older than the one held at ${this.snap.meta.index}`);
        }
        await this.writeSnapshotFile(update.snapshot);
      }
      if (update.entries && update.entries.length > 0) {
        const first = update.entries[0]!.index;
        const last = update.snapshot ? update.snapshot.meta.index : this.lastIndex();
        if (first > last + 1) throw new MqError('INVALID_ARGUMENT', `entry ${first} would leave a gap after the last index ${last}`);
      }
      const rec: pb.IWalRecord = {};
      if (update.snapshot) rec.snapshot = toPbMeta(update.snapshot.meta);
      if (update.entries?.length) rec.entries = update.entries.map(toPbEntry);
      if (update.hardState) rec.hardState = update.hardState;
      // Like etcd's MustSync: a change of the commit index alone need not be
      // fsynced (it is re-learned from the leader); entries, term and vote must.
      const hs = update.hardState;
      const mustSync =
        Boolean(update.snapshot) || Boolean(update.entries?.length) || (hs !== undefined && (hs.term !== this.hard.term || hs.vote !== this.hard.vote));
      await this.appendRecord(rec, mustSync);
      this.applyUpdate(update);
    });
  }

  override createSnapshot(index: number, confState: ConfState, data: Uint8Array, keep = 0): Promise<Snapshot> {
    return this.serial(async () => {
      this.checkOpen();
      if (index <= this.snap.meta.index) {
        throw new MqError('SNAPSHOT_OUT_OF_DATE', `snapshot at ${index} is not newer than the one held at ${this.snap.meta.index}`);
      }
      if (index > this.lastIndex() || index > this.hard.commit) {
        throw new MqError('INVALID_ARGUMENT', `snapshot index ${index} is not a committed entry (commit ${this.hard.commit}, last ${this.lastIndex()})`);
      }
      const snap: Snapshot = { meta: { index, term: this.term(index), confState: cloneConfState(confState) }, data };
      await this.writeSnapshotFile(snap);
      const s = this.makeSnapshot(index, confState, data, keep);
      await this.rewriteWal();
      return s;
    });
  }

  /** Replaces the WAL by one holding only the live log (after compaction). */
  private async rewriteWal(): Promise<void> {
    const tmp = join(this.dir, 'wal.tmp');
    const fh = await fsp.open(tmp, 'w');
    let size = 0;
    try {
      const recs: pb.IWalRecord[] = [{ snapshot: { index: this.dummyIndex, term: this.dummyTerm }, hardState: this.hard }];
      for (let i = 0; i < this.ents.length; i += 1000) recs.push({ entries: this.ents.slice(i, i + 1000).map(toPbEntry) });
      for (const r of recs) {
        const frame = frameRecord(r);
        await fh.write(frame, 0, frame.length, size);
        size += frame.length;
      }
      this.allocated = this.preallocate > 0 ? await zeroFill(fh, size, size + this.preallocate, false) : size;
      if (this.sync) await fh.sync();
    } finally {
      await fh.close();
    }
    await this.wal.close();
    await fsp.rename(tmp, join(this.dir, 'wal'));
    await this.syncDir();
    this.wal = await fsp.open(join(this.dir, 'wal'), constants.O_RDWR);
    this.walSize = size;
  }

  private async appendRecord(rec: pb.IWalRecord, mustSync: boolean): Promise<void> {
    const frame = frameRecord(rec);
    if (this.preallocate > 0 && this.walSize + frame.length > this.allocated) {
      this.allocated = await zeroFill(this.wal, this.allocated, this.walSize + frame.length + this.preallocate, this.sync);
    }
    await this.wal.write(frame, 0, frame.length, this.walSize);
    this.walSize += frame.length;
    if (this.sync && mustSync) await this.wal.datasync();
  }

  private async writeSnapshotFile(s: Snapshot): Promise<void> {
    const tmp = join(this.dir, 'snapshot.tmp');
    const fh = await fsp.open(tmp, 'w');
    try {
      await fh.write(encodeSnapshotFile(s));
      if (this.sync) await fh.sync();
    } finally {
      await fh.close();
    }
    await fsp.rename(tmp, join(this.dir, 'snapshot'));
    await this.syncDir();
  }

  private async syncDir(): Promise<void> {
    if (!this.sync) return;
    const d = await fsp.open(this.dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  }

  /** Bytes in the WAL file. */
  get walBytes(): number {
    return this.walSize;
  }

  override close(): Promise<void> {
    return this.serial(async () => {
      if (this.closed) return;
      this.closed = true;
      await this.wal.close();
      this.unlock();
    });
  }
}

/** True when a well-formed record (length, checksum) starts at `off`. */
function validRecordAt(buf: Buffer, off: number): boolean {
  if (buf.length - off < HEADER) return false;
  const len = buf.readUInt32BE(off);
  if (len === 0 || off + HEADER + len > buf.length) return false;
  return crc32c(buf.subarray(off + HEADER, off + HEADER + len)) === buf.readUInt32BE(off + 4);
}

/** Writes zeros over [from, to) and returns `to` (the new allocated size). */
async function zeroFill(fh: fsp.FileHandle, from: number, to: number, sync: boolean): Promise<number> {
  const zeros = Buffer.alloc(Math.min(1024 * 1024, to - from));
  for (let at = from; at < to; at += zeros.length) await fh.write(zeros, 0, Math.min(zeros.length, to - at), at);
  if (sync) await fh.sync(); // the size change is metadata: one full sync per step
  return to;
}

function frameRecord(rec: pb.IWalRecord): Buffer {
  const payload = pb.WalRecord.encode(rec).finish();
  const frame = Buffer.allocUnsafe(HEADER + payload.length);
  frame.writeUInt32BE(payload.length, 0);
  frame.writeUInt32BE(crc32c(Buffer.from(payload.buffer, payload.byteOffset, payload.length)), 4);
  frame.set(payload, HEADER);
  return frame;
}

function toPbEntry(e: Entry): pb.IEntry {
  return { term: e.term, index: e.index, type: e.type, data: e.data };
}

function fromPbEntry(e: pb.IEntry): Entry {
  return { term: Number(e.term), index: Number(e.index), type: (e.type ?? 0) as EntryType, data: e.data ?? new Uint8Array(0) };
}

function toPbMeta(m: SnapshotMeta): pb.ISnapshotMeta {
  return { index: m.index, term: m.term, confState: { voters: m.confState.voters, learners: m.confState.learners } };
}

function encodeSnapshotFile(s: Snapshot): Buffer {
  const meta = pb.SnapshotMeta.encode({ ...toPbMeta(s.meta), size: s.data.length }).finish();
  const buf = Buffer.allocUnsafe(8 + meta.length + s.data.length + 4);
  buf.writeUInt32BE(SNAP_MAGIC, 0);
  buf.writeUInt32BE(meta.length, 4);
  buf.set(meta, 8);
  buf.set(s.data, 8 + meta.length);
  buf.writeUInt32BE(crc32c(buf.subarray(0, buf.length - 4)), buf.length - 4);
  return buf;
}

function decodeSnapshotFile(buf: Buffer, path: string): Snapshot {
  const bad = (why: string): never => {
    throw new MqError('CORRUPT_MESSAGE', `raft snapshot ${path} is corrupt (${why}); refusing to start`);
  };
  if (buf.length < 12 || buf.readUInt32BE(0) !== SNAP_MAGIC) bad('bad header');
  if (crc32c(buf.subarray(0, buf.length - 4)) !== buf.readUInt32BE(buf.length - 4)) bad('checksum mismatch');
  const metaLen = buf.readUInt32BE(4);
  if (8 + metaLen + 4 > buf.length) bad('truncated metadata');
  const meta = pb.SnapshotMeta.decode(buf.subarray(8, 8 + metaLen));
  const data = Buffer.from(buf.subarray(8 + metaLen, buf.length - 4));
  if (Number(meta.size) !== data.length) bad('size mismatch');
  return {
    meta: {
      index: Number(meta.index),
      term: Number(meta.term),
      confState: { voters: (meta.confState?.voters ?? []).map(Number), learners: (meta.confState?.learners ?? []).map(Number) },
    },
    data,
  };
}
