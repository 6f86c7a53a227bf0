/**
 * The Node.js side of the platform seam (`@mq/protocol/platform`; bundlers
 * that apply the `browser` export condition get ./browser.ts instead, with
 * the same exports). Everything in protocol and client that differs between
 * Node and browsers is chosen here, once: the Buffer class, CRC-32C, the fast
 * UTF-8 writer, the end-of-turn scheduler, the compression codecs and the
 * diagnostics channels.
 */
import { channel, subscribe, unsubscribe } from 'node:diagnostics_channel';
import { loadCrc32c } from './crc32c-node.js';

export { Buffer } from 'node:buffer';
export { checkCodecAvailable, loadAsyncCodec, loadSyncCodec } from './codecs-node.js';

/** A named channel that diagnostic tools subscribe to (Node's diagnostics_channel; none in browsers). */
export interface DiagnosticsChannel {
  readonly hasSubscribers: boolean;
  publish(message: unknown): void;
}

/** Node's `diagnostics_channel.channel(name)`: subscribe with `diagnostics_channel.subscribe(name, fn)`. */
export function diagnosticsChannel(name: string): DiagnosticsChannel {
  return channel(name);
}

/** A listener of a diagnostics channel: the message and the channel's name. */
export type DiagnosticsListener = (message: unknown, name: string | symbol) => void;

/** Subscribes to a channel by name (Node: `diagnostics_channel.subscribe`; browsers: the in-page registry). */
export function subscribeDiagnostics(name: string, listener: DiagnosticsListener): void {
  subscribe(name, listener);
}

/** Removes a listener; false if it was not subscribed. */
export function unsubscribeDiagnostics(name: string, listener: DiagnosticsListener): boolean {
  return unsubscribe(name, listener);
}

const native = loadCrc32c();

/** CRC-32C of `data` as an unsigned 32-bit number. */
export function crc32c(data: Uint8Array): number {
  return native(data) >>> 0;
}

/** Node's undocumented fast UTF-8 writer (Buffer#write without argument juggling). */
interface Utf8Writable {
  utf8Write(s: string, offset: number, length?: number): number;
}

/** Writes `s` as UTF-8 into `buf` at `offset` (at most `length` bytes); returns the bytes written. */
export function utf8Write(buf: Buffer, s: string, offset: number, length?: number): number {
  return (buf as unknown as Utf8Writable).utf8Write(s, offset, length);
}

/** Runs `fn` at the end of this turn of the event loop, before any timer. */
export const runAtEndOfTurn: (fn: () => void) => void = setImmediate;
