/**
 * Node's compression codecs: zlib for gzip, and maintained npm packages
 * (`snappy`, `lz4-napi`, `@mongodb-js/zstd`) loaded lazily, so that a user who
 * never compresses never loads a native addon.
 */
import { createRequire } from 'node:module';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { AsyncCodec, SyncCodec, SyncCodecName } from './codecs.js';

const require = createRequire(import.meta.url);

/** Every codec has a Node build: nothing to refuse. */
export function checkCodecAvailable(_codec: string): void {}

export function loadSyncCodec(codec: SyncCodecName): SyncCodec {
  switch (codec) {
    case 'gzip':
      return { compress: (d) => gzipSync(d), decompress: (d, maxBytes) => gunzipSync(d, { maxOutputLength: Math.max(1, maxBytes) }) };
    case 'snappy': {
      const snappy = require('snappy') as {
        compressSync(d: Buffer): Buffer;
        uncompressSync(d: Buffer, o?: { asBuffer: boolean }): Buffer;
      };
      return { compress: (d) => snappy.compressSync(d), decompress: (d) => snappy.uncompressSync(d, { asBuffer: true }) };
    }
    case 'lz4': {
      const lz4 = require('lz4-napi') as {
        compressFrameSync(d: Buffer): Buffer;
        decompressFrameSync(d: Buffer): Buffer;
      };
      return { compress: (d) => lz4.compressFrameSync(d), decompress: (d) => lz4.decompressFrameSync(d) };
    }
  }
}

/** zstd runs off the event loop; the others synchronously (loadSyncCodec). */
export function loadAsyncCodec(codec: string): AsyncCodec | undefined {
  return codec === 'zstd' ? loadZstdCodec() : undefined;
}

function loadZstdCodec(): AsyncCodec {
  const z = require('@mongodb-js/zstd') as {
    compress(d: Buffer, level?: number): Promise<Buffer>;
    decompress(d: Buffer): Promise<Buffer>;
  };
  return { compress: (d) => z.compress(d, 3), decompress: (d) => z.decompress(d) };
}
