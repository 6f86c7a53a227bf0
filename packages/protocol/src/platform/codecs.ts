/** The codec shapes compression.ts loads per platform (node: zlib and npm addons; browser: none). */

export interface SyncCodec {
  compress(data: Buffer): Buffer;
  /** Decompresses at most `maxBytes` (the caller checked the codec's own bound first, except for gzip). */
  decompress(data: Buffer, maxBytes: number): Buffer;
}

export interface AsyncCodec {
  compress(data: Buffer): Promise<Buffer>;
  /** Need not stop at `maxBytes` when the caller checked the codec's own bound first (zstd); the caller checks the result. */
  decompress(data: Buffer, maxBytes: number): Promise<Buffer>;
}

/** gzip, snappy and lz4 run synchronously; zstd is asynchronous (off the event loop). */
export type SyncCodecName = 'gzip' | 'snappy' | 'lz4';
