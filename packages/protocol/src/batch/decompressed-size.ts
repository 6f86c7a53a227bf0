/**
 * Upper bounds on what compressed data inflates to, read from the codecs'
 * own framing without decompressing, so that no decoder is asked to
 * allocate past a limit (compression bombs). gzip is bounded by zlib's
 * `maxOutputLength` instead. Throws INVALID_RECORD when the framing itself
 * is malformed.
 */
import { MqError } from '../errors.js';

const LZ4_MAGIC = 0x184d2204;
const ZSTD_MAGIC = 0xfd2fb528;
/** Skippable frames (both lz4 and zstd): 0x184D2A50 to 0x184D2A5F. */
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;
const LZ4_BLOCK_MAX = [0, 0, 0, 0, 64 << 10, 256 << 10, 1 << 20, 4 << 20];
/** An lz4 block inflates at most about 255-fold (each length byte adds 255). */
const LZ4_MAX_RATIO = 256;
const ZSTD_BLOCK_MAX = 128 << 10;

function malformed(codec: string, why: string): MqError {
  return new MqError('INVALID_RECORD', `${codec} data is malformed: ${why}`);
}

function need(codec: string, data: Buffer, pos: number, n: number): void {
  if (pos + n > data.length) throw malformed(codec, 'it ends inside a frame');
}

/** The uncompressed length raw snappy data declares in its preamble. */
export function snappyLength(data: Buffer): number {
  let result = 0;
  for (let i = 0, shift = 0; i < 5; i++, shift += 7) {
    need('snappy', data, i, 1);
    const b = data[i]!;
    result += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) return result;
  }
  throw malformed('snappy', 'the length preamble is longer than 5 bytes');
}

/** An upper bound on the bytes an lz4 frame sequence inflates to; stops early past `limit`. */
export function lz4Bound(data: Buffer, limit: number): number {
  let pos = 0;
  let total = 0;
  while (pos < data.length) {
    need('lz4', data, pos, 4);
    const magic = data.readUInt32LE(pos);
    if (((magic & SKIPPABLE_MASK) >>> 0) === SKIPPABLE_MAGIC) {
      need('lz4', data, pos, 8);
      pos += 8 + data.readUInt32LE(pos + 4);
      continue;
    }
    if (magic !== LZ4_MAGIC) throw malformed('lz4', 'not an lz4 frame');
    need('lz4', data, pos, 7);
    const flg = data[pos + 4]!;
    const blockMax = LZ4_BLOCK_MAX[(data[pos + 5]! >> 4) & 7]!;
    if (blockMax === 0) throw malformed('lz4', 'unknown block size');
    pos += 6 + (flg & 0x08 ? 8 : 0) + (flg & 0x01 ? 4 : 0) + 1;
    for (;;) {
      need('lz4', data, pos, 4);
      const word = data.readUInt32LE(pos);
      pos += 4;
      if (word === 0) break;
      const size = word & 0x7fff_ffff;
      if (size > blockMax) throw malformed('lz4', `a block of ${size} bytes is over the frame's ${blockMax}`);
      total += word & 0x8000_0000 ? size : Math.min(blockMax, size * LZ4_MAX_RATIO);
      if (total > limit) return total;
      pos += size + (flg & 0x10 ? 4 : 0);
    }
    if (flg & 0x04) pos += 4;
  }
  if (pos > data.length) throw malformed('lz4', 'it ends inside a frame');
  return total;
}

/** An upper bound on the bytes a zstd frame sequence inflates to; stops early past `limit`. */
export function zstdBound(data: Buffer, limit: number): number {
  let pos = 0;
  let total = 0;
  while (pos < data.length) {
    need('zstd', data, pos, 4);
    const magic = data.readUInt32LE(pos);
    if (((magic & SKIPPABLE_MASK) >>> 0) === SKIPPABLE_MAGIC) {
      need('zstd', data, pos, 8);
      pos += 8 + data.readUInt32LE(pos + 4);
      continue;
    }
    if (magic !== ZSTD_MAGIC) throw malformed('zstd', 'not a zstd frame');
    need('zstd', data, pos, 5);
    const fhd = data[pos + 4]!;
    pos += 5;
    const fcsFlag = fhd >> 6;
    const singleSegment = (fhd & 0x20) !== 0;
    const checksum = (fhd & 0x04) !== 0;
    let windowSize = Infinity;
    if (!singleSegment) {
      need('zstd', data, pos, 1);
      const wd = data[pos++]!;
      const base = 2 ** (10 + (wd >> 3));
      windowSize = base + (base / 8) * (wd & 7);
    }
    pos += [0, 1, 2, 4][fhd & 3]!;
    const fcsBytes = fcsFlag === 0 ? (singleSegment ? 1 : 0) : [0, 2, 4, 8][fcsFlag]!;
    let contentSize = Infinity;
    if (fcsBytes > 0) {
      need('zstd', data, pos, fcsBytes);
      if (fcsBytes === 1) contentSize = data[pos]!;
      else if (fcsBytes === 2) contentSize = data.readUInt16LE(pos) + 256;
      else if (fcsBytes === 4) contentSize = data.readUInt32LE(pos);
      else contentSize = data.readUInt32LE(pos) + data.readUInt32LE(pos + 4) * 2 ** 32;
      pos += fcsBytes;
      if (singleSegment) windowSize = contentSize;
    }
    const blockMax = Math.min(windowSize, ZSTD_BLOCK_MAX);
    let frame = 0;
    for (;;) {
      need('zstd', data, pos, 3);
      const h = data[pos]! | (data[pos + 1]! << 8) | (data[pos + 2]! << 16);
      pos += 3;
      const type = (h >> 1) & 3;
      const size = h >>> 3;
      if (type === 3) throw malformed('zstd', 'reserved block type');
      if (type === 0) {
        frame += size;
        pos += size;
      } else if (type === 1) {
        frame += size;
        pos += 1;
      } else {
        frame += blockMax;
        pos += size;
      }
      if (total + frame > limit) return total + frame;
      if (h & 1) break;
    }
    if (checksum) pos += 4;
    // A declared content size is checked by the decoder at the end: the blocks bound what it may produce before that.
    if (contentSize !== Infinity && total + contentSize > limit) return total + contentSize;
    total += frame;
  }
  if (pos > data.length) throw malformed('zstd', 'it ends inside a frame');
  return total;
}
