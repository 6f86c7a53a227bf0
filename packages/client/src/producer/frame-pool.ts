/**
 * Reusable memory for produce request frames. Each request is encoded into
 * one contiguous frame (the batches copied in once); allocating that frame
 * fresh per request made a new ArrayBuffer of the whole request (64 KiB to
 * 1 MiB) every time, outside the JS heap, whose external-memory pressure
 * drove most of the producer's garbage collections at 1 KiB records.
 *
 * A frame is taken with `acquire` and handed back with `release` only once
 * the socket no longer references it (the connection's write callback), so a
 * buffer is never given to a second request while the first may still be
 * written from it (a frame whose encoding failed goes back at once). A frame
 * whose write callback never comes stays counted as outstanding.
 */
import { Buffer } from '@mq/protocol/platform';
export const DEFAULT_FRAME_POOL_BUFFERS = 8;
/** Smallest buffer kept: smaller frames come from Node's shared slab anyway. */
export const MIN_POOLED_FRAME_BYTES = 16 * 1024;

export class FramePool {
  private readonly free: Buffer[] = [];
  /** Buffers handed out and not released yet (only for checks and tests). */
  private readonly out = new Set<Buffer>();

  constructor(
    /** Most free buffers kept. */
    readonly maxBuffers = DEFAULT_FRAME_POOL_BUFFERS,
  ) {}

  /** Buffers free for reuse. */
  get freeCount(): number {
    return this.free.length;
  }

  /** Buffers handed out and not released. */
  get outstanding(): number {
    return this.out.size;
  }

  /**
   * A buffer of at least `size` bytes (use `subarray(0, size)`), never one
   * that is outstanding. New buffers are rounded up to a power of two so that
   * requests of similar size share them.
   */
  acquire(size: number): Buffer {
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      const len = this.free[i]!.length;
      if (len >= size && (best < 0 || len < this.free[best]!.length)) best = i;
    }
    let buf: Buffer;
    if (best >= 0) {
      buf = this.free[best]!;
      this.free[best] = this.free[this.free.length - 1]!;
      this.free.pop();
    } else {
      buf = Buffer.allocUnsafeSlow(roundUp(size));
    }
    this.out.add(buf);
    return buf;
  }

  /** Gives a buffer back; releasing one that is not outstanding (twice, or foreign) does nothing. */
  release(buf: Buffer): void {
    if (!this.out.delete(buf)) return;
    if (this.free.length < this.maxBuffers) {
      this.free.push(buf);
      return;
    }
    // Full: keep the larger buffers (they fit any request the smaller ones fit).
    let smallest = 0;
    for (let i = 1; i < this.free.length; i++) if (this.free[i]!.length < this.free[smallest]!.length) smallest = i;
    if (this.free[smallest]!.length < buf.length) this.free[smallest] = buf;
  }
}

function roundUp(size: number): number {
  let n = MIN_POOLED_FRAME_BYTES;
  while (n < size) n *= 2;
  return n;
}
