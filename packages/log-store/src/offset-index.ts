/**
 * The sparse offset index of one segment: 8-byte entries (offset relative to
 * the segment's base as uint32, byte position in the .log as uint32), both
 * strictly increasing. Held in a Buffer that grows by doubling up to what
 * the segment can need; persisted by appending entries to the .index file.
 */
export const OFFSET_ENTRY_SIZE = 8;

export class OffsetIndex {
  private buf: Buffer;
  private count = 0;

  constructor(initialEntries = 64) {
    this.buf = Buffer.allocUnsafe(Math.max(1, initialEntries) * OFFSET_ENTRY_SIZE);
  }

  /**
   * Parses a persisted index; returns null when it is malformed or points past
   * `segmentSize`. `lenient` keeps the good prefix instead (recovery).
   */
  static fromBuffer(data: Buffer, segmentSize: number, lenient = false): OffsetIndex | null {
    if (data.length % OFFSET_ENTRY_SIZE !== 0 && !lenient) return null;
    const usable = data.length - (data.length % OFFSET_ENTRY_SIZE);
    const index = new OffsetIndex(usable / OFFSET_ENTRY_SIZE);
    let prevRel = -1;
    let prevPos = -1;
    for (let p = 0; p < usable; p += OFFSET_ENTRY_SIZE) {
      const rel = data.readUInt32BE(p);
      const pos = data.readUInt32BE(p + 4);
      // A zero entry after the first is preallocation or a torn tail: stop there.
      if (p > 0 && rel === 0 && pos === 0) break;
      if (rel <= prevRel || pos <= prevPos || pos >= segmentSize) {
        if (lenient) break; // recovery keeps the good prefix
        return null;
      }
      index.append(rel, pos);
      prevRel = rel;
      prevPos = pos;
    }
    return index;
  }

  get entries(): number {
    return this.count;
  }

  get byteSize(): number {
    return this.count * OFFSET_ENTRY_SIZE;
  }

  relativeOffsetAt(i: number): number {
    return this.buf.readUInt32BE(i * OFFSET_ENTRY_SIZE);
  }

  positionAt(i: number): number {
    return this.buf.readUInt32BE(i * OFFSET_ENTRY_SIZE + 4);
  }

  lastRelativeOffset(): number {
    return this.count === 0 ? -1 : this.relativeOffsetAt(this.count - 1);
  }

  append(relativeOffset: number, position: number): void {
    if (this.count > 0 && (relativeOffset <= this.lastRelativeOffset() || position <= this.positionAt(this.count - 1))) {
      throw new RangeError(`index entry ${relativeOffset}@${position} is not after the last one`);
    }
    if ((this.count + 1) * OFFSET_ENTRY_SIZE > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(64 * OFFSET_ENTRY_SIZE, this.buf.length * 2));
      this.buf.copy(next, 0, 0, this.count * OFFSET_ENTRY_SIZE);
      this.buf = next;
    }
    const p = this.count * OFFSET_ENTRY_SIZE;
    this.buf.writeUInt32BE(relativeOffset, p);
    this.buf.writeUInt32BE(position, p + 4);
    this.count++;
  }

  /** Index of the last entry whose relative offset is <= `relativeOffset`, or -1. */
  floorEntry(relativeOffset: number): number {
    let lo = 0;
    let hi = this.count - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.relativeOffsetAt(mid) <= relativeOffset) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  /** Byte position to start scanning from for `relativeOffset` (0 when no entry precedes it). */
  lookup(relativeOffset: number): number {
    const i = this.floorEntry(relativeOffset);
    return i < 0 ? 0 : this.positionAt(i);
  }

  /** Drops entries for relative offsets >= `relativeOffset` or positions >= `position`. */
  truncate(relativeOffset: number, position: number): void {
    while (this.count > 0 && (this.relativeOffsetAt(this.count - 1) >= relativeOffset || this.positionAt(this.count - 1) >= position)) {
      this.count--;
    }
  }

  /** The persisted form: entries [from, count). */
  bytes(fromEntry = 0): Buffer {
    return this.buf.subarray(fromEntry * OFFSET_ENTRY_SIZE, this.count * OFFSET_ENTRY_SIZE);
  }

  /** Shrinks the backing buffer to the entries (used when a segment is rolled). */
  trim(): void {
    if (this.buf.length > this.byteSize) this.buf = Buffer.from(this.bytes());
  }
}
