/**
 * Buffers for reads that are written to a socket and then dropped: a fetch
 * reads up to a partition's limit (1 MiB by default) into a buffer, the
 * broker writes it to the consumer's socket, and the buffer is garbage. A
 * fresh buffer per fetch is an ArrayBuffer outside V8's heap, and V8 answers
 * a steady stream of those with full mark-compact collections (in a consume
 * benchmark at 1 KiB records, a third of the broker's busy time). This pool
 * hands out buffers from a few size classes and takes them back once their
 * owner says the bytes are no longer needed.
 *
 * Ownership is the caller's contract: `release()` a view only when nothing
 * will read it again (for the broker, after the socket's write callback).
 * Releasing a view of a buffer the pool did not hand out, or releasing twice,
 * is ignored, so a caller may release every buffer it holds without knowing
 * which ones came from the pool.
 */

/** Smallest pooled size class: smaller reads use ordinary buffers (Node's own 8 KiB pool covers the smallest). */
export const DEFAULT_MIN_POOLED_BYTES = 64 * 1024;
/** Largest pooled size class: larger reads get a buffer of their own. */
export const DEFAULT_MAX_POOLED_BYTES = 16 * 1024 * 1024;
/** How many bytes the free lists may keep in all. */
export const DEFAULT_MAX_IDLE_BYTES = 64 * 1024 * 1024;

export interface ReadBufferPoolOptions {
  minPooledBytes?: number;
  maxPooledBytes?: number;
  maxIdleBytes?: number;
}

export interface ReadBufferPoolStats {
  /** Buffers handed out and not yet released. */
  outstanding: number;
  /** Bytes kept in the free lists. */
  idleBytes: number;
  /** take() calls answered from a free list. */
  reused: number;
  /** take() calls that allocated. */
  allocated: number;
}

export class ReadBufferPool {
  readonly minPooledBytes: number;
  readonly maxPooledBytes: number;
  readonly maxIdleBytes: number;
  /** Free buffers per size class (index: log2 of the class size). */
  readonly #free: Buffer[][] = [];
  /** Every pooled buffer handed out, by its memory. */
  readonly #outstanding = new Map<ArrayBufferLike, Buffer>();
  #idleBytes = 0;
  #reused = 0;
  #allocated = 0;

  constructor(options: ReadBufferPoolOptions = {}) {
    this.minPooledBytes = powerOfTwoAtLeast(options.minPooledBytes ?? DEFAULT_MIN_POOLED_BYTES);
    this.maxPooledBytes = powerOfTwoAtLeast(options.maxPooledBytes ?? DEFAULT_MAX_POOLED_BYTES);
    this.maxIdleBytes = options.maxIdleBytes ?? DEFAULT_MAX_IDLE_BYTES;
    if (this.minPooledBytes > this.maxPooledBytes) throw new RangeError(`minPooledBytes ${this.minPooledBytes} exceeds maxPooledBytes ${this.maxPooledBytes}`);
    if (!Number.isSafeInteger(this.maxIdleBytes) || this.maxIdleBytes < 0) throw new RangeError(`maxIdleBytes must be a non-negative integer, got ${this.maxIdleBytes}`);
  }

  /** A buffer of exactly `size` bytes (uninitialised), pooled when its size class is. */
  take(size: number): Buffer {
    if (size < this.minPooledBytes || size > this.maxPooledBytes) return Buffer.allocUnsafe(size);
    const cls = sizeClass(size);
    const list = this.#free[cls];
    let slab = list?.pop();
    if (slab) {
      this.#idleBytes -= slab.length;
      this.#reused++;
    } else {
      // A buffer of its own (allocUnsafeSlow): its ArrayBuffer identifies it on release.
      slab = Buffer.allocUnsafeSlow(2 ** cls);
      this.#allocated++;
    }
    this.#outstanding.set(slab.buffer, slab);
    return slab.subarray(0, size);
  }

  /** Gives back the buffer `view` lies in; ignored when the pool did not hand it out (or got it back already). */
  release(view: Uint8Array): void {
    const slab = this.#outstanding.get(view.buffer);
    if (slab === undefined) return;
    this.#outstanding.delete(view.buffer);
    if (this.#idleBytes + slab.length > this.maxIdleBytes) return;
    const cls = sizeClass(slab.length);
    (this.#free[cls] ??= []).push(slab);
    this.#idleBytes += slab.length;
  }

  stats(): ReadBufferPoolStats {
    return { outstanding: this.#outstanding.size, idleBytes: this.#idleBytes, reused: this.#reused, allocated: this.#allocated };
  }
}

function sizeClass(size: number): number {
  return Math.max(0, Math.ceil(Math.log2(size)));
}

function powerOfTwoAtLeast(n: number): number {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`a pool size must be a positive integer, got ${n}`);
  return 2 ** sizeClass(n);
}
