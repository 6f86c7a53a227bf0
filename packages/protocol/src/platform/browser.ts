/**
 * The browser side of the platform seam (`@mq/protocol/platform` under the
 * `browser` export condition; same exports as ./node.ts): the `buffer`
 * package's Buffer (a Uint8Array subclass with Node's API), the pure-JS
 * CRC-32C, and no compression codecs. Nothing here imports `node:*`.
 */
import { Buffer } from 'buffer';
import { crc32cJs } from './crc32c-js.js';

export { Buffer };
export { checkCodecAvailable, loadAsyncCodec, loadSyncCodec } from './codecs-browser.js';

/** A named channel that diagnostic tools subscribe to (Node's diagnostics_channel; none in browsers). */
export interface DiagnosticsChannel {
  readonly hasSubscribers: boolean;
  publish(message: unknown): void;
}

const NO_CHANNEL: DiagnosticsChannel = { hasSubscribers: false, publish() {} };

/** Browsers have no diagnostics_channel: a channel nobody listens to. */
export function diagnosticsChannel(_name: string): DiagnosticsChannel {
  return NO_CHANNEL;
}

/** CRC-32C of `data` as an unsigned 32-bit number. */
export function crc32c(data: Uint8Array): number {
  return crc32cJs(data);
}

/** Writes `s` as UTF-8 into `buf` at `offset` (at most `length` bytes); returns the bytes written. */
export function utf8Write(buf: Uint8Array, s: string, offset: number, length?: number): number {
  return (buf as Buffer).write(s, offset, length ?? buf.length - offset, 'utf8');
}

/** Runs `fn` soon, after the current task (browsers have no setImmediate). */
export function runAtEndOfTurn(fn: () => void): void {
  setTimeout(fn, 0);
}
