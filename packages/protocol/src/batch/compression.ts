/**
 * Compression codecs for the records section of a batch. Codecs come from
 * maintained npm packages (zlib for gzip, `snappy`, `lz4-napi`,
 * `@mongodb-js/zstd`) and are loaded lazily so that a user who never
 * compresses never loads a native addon.
 */
import { createRequire } from 'node:module';
import { gunzipSync, gzipSync } from 'node:zlib';
import { MqError } from '../errors.js';
import { lz4Bound, snappyLength, zstdBound } from './decompressed-size.js';

/**
 * What a batch's records section may decompress to unless the caller says
 * otherwise: a bound on every decoder's allocation (compression bombs).
 */
export const DEFAULT_MAX_DECOMPRESSED_BYTES = 32 * 1024 * 1024;

export const COMPRESSION_CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;
export type CompressionCodec = (typeof COMPRESSION_CODECS)[number];

const require = createRequire(import.meta.url);

interface SyncCodec {
  compress(data: Buffer): Buffer;
  /** Decompresses at most `maxBytes` (the caller checked the codec's own bound first, except for gzip). */
  decompress(data: Buffer, maxBytes: number): Buffer;
}
interface AsyncCodec {
  compress(data: Buffer): Promise<Buffer>;
  decompress(data: Buffer): Promise<Buffer>;
}

function tooLarge(codec: CompressionCodec, bytes: number | undefined, maxBytes: number): MqError {
  const what = bytes === undefined ? 'more than' : `${bytes} bytes, more than`;
  return new MqError('RECORD_TOO_LARGE', `${codec} records decompress to ${what} the limit of ${maxBytes} bytes`, {
    limit: maxBytes,
  });
}

/** Refuses data whose codec framing says it inflates past `maxBytes`, before any decoder runs. */
function checkBound(codec: CompressionCodec, data: Buffer, maxBytes: number): void {
  let bound: number;
  if (codec === 'snappy') bound = snappyLength(data);
  else if (codec === 'lz4') bound = lz4Bound(data, maxBytes);
  else if (codec === 'zstd') bound = zstdBound(data, maxBytes);
  else return;
  if (bound > maxBytes) throw tooLarge(codec, codec === 'snappy' ? bound : undefined, maxBytes);
}

const syncCodecs = new Map<CompressionCodec, SyncCodec>();

function loadSync(codec: CompressionCodec): SyncCodec | undefined {
  let c = syncCodecs.get(codec);
  if (c) return c;
  switch (codec) {
    case 'gzip':
      c = { compress: (d) => gzipSync(d), decompress: (d, maxBytes) => gunzipSync(d, { maxOutputLength: Math.max(1, maxBytes) }) };
      break;
    case 'snappy': {
      const snappy = require('snappy') as {
        compressSync(d: Buffer): Buffer;
        uncompressSync(d: Buffer, o?: { asBuffer: boolean }): Buffer;
      };
      c = { compress: (d) => snappy.compressSync(d), decompress: (d) => snappy.uncompressSync(d, { asBuffer: true }) };
      break;
    }
    case 'lz4': {
      const lz4 = require('lz4-napi') as {
        compressFrameSync(d: Buffer): Buffer;
        decompressFrameSync(d: Buffer): Buffer;
      };
      c = { compress: (d) => lz4.compressFrameSync(d), decompress: (d) => lz4.decompressFrameSync(d) };
      break;
    }
    default:
      return undefined;
  }
  syncCodecs.set(codec, c);
  return c;
}

let zstd: AsyncCodec | undefined;
function loadZstd(): AsyncCodec {
  if (!zstd) {
    const z = require('@mongodb-js/zstd') as {
      compress(d: Buffer, level?: number): Promise<Buffer>;
      decompress(d: Buffer): Promise<Buffer>;
    };
    zstd = { compress: (d) => z.compress(d, 3), decompress: (d) => z.decompress(d) };
  }
  return zstd;
}

export function compressSync(codec: CompressionCodec, data: Buffer): Buffer {
  if (codec === 'none') return data;
  const c = loadSync(codec);
  if (!c) throw new MqError('UNSUPPORTED_COMPRESSION', `${codec} has no synchronous codec; use the async API`);
  return c.compress(data);
}

/**
 * Decompresses `data`, never producing (or allocating for) more than
 * `maxBytes`: RECORD_TOO_LARGE past it, CORRUPT_MESSAGE when the data does
 * not decompress.
 */
export function decompressSync(codec: CompressionCodec, data: Buffer, maxBytes = DEFAULT_MAX_DECOMPRESSED_BYTES): Buffer {
  if (codec === 'none') return data;
  const c = loadSync(codec);
  if (!c) throw new MqError('UNSUPPORTED_COMPRESSION', `${codec} has no synchronous codec; use the async API`);
  let out: Buffer;
  try {
    checkBound(codec, data, maxBytes);
    out = c.decompress(data, maxBytes);
  } catch (cause) {
    throw decompressError(codec, cause, maxBytes);
  }
  if (out.length > maxBytes) throw tooLarge(codec, out.length, maxBytes);
  return out;
}

function decompressError(codec: CompressionCodec, cause: unknown, maxBytes: number): MqError {
  if ((cause as { code?: string }).code === 'RECORD_TOO_LARGE') return cause as MqError;
  if ((cause as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') return tooLarge(codec, undefined, maxBytes);
  return new MqError('CORRUPT_MESSAGE', `${codec} payload does not decompress: ${(cause as Error)?.message ?? String(cause)}`, { cause });
}

export async function compress(codec: CompressionCodec, data: Buffer): Promise<Buffer> {
  if (codec === 'zstd') return loadZstd().compress(data);
  return compressSync(codec, data);
}

/** decompressSync() for every codec (zstd decompresses off the event loop). */
export async function decompress(codec: CompressionCodec, data: Buffer, maxBytes = DEFAULT_MAX_DECOMPRESSED_BYTES): Promise<Buffer> {
  if (codec !== 'zstd') return decompressSync(codec, data, maxBytes);
  let out: Buffer;
  try {
    checkBound(codec, data, maxBytes);
    out = await loadZstd().decompress(data);
  } catch (cause) {
    throw decompressError(codec, cause, maxBytes);
  }
  if (out.length > maxBytes) throw tooLarge(codec, out.length, maxBytes);
  return out;
}

export function codecFromId(id: number): CompressionCodec {
  const codec = COMPRESSION_CODECS[id];
  if (!codec) throw new MqError('UNSUPPORTED_COMPRESSION', `unknown compression codec id ${id}`);
  return codec;
}

export function codecId(codec: CompressionCodec): number {
  const id = COMPRESSION_CODECS.indexOf(codec);
  if (id < 0) throw new MqError('UNSUPPORTED_COMPRESSION', `unknown compression codec "${String(codec)}"`);
  return id;
}
