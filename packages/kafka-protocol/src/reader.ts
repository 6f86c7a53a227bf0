/**
 * Reads Kafka's primitive types from one request or response body. Every
 * read is bounds-checked: a short buffer, a lying length or an int64 a
 * JavaScript number cannot hold exactly throws a MalformedKafkaError, never
 * reads past the frame or allocates more than the frame could hold. Bytes
 * and records are views into the frame (no copy).
 */
import { readInt64, uvarintAt, varintEnd } from '@mq/protocol/batch';
import { MqError } from '@mq/protocol/errors';

/** A frame that does not decode: the connection it came on is closed. */
export class MalformedKafkaError extends MqError {
  static readonly code = 'INVALID_REQUEST';
  constructor(message: string) {
    super('INVALID_REQUEST', message, { retriable: false, malformed: true });
    this.name = 'MalformedKafkaError';
  }
}

export class Reader {
  offset: number;

  constructor(
    readonly buf: Buffer,
    offset = 0,
    private readonly end = buf.length,
  ) {
    this.offset = offset;
  }

  get remaining(): number {
    return this.end - this.offset;
  }

  private need(n: number, what: string): number {
    const at = this.offset;
    if (n < 0 || at + n > this.end) throw new MalformedKafkaError(`${what} at byte ${at} needs ${n} bytes, ${this.end - at} left`);
    this.offset = at + n;
    return at;
  }

  int8(): number {
    return this.buf.readInt8(this.need(1, 'int8'));
  }

  int16(): number {
    return this.buf.readInt16BE(this.need(2, 'int16'));
  }

  uint16(): number {
    return this.buf.readUInt16BE(this.need(2, 'uint16'));
  }

  int32(): number {
    return this.buf.readInt32BE(this.need(4, 'int32'));
  }

  int64(): number {
    const at = this.need(8, 'int64');
    const v = readInt64(this.buf, at);
    if (!Number.isSafeInteger(v)) throw new MalformedKafkaError(`int64 at byte ${at} is beyond what a JavaScript number holds exactly (+-(2^53-1))`);
    return v;
  }

  float64(): number {
    return this.buf.readDoubleBE(this.need(8, 'float64'));
  }

  bool(): boolean {
    return this.buf[this.need(1, 'bool')] !== 0;
  }

  /** An unsigned varint of at most 5 bytes (a 32-bit value). */
  uvarint(): number {
    const at = this.offset;
    const v = uvarintAt(this.buf, at, this.end, 5);
    if (v === -1) throw new MalformedKafkaError(`varint at byte ${at} runs past the end, ${this.end - at} bytes left`);
    if (v < 0 || v > 0xffffffff) throw new MalformedKafkaError(`unsigned varint at byte ${at} is longer than 5 bytes`);
    this.offset = varintEnd;
    return v;
  }

  /** A length: int16 (strings) or int32 (bytes, arrays), or a compact one (uvarint of length + 1); -1 is null. */
  private length(flexible: boolean, wide: boolean): number {
    if (flexible) return this.uvarint() - 1;
    const n = wide ? this.int32() : this.int16();
    if (n < -1) throw new MalformedKafkaError(`negative length ${n} at byte ${this.offset}`);
    return n;
  }

  nullableString(flexible: boolean): string | null {
    const n = this.length(flexible, false);
    if (n < 0) return null;
    const at = this.need(n, 'string');
    return this.buf.toString('utf8', at, at + n);
  }

  string(flexible: boolean): string {
    return this.nullableString(flexible) ?? '';
  }

  nullableBytes(flexible: boolean): Buffer | null {
    const n = this.length(flexible, true);
    if (n < 0) return null;
    const at = this.need(n, 'bytes');
    return this.buf.subarray(at, at + n);
  }

  bytes(flexible: boolean): Buffer {
    return this.nullableBytes(flexible) ?? Buffer.alloc(0);
  }

  uuid(): string {
    const at = this.need(16, 'uuid');
    return this.buf.toString('hex', at, at + 16);
  }

  /** An array's element count (-1: null), never more than the bytes left (each element takes at least one). */
  arrayLength(flexible: boolean): number {
    const n = this.length(flexible, true);
    if (n > this.remaining) throw new MalformedKafkaError(`array of ${n} elements at byte ${this.offset} in ${this.remaining} bytes`);
    return n;
  }

  /** A tagged-field section: `field` reads the tags it knows (returns false for others, which are skipped). */
  taggedFields(field: (tag: number, r: Reader) => boolean): void {
    const count = this.uvarint();
    if (count > this.remaining) throw new MalformedKafkaError(`${count} tagged fields in ${this.remaining} bytes`);
    let last = -1;
    for (let i = 0; i < count; i++) {
      const tag = this.uvarint();
      if (tag <= last) throw new MalformedKafkaError(`tagged field ${tag} after ${last}: tags must ascend`);
      last = tag;
      const size = this.uvarint();
      const start = this.need(size, 'tagged field');
      const inner = new Reader(this.buf, start, start + size);
      if (field(tag, inner) && inner.remaining !== 0) throw new MalformedKafkaError(`tagged field ${tag} has ${inner.remaining} bytes left over`);
    }
  }
}
