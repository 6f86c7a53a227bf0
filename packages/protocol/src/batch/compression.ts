/**
 * Compression codecs for the records section of a batch. Codecs come from
 * maintained npm packages (zlib for gzip, `snappy`, `lz4-napi`,
 * `@mongodb-js/zstd`) and are loaded lazily so that a user who never
 * compresses never loads a native addon.
 */
import { createRequire } from 'node:module';
import { gunzipSync, gzipSync } from 'node:zlib';
import { MqError } from '../errors.js';

export const COMPRESSION_CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;
export type CompressionCodec = (typeof COMPRESSION_CODECS)[number];

const require = createRequire(import.meta.url);

interface SyncCodec {
  compress(data: Buffer): Buffer;
  decompress(data: Buffer): Buffer;
}
interface AsyncCodec {
  compress(data: Buffer): Promise<Buffer>;
  decompress(data: Buffer): Promise<Buffer>;
}

const syncCodecs = new Map<CompressionCodec, SyncCodec>();

function loadSync(codec: CompressionCodec): SyncCodec | undefined {
  let c = syncCodecs.get(codec);
  if (c) return c;
  switch (codec) {
    case 'gzip':
      c = { compress: (d) => gzipSync(d), decompress: (d) => gunzipSync(d) };
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

export function decompressSync(codec: CompressionCodec, data: Buffer): Buffer {
  if (codec === 'none') return data;
  const c = loadSync(codec);
  if (!c) throw new MqError('UNSUPPORTED_COMPRESSION', `${codec} has no synchronous codec; use the async API`);
  try {
    return c.decompress(data);
  } catch (cause) {
    throw new MqError('CORRUPT_MESSAGE', `${codec} payload does not decompress`, { cause });
  }
}

export async function compress(codec: CompressionCodec, data: Buffer): Promise<Buffer> {
  if (codec === 'zstd') return loadZstd().compress(data);
  return compressSync(codec, data);
}

export async function decompress(codec: CompressionCodec, data: Buffer): Promise<Buffer> {
  if (codec !== 'zstd') return decompressSync(codec, data);
  try {
    return await loadZstd().decompress(data);
  } catch (cause) {
    throw new MqError('CORRUPT_MESSAGE', 'zstd payload does not decompress', { cause });
  }
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
