/**
 * The one set of number encodings every mq package uses: zig-zag varints
 * (Kafka's record fields), unsigned varints (protobuf tags and lengths,
 * Kafka's compact lengths) and big-endian int64. Numbers stay JavaScript
 * numbers: the safe-integer range is all an offset, a timestamp or a length
 * needs.
 */
import { MqError } from '../errors.js';

/** Bytes that `writeVarint(value)` takes. */
export function varintSize(value: number): number {
  if (value >= -64 && value < 64) return 1;
  if (value >= -8192 && value < 8192) return 2;
  if (value >= -1048576 && value < 1048576) return 3;
  if (value >= -134217728 && value < 134217728) return 4;
  let v = value >= 0 ? value * 2 : -value * 2 - 1;
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

/** Writes a zig-zag varint at `pos`; returns the position after it. */
export function writeVarint(buf: Buffer, pos: number, value: number): number {
  if (value >= -0x40000000 && value < 0x40000000) {
    let v = ((value << 1) ^ (value >> 31)) >>> 0;
    while (v >= 0x80) {
      buf[pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    buf[pos++] = v;
    return pos;
  }
  let v = value >= 0 ? value * 2 : -value * 2 - 1;
  while (v >= 0x80) {
    buf[pos++] = (v % 128) | 0x80;
    v = Math.floor(v / 128);
  }
  buf[pos++] = v;
  return pos;
}

/** Where the last `varintAt()` stopped (a module cell, so the hot loops allocate nothing). */
export let varintEnd = 0;

/**
 * Reads the zig-zag varint at `pos`, which must end before `end`; the
 * position after it is left in `varintEnd`. The one varint reader of the
 * codec: the record scanner (broker checks and every decoder) uses it.
 * Record fields are mostly one or two bytes: those are inline.
 */
export function varintAt(buf: Buffer, pos: number, end: number): number {
  if (pos + 1 < end) {
    const b0 = buf[pos]!;
    if (b0 < 0x80) {
      varintEnd = pos + 1;
      return (b0 >>> 1) ^ -(b0 & 1);
    }
    const b1 = buf[pos + 1]!;
    if (b1 < 0x80) {
      varintEnd = pos + 2;
      const u = (b0 & 0x7f) | (b1 << 7);
      return (u >>> 1) ^ -(u & 1);
    }
  }
  return longVarint(buf, pos, end);
}

/** Varints of three bytes or more, or at the very end of the range. */
function longVarint(buf: Buffer, pos: number, end: number): number {
  let result = 0;
  let shift = 0;
  let byte: number;
  do {
    if (pos >= end) throw new MqError('CORRUPT_MESSAGE', 'varint runs past the end of the batch');
    byte = buf[pos++]!;
    if (shift < 28) result |= (byte & 0x7f) << shift;
    else result += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if (shift > 63) throw new MqError('CORRUPT_MESSAGE', 'varint is longer than 10 bytes');
  } while (byte & 0x80);
  varintEnd = pos;
  if (shift <= 28) return (result >>> 1) ^ -(result & 1);
  // Large values: undo zig-zag with arithmetic, not 32-bit operators.
  const u = result < 0 ? result + 2 ** 32 : result;
  return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
}

/**
 * Bytes that `writeUvarint(value)` takes: an unsigned varint (protobuf tags
 * and lengths), for a non-negative safe integer.
 */
export function uvarintSize(value: number): number {
  let n = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 128);
    n++;
  }
  return n;
}

/** Writes an unsigned varint (protobuf tags and lengths) at `pos`; returns the position after it. */
export function writeUvarint(buf: Uint8Array, pos: number, value: number): number {
  while (value >= 0x80) {
    buf[pos++] = (value & 0x7f) | 0x80;
    value = Math.floor(value / 128);
  }
  buf[pos++] = value;
  return pos;
}

/**
 * Reads the unsigned varint at `pos` of at most `maxBytes` bytes (5: a
 * 32-bit value), not past `end`; the position after it is left in
 * `varintEnd`. Returns -1 when it runs past `end` and -2 when it is longer
 * than `maxBytes` (callers name the field in their own error).
 */
export function uvarintAt(buf: Uint8Array, pos: number, end: number, maxBytes = 5): number {
  let v = 0;
  const stop = Math.min(end, pos + maxBytes);
  for (let shift = 0; pos < stop; shift += 7) {
    const b = buf[pos++]!;
    v += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) {
      varintEnd = pos;
      return v;
    }
  }
  return pos >= end ? -1 : -2;
}

const TWO_32 = 0x1_0000_0000;

/** The big-endian int64 at `pos`, as a number (exact within the safe-integer range). */
export function readInt64(buf: Buffer, pos: number): number {
  return buf.readInt32BE(pos) * TWO_32 + buf.readUInt32BE(pos + 4);
}

/** Writes `value` (a safe integer) as a big-endian int64 at `pos`. */
export function writeInt64(buf: Buffer, pos: number, value: number): void {
  const hi = Math.floor(value / TWO_32);
  buf.writeInt32BE(hi, pos);
  buf.writeUInt32BE(value - hi * TWO_32, pos + 4);
}
