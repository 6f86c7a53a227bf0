/**
 * Zig-zag varints as in protobuf and Kafka's record format. Numbers stay
 * JavaScript numbers: `varlong` covers the safe-integer range, which is all
 * a timestamp delta or a length needs.
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

/** A cursor for reading varints; `pos` advances as values are read. */
export class VarintReader {
  pos: number;
  constructor(
    readonly buf: Buffer,
    pos: number,
    readonly end: number,
  ) {
    this.pos = pos;
  }

  varint(): number {
    const v = varintAt(this.buf, this.pos, this.end);
    this.pos = varintEnd;
    return v;
  }

  /** Reads `len` bytes as a view (no copy); `-1` means null. */
  bytes(len: number): Buffer | null {
    if (len < 0) {
      if (len === -1) return null;
      throw new MqError('CORRUPT_MESSAGE', `negative length ${len}`);
    }
    const start = this.pos;
    const end = start + len;
    if (end > this.end) throw new MqError('CORRUPT_MESSAGE', `length ${len} runs past the end of the batch`);
    this.pos = end;
    return this.buf.subarray(start, end);
  }
}

/** Where the last `varintAt()` stopped (a module cell, so the hot loops allocate nothing). */
export let varintEnd = 0;

/**
 * Reads the zig-zag varint at `pos`, which must end before `end`; the
 * position after it is left in `varintEnd`. The one varint reader of the
 * codec: the broker's record checks, the decoders and VarintReader use it.
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
