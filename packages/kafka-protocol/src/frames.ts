/**
 * Kafka framing: every request and response is a 4-byte big-endian size and
 * that many bytes. FrameSplitter cuts a byte stream into frames, holding at
 * most one frame of at most `maxFrameBytes` (a larger or negative size is
 * malformed: the caller closes the connection).
 */
import { MalformedKafkaError } from './reader.js';

export class FrameSplitter {
  private parts: Buffer[] = [];
  private buffered = 0;

  constructor(readonly maxFrameBytes: number) {}

  /** Bytes held for a frame not yet complete. */
  get pendingBytes(): number {
    return this.buffered;
  }

  /** Adds received bytes; returns the frames (without their size prefix) now complete. */
  push(chunk: Buffer): Buffer[] {
    this.parts.push(chunk);
    this.buffered += chunk.length;
    const frames: Buffer[] = [];
    for (;;) {
      if (this.buffered < 4) break;
      const head = this.peek(4);
      const size = head.readInt32BE(0);
      if (size < 0 || size > this.maxFrameBytes) {
        throw new MalformedKafkaError(`frame size ${size} is outside 0..${this.maxFrameBytes} bytes`);
      }
      if (this.buffered < 4 + size) break;
      const whole = this.take(4 + size);
      frames.push(whole.subarray(4));
    }
    return frames;
  }

  private peek(n: number): Buffer {
    const first = this.parts[0]!;
    if (first.length >= n) return first;
    this.parts = [Buffer.concat(this.parts)];
    return this.parts[0]!;
  }

  private take(n: number): Buffer {
    let out: Buffer;
    const first = this.parts[0]!;
    if (first.length >= n) {
      out = first.subarray(0, n);
      if (first.length === n) this.parts.shift();
      else this.parts[0] = first.subarray(n);
    } else {
      const all = Buffer.concat(this.parts);
      out = all.subarray(0, n);
      this.parts = all.length > n ? [all.subarray(n)] : [];
    }
    this.buffered -= n;
    return out;
  }
}
