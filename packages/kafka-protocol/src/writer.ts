/**
 * Writes Kafka's primitive types into a list of buffers. Small values are
 * copied into a scratch buffer; bytes of ZERO_COPY_MIN_BYTES or more (record
 * batches read from the log) are put in the list as they are, so a fetch
 * response is written to the socket without copying its records.
 */
import { writeInt64, writeUvarint } from '@mq/protocol/batch';

/** Bytes at least this long are referenced, not copied. */
export const ZERO_COPY_MIN_BYTES = 1024;
const CHUNK_BYTES = 16 * 1024;

export class Writer {
  private readonly parts: Buffer[] = [];
  private buf: Buffer;
  private start = 0;
  private pos = 0;
  private total = 0;

  constructor(initialBytes = 512) {
    this.buf = Buffer.allocUnsafe(initialBytes);
  }

  /** Bytes written so far. */
  get length(): number {
    return this.total + (this.pos - this.start);
  }

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    this.cut();
    this.buf = Buffer.allocUnsafe(Math.max(n, CHUNK_BYTES));
    this.start = this.pos = 0;
  }

  private cut(): void {
    if (this.pos > this.start) {
      this.parts.push(this.buf.subarray(this.start, this.pos));
      this.total += this.pos - this.start;
      this.start = this.pos;
    }
  }

  int8(v: number): void {
    this.room(1);
    this.pos = this.buf.writeInt8(v, this.pos);
  }

  int16(v: number): void {
    this.room(2);
    this.pos = this.buf.writeInt16BE(v, this.pos);
  }

  uint16(v: number): void {
    this.room(2);
    this.pos = this.buf.writeUInt16BE(v, this.pos);
  }

  int32(v: number): void {
    this.room(4);
    this.pos = this.buf.writeInt32BE(v, this.pos);
  }

  int64(v: number): void {
    if (!Number.isSafeInteger(v)) throw new RangeError(`int64 value ${v} is not a safe integer`);
    this.room(8);
    writeInt64(this.buf, this.pos, v);
    this.pos += 8;
  }

  float64(v: number): void {
    this.room(8);
    this.pos = this.buf.writeDoubleBE(v, this.pos);
  }

  bool(v: boolean): void {
    this.int8(v ? 1 : 0);
  }

  uvarint(v: number): void {
    this.room(5);
    this.pos = writeUvarint(this.buf, this.pos, v);
  }

  private lengthPrefix(n: number, flexible: boolean, wide: boolean): void {
    if (flexible) this.uvarint(n + 1);
    else if (wide) this.int32(n);
    else this.int16(n);
  }

  nullableString(v: string | null | undefined, flexible: boolean): void {
    if (v === null || v === undefined) return this.lengthPrefix(-1, flexible, false);
    const n = Buffer.byteLength(v);
    if (n > 0x7fff) throw new RangeError(`string of ${n} bytes is longer than Kafka's 32767`);
    this.lengthPrefix(n, flexible, false);
    this.room(n);
    this.pos += this.buf.write(v, this.pos, 'utf8');
  }

  string(v: string | null | undefined, flexible: boolean): void {
    this.nullableString(v ?? '', flexible);
  }

  nullableBytes(v: Uint8Array | null | undefined, flexible: boolean): void {
    if (v === null || v === undefined) return this.lengthPrefix(-1, flexible, true);
    this.lengthPrefix(v.length, flexible, true);
    this.raw(v);
  }

  bytes(v: Uint8Array | null | undefined, flexible: boolean): void {
    this.nullableBytes(v ?? Buffer.alloc(0), flexible);
  }

  uuid(v: string | null | undefined): void {
    const hex = (v ?? '').replace(/-/g, '');
    this.room(16);
    if (hex.length === 32) this.buf.write(hex, this.pos, 'hex');
    else this.buf.fill(0, this.pos, this.pos + 16);
    this.pos += 16;
  }

  arrayLength(n: number, flexible: boolean): void {
    this.lengthPrefix(n, flexible, true);
  }

  /** Bytes as they are: referenced when large, copied when small. */
  raw(v: Uint8Array): void {
    if (v.length >= ZERO_COPY_MIN_BYTES) {
      this.cut();
      this.parts.push(Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength));
      this.total += v.length;
      return;
    }
    this.room(v.length);
    this.buf.set(v, this.pos);
    this.pos += v.length;
  }

  /** A tagged-field section from the fields to write, in ascending tag order. */
  taggedFields(fields: ReadonlyArray<readonly [number, (w: Writer) => void]>): void {
    this.uvarint(fields.length);
    for (const [tag, write] of fields) {
      const inner = new Writer(64);
      write(inner);
      this.uvarint(tag);
      this.uvarint(inner.length);
      for (const part of inner.finish()) this.raw(part);
    }
  }

  /** The written bytes, as a list of buffers (large byte fields by reference). */
  finish(): Buffer[] {
    this.cut();
    return this.parts;
  }
}
