/**
 * The producer's bounded send buffer. Batches are written into buffers taken
 * from here; the total never exceeds `totalBytes`. Buffers of the usual batch
 * size are kept for reuse. When there is no room `tryAllocate` returns
 * undefined and the producer makes `send` wait (backpressure), never grows.
 */
import { Buffer } from '@mq/protocol/platform';

export class BufferPool {
  private used = 0;
  private readonly free: Buffer[] = [];
  private readonly listeners: Array<() => void> = [];

  constructor(
    readonly totalBytes: number,
    /** The batch size: buffers of exactly this size are pooled. */
    readonly poolableBytes: number,
  ) {}

  /** Bytes held by outstanding buffers. */
  get usedBytes(): number {
    return this.used;
  }

  /** Bytes that could be handed out now. */
  get availableBytes(): number {
    return this.totalBytes - this.used;
  }

  tryAllocate(size: number): Buffer | undefined {
    if (size === this.poolableBytes && this.free.length > 0) {
      this.used += size;
      return this.free.pop()!;
    }
    if (this.used + size > this.totalBytes) return undefined;
    // Drop pooled buffers to make room for one of another size.
    while (this.free.length > 0 && this.used + this.free.length * this.poolableBytes + size > this.totalBytes) this.free.pop();
    this.used += size;
    return Buffer.allocUnsafeSlow(size);
  }

  release(buf: Buffer): void {
    this.used -= buf.length;
    if (buf.length === this.poolableBytes && this.used + (this.free.length + 1) * this.poolableBytes <= this.totalBytes) {
      this.free.push(buf);
    }
    for (const l of this.listeners) l();
  }

  /** Called whenever memory is released. */
  onRelease(listener: () => void): void {
    this.listeners.push(listener);
  }
}
