/**
 * Compression codecs for the records section of a batch. The codecs
 * themselves come from the platform seam (@mq/protocol/platform): on Node,
 * zlib for gzip and maintained npm packages (`snappy`, `lz4-napi`,
 * `@mongodb-js/zstd`), loaded lazily so that a user who never compresses
 * never loads a native addon; in browsers none (UNSUPPORTED_COMPRESSION).
 */
import { loadAsyncCodec, loadSyncCodec } from '@mq/protocol/platform';
import { MqError } from '../errors.js';
import type { AsyncCodec, SyncCodec } from '../platform/codecs.js';
import { lz4Bound, snappyLength, zstdBound } from './decompressed-size.js';

/**
 * What a batch's records section may decompress to unless the caller says
 * otherwise: a bound on every decoder's allocation (compression bombs).
 */
export const DEFAULT_MAX_DECOMPRESSED_BYTES = 32 * 1024 * 1024;

export const COMPRESSION_CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;
export type CompressionCodec = (typeof COMPRESSION_CODECS)[number];

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
  if (codec !== 'gzip' && codec !== 'snappy' && codec !== 'lz4') return undefined;
  let c: SyncCodec | undefined = syncCodecs.get(codec);
  if (!c) {
    c = loadSyncCodec(codec);
    syncCodecs.set(codec, c);
  }
  return c;
}

const asyncCodecs = new Map<CompressionCodec, AsyncCodec | undefined>();

/** The codec when this platform runs it only asynchronously (zstd on Node, gzip in browsers), else undefined. */
function loadAsync(codec: CompressionCodec): AsyncCodec | undefined {
  if (codec === 'none') return undefined;
  if (!asyncCodecs.has(codec)) asyncCodecs.set(codec, loadAsyncCodec(codec));
  return asyncCodecs.get(codec);
}

/** Whether this platform decompresses `codec` only asynchronously (zstd on Node, gzip in browsers). */
export function onlyAsync(codec: CompressionCodec): boolean {
  return loadAsync(codec) !== undefined;
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
  const code = (cause as { code?: string }).code;
  if (code === 'RECORD_TOO_LARGE' || code === 'UNSUPPORTED_COMPRESSION') return cause as MqError;
  if ((cause as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') return tooLarge(codec, undefined, maxBytes);
  return new MqError('CORRUPT_MESSAGE', `${codec} payload does not decompress: ${(cause as Error)?.message ?? String(cause)}`, { cause });
}

export async function compress(codec: CompressionCodec, data: Buffer): Promise<Buffer> {
  const a = loadAsync(codec);
  if (a) return a.compress(data);
  return compressSync(codec, data);
}

/** decompressSync() for every codec (zstd decompresses off the event loop; gzip in browsers through DecompressionStream). */
export async function decompress(codec: CompressionCodec, data: Buffer, maxBytes = DEFAULT_MAX_DECOMPRESSED_BYTES): Promise<Buffer> {
  const a = loadAsync(codec);
  if (!a) return decompressSync(codec, data, maxBytes);
  let out: Buffer;
  try {
    checkBound(codec, data, maxBytes);
    out = await a.decompress(data, maxBytes);
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
