/**
 * Browsers get no compression codec: gzip, snappy, lz4 and zstd come from
 * Node's zlib and native addons, which have no browser build. Asking for one
 * is UNSUPPORTED_COMPRESSION (not retriable) with what to do instead.
 */
import { MqError } from '../errors.js';
import type { AsyncCodec, SyncCodec, SyncCodecName } from './codecs.js';

export function browserCodecError(codec: string): MqError {
  return new MqError(
    'UNSUPPORTED_COMPRESSION',
    `${codec} compression is not available in browsers (produce with compression: 'none', ` +
      `or consume ${codec}-compressed topics from Node.js)`,
    { codec },
  );
}

/** Refuses every codec but 'none' up front (a producer asking for one fails when it is created). */
export function checkCodecAvailable(codec: string): void {
  if (codec !== 'none') throw browserCodecError(codec);
}

export function loadSyncCodec(codec: SyncCodecName): SyncCodec {
  throw browserCodecError(codec);
}

export function loadZstdCodec(): AsyncCodec {
  throw browserCodecError('zstd');
}
