/**
 * The time index of one segment: 12-byte entries (max timestamp so far as
 * int64, offset relative to the segment's base as uint32), timestamps
 * strictly increasing. An entry (T, o) says: no batch before offset o has a
 * timestamp above T, and the batch at o reaches T.
 */
import { readInt64, writeInt64 } from '@mq/protocol/batch';

export const TIME_ENTRY_SIZE = 12;

export class TimeIndex {
  private buf: Buffer;
  private count = 0;

  constructor(initialEntries = 16) {
    this.buf = Buffer.allocUnsafe(Math.max(1, initialEntries) * TIME_ENTRY_SIZE);
  }

  /** Parses a persisted time index; null when malformed. Trailing zero entries (preallocation) are ignored. */
  static fromBuffer(data: Buffer, lenient = false): TimeIndex | null {
    if (data.length % TIME_ENTRY_SIZE !== 0 && !lenient) return null;
    const usable = data.length - (data.length % TIME_ENTRY_SIZE);
    const index = new TimeIndex(usable / TIME_ENTRY_SIZE);
    for (let p = 0; p < usable; p += TIME_ENTRY_SIZE) {
      const ts = readInt64(data, p);
      const rel = data.readUInt32BE(p + 8);
      if (p > 0 && ts === 0 && rel === 0) break;
      if (ts < 0 || (index.count > 0 && (ts <= index.lastTimestamp() || rel < index.lastRelativeOffset()))) {
        if (lenient) break;
        return null;
      }
      index.append(ts, rel);
    }
    return index;
  }

  get entries(): number {
    return this.count;
  }

  timestampAt(i: number): number {
    return readInt64(this.buf, i * TIME_ENTRY_SIZE);
  }

  relativeOffsetAt(i: number): number {
    return this.buf.readUInt32BE(i * TIME_ENTRY_SIZE + 8);
  }

  lastTimestamp(): number {
    return this.count === 0 ? -1 : this.timestampAt(this.count - 1);
  }

  lastRelativeOffset(): number {
    return this.count === 0 ? -1 : this.relativeOffsetAt(this.count - 1);
  }

  /** Appends when `timestamp` is newer than the last entry; returns whether it did. */
  maybeAppend(timestamp: number, relativeOffset: number): boolean {
    if (timestamp < 0 || (this.count > 0 && (timestamp <= this.lastTimestamp() || relativeOffset < this.lastRelativeOffset()))) {
      return false;
    }
    if ((this.count + 1) * TIME_ENTRY_SIZE > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(64 * TIME_ENTRY_SIZE, this.buf.length * 2));
      this.buf.copy(next, 0, 0, this.count * TIME_ENTRY_SIZE);
      this.buf = next;
    }
    this.append(timestamp, relativeOffset);
    return true;
  }

  private append(timestamp: number, relativeOffset: number): void {
    const p = this.count * TIME_ENTRY_SIZE;
    writeInt64(this.buf, p, timestamp);
    this.buf.writeUInt32BE(relativeOffset, p + 8);
    this.count++;
  }

  /** Index of the last entry with timestamp < `timestamp`, or -1. */
  lowerEntry(timestamp: number): number {
    let lo = 0;
    let hi = this.count - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.timestampAt(mid) < timestamp) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  /** Drops entries for relative offsets >= `relativeOffset`. */
  truncate(relativeOffset: number): void {
    while (this.count > 0 && this.relativeOffsetAt(this.count - 1) >= relativeOffset) this.count--;
  }

  bytes(fromEntry = 0): Buffer {
    return this.buf.subarray(fromEntry * TIME_ENTRY_SIZE, this.count * TIME_ENTRY_SIZE);
  }
}
