/**
 * Browsers' codecs: gzip through the browser's own CompressionStream and
 * DecompressionStream (asynchronous, and stopped as soon as the output passes
 * the caller's limit). snappy, lz4 and zstd come from native addons with no
 * browser build: asking for one is UNSUPPORTED_COMPRESSION (not retriable)
 * with what to do instead.
 */
import { Buffer } from 'buffer';
import { MqError } from '../errors.js';
import type { AsyncCodec, SyncCodec, SyncCodecName } from './codecs.js';

export function browserCodecError(codec: string): MqError {
  return new MqError(
    'UNSUPPORTED_COMPRESSION',
    `${codec} compression is not available in browsers (produce with compression: 'none' or 'gzip', ` +
      `or consume ${codec}-compressed topics from Node.js)`,
    { codec },
  );
}

/** Refuses snappy, lz4 and zstd up front (a producer asking for one fails when it is created). */
export function checkCodecAvailable(codec: string): void {
  if (codec !== 'none' && codec !== 'gzip') throw browserCodecError(codec);
}

export function loadSyncCodec(codec: SyncCodecName): SyncCodec {
  if (codec === 'gzip') {
    throw new MqError('UNSUPPORTED_COMPRESSION', 'gzip runs only asynchronously in browsers: use compress() / decompress(), not the *Sync functions');
  }
  throw browserCodecError(codec);
}

/** gzip: the browser's streams; zstd: refused; snappy and lz4 are refused by loadSyncCodec. */
export function loadAsyncCodec(codec: string): AsyncCodec | undefined {
  if (codec === 'gzip') return gzip;
  if (codec === 'zstd') throw browserCodecError('zstd');
  return undefined;
}

interface TransformStreamLike {
  readonly readable: { getReader(): { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(): Promise<void> } };
  readonly writable: { getWriter(): { write(chunk: Uint8Array): Promise<void>; close(): Promise<void> } };
}
type StreamClass = new (format: 'gzip') => TransformStreamLike;

function streamClass(name: 'CompressionStream' | 'DecompressionStream'): StreamClass {
  const C = (globalThis as unknown as Record<string, StreamClass | undefined>)[name];
  if (!C) throw new MqError('UNSUPPORTED_COMPRESSION', `gzip needs ${name}, which this browser lacks`);
  return C;
}

/** Runs `data` through a (de)compression stream; past `maxBytes` of output it stops and throws ERR_BUFFER_TOO_LARGE. */
async function pipeThrough(stream: TransformStreamLike, data: Uint8Array, maxBytes: number): Promise<Buffer> {
  const writer = stream.writable.getWriter();
  // The reader below surfaces any failure; these promises only mirror it.
  writer.write(data).catch(() => undefined);
  writer.close().catch(() => undefined);
  const reader = stream.readable.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value!.length;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw Object.assign(new Error(`more than ${maxBytes} bytes`), { code: 'ERR_BUFFER_TOO_LARGE' });
    }
    chunks.push(value!);
  }
  return Buffer.concat(chunks, total);
}

const gzip: AsyncCodec = {
  compress: (data) => pipeThrough(new (streamClass('CompressionStream'))('gzip'), data, Number.MAX_SAFE_INTEGER),
  decompress: (data, maxBytes) => pipeThrough(new (streamClass('DecompressionStream'))('gzip'), data, maxBytes),
};
