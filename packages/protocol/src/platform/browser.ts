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

/** A named channel that diagnostic tools subscribe to (Node's diagnostics_channel; an in-page registry in browsers). */
export interface DiagnosticsChannel {
  readonly hasSubscribers: boolean;
  publish(message: unknown): void;
}

/** A listener of a diagnostics channel: the message and the channel's name. */
export type DiagnosticsListener = (message: unknown, name: string | symbol) => void;

/**
 * Browsers have no diagnostics_channel: this is the same contract in the page (one registry per copy of this
 * module). As in Node, a listener that throws does not break the publisher: its error is rethrown on its own
 * (as an uncaught error), and publishing costs one property read while nobody listens.
 */
class PageChannel implements DiagnosticsChannel {
  readonly listeners = new Set<DiagnosticsListener>();
  constructor(readonly name: string) {}
  get hasSubscribers(): boolean {
    return this.listeners.size > 0;
  }
  publish(message: unknown): void {
    for (const listener of this.listeners) {
      try {
        listener(message, this.name);
      } catch (err) {
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }
}

const pageChannels = new Map<string, PageChannel>();

function pageChannel(name: string): PageChannel {
  let c = pageChannels.get(name);
  if (!c) pageChannels.set(name, (c = new PageChannel(name)));
  return c;
}

export function diagnosticsChannel(name: string): DiagnosticsChannel {
  return pageChannel(name);
}

/** Subscribes to a channel by name (Node: `diagnostics_channel.subscribe`; browsers: the in-page registry). */
export function subscribeDiagnostics(name: string, listener: DiagnosticsListener): void {
  pageChannel(name).listeners.add(listener);
}

/** Removes a listener; false if it was not subscribed. */
export function unsubscribeDiagnostics(name: string, listener: DiagnosticsListener): boolean {
  return pageChannel(name).listeners.delete(listener);
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
