/**
 * Writes a binary WebSocket message whose bytes the caller has given up (the
 * connection's encoded request frames): masks them in place with a fresh
 * random key and writes the frame header and the payload straight to the
 * socket. `ws`'s own `send()` never masks a Buffer in place (it cannot know
 * the caller is done with it), so it copies every client message into a
 * newly allocated buffer as it masks; for a 1 MiB produce frame that is a
 * fresh 1 MiB allocation and its page faults, about 30 times the cost of the
 * masking itself, and a quarter of a producer's CPU with 1 KiB records
 * (packages/client/README.md, "Masking").
 *
 * Uses two `ws` internals: the socket under the WebSocket (`_socket`) and
 * its sender's state (`_sender._state`, `_sender._queue`: nothing queued, so
 * this frame cannot overtake one of `ws`'s own). {@link ownedFrameWriter}
 * returns undefined when they are not as expected, and the caller then uses
 * `ws.send()`; a test fails if a `ws` upgrade renames them.
 */
import { Buffer } from 'node:buffer';
import { randomFillSync } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import type WebSocket from 'ws';

/** Writes `data` (which the writer may modify) as one binary message; `cb` runs once it is written or failed. */
export type OwnedFrameWriter = (data: Uint8Array, cb: (err?: Error) => void) => void;

interface WsInternals {
  _socket?: Socket | null;
  _sender?: { _state?: number; _queue?: unknown[]; _firstFragment?: boolean } | null;
}

type Unmask = (buffer: Uint8Array, mask: Uint8Array) => void;

const OPEN = 1;
const SENDER_IDLE = 0;
const KEY_POOL_BYTES = 8 * 1024;

/** XOR in place (masking and unmasking are the same operation): bufferutil's native loop when it loads. */
const unmaskInPlace: Unmask = loadNativeUnmask() ?? unmaskJs;

let keyPool: Buffer | undefined;
let keyPos = KEY_POOL_BYTES;

/**
 * The owned-frame writer for a `ws` client WebSocket that masks its frames,
 * or undefined when `ws`'s internals are not the ones this module knows (then
 * use `ws.send()`).
 */
export function ownedFrameWriter(ws: WebSocket): OwnedFrameWriter | undefined {
  const internals = ws as unknown as WsInternals;
  const sender = internals._sender;
  if (!internals._socket || !sender || !Array.isArray(sender._queue) || sender._state !== SENDER_IDLE) return undefined;
  return (data, cb) => {
    const socket = internals._socket;
    // Closing, closed, or ws has frames of its own queued (it never queues without compression or Blobs, which
    // mq does not use): its send() orders or refuses this one correctly.
    if (ws.readyState !== OPEN || !socket || sender._state !== SENDER_IDLE || sender._queue!.length > 0 || sender._firstFragment === false) {
      ws.send(data, { binary: true }, cb);
      return;
    }
    const key = nextMaskKey();
    const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    unmaskInPlace(bytes, key);
    socket.cork();
    socket.write(frameHeader(data.length, key));
    socket.write(bytes, (err) => cb(err ?? undefined));
    socket.uncork();
  };
}

/** A final binary frame's header, masked with `key` (RFC 6455 section 5.2). */
export function frameHeader(length: number, key: Uint8Array): Buffer {
  const extended = length < 126 ? 0 : length < 0x10000 ? 2 : 8;
  const header = Buffer.allocUnsafe(2 + extended + 4);
  header[0] = 0x82; // FIN, opcode 2 (binary)
  if (extended === 0) {
    header[1] = 0x80 | length;
  } else if (extended === 2) {
    header[1] = 0x80 | 126;
    header.writeUInt16BE(length, 2);
  } else {
    header[1] = 0x80 | 127;
    header.writeUInt32BE(Math.floor(length / 0x100000000), 2);
    header.writeUInt32BE(length >>> 0, 6);
  }
  header.set(key, 2 + extended);
  return header;
}

/** Four bytes from a crypto-random pool refilled 8 KiB at a time (what ws does for its own keys). */
function nextMaskKey(): Buffer {
  if (keyPos + 4 > KEY_POOL_BYTES || !keyPool) {
    keyPool ??= Buffer.allocUnsafe(KEY_POOL_BYTES);
    randomFillSync(keyPool);
    keyPos = 0;
  }
  const key = keyPool.subarray(keyPos, keyPos + 4);
  keyPos += 4;
  return key;
}

function unmaskJs(buffer: Uint8Array, mask: Uint8Array): void {
  for (let i = 0; i < buffer.length; i++) buffer[i]! ^= mask[i & 3]!;
}

function loadNativeUnmask(): Unmask | undefined {
  try {
    const bufferUtil = createRequire(import.meta.url)('bufferutil') as { unmask?: Unmask };
    const native = bufferUtil.unmask;
    if (typeof native !== 'function') return undefined;
    // bufferutil's own loop pays a call into native code; ws uses JS below 32 bytes too.
    return (buffer, mask) => (buffer.length < 32 ? unmaskJs(buffer, mask) : native(buffer, mask));
  } catch {
    return undefined;
  }
}
