/** A promise with its settle functions, shared by every record of one batch. */
export interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
}

export function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A batch whose records the workload has already counted as failed must not
  // surface as an unhandled rejection.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/**
 * First-in first-out queue of batches waiting for their acknowledgement.
 * Its length is bounded by the caller (the workload's window of outstanding
 * records); shift() is O(1) amortised, remove() is for the rare failure path.
 */
export class Fifo<T> {
  #items: T[] = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  shift(): T | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head] = undefined as T;
    this.#head++;
    if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }

  peek(): T | undefined {
    return this.#head < this.#items.length ? this.#items[this.#head] : undefined;
  }

  find(match: (item: T) => boolean): T | undefined {
    for (let i = this.#head; i < this.#items.length; i++) if (match(this.#items[i])) return this.#items[i];
    return undefined;
  }

  /** Removes `item` wherever it is; false if it is not queued. */
  remove(item: T): boolean {
    if (this.#head < this.#items.length && this.#items[this.#head] === item) {
      this.shift();
      return true;
    }
    const i = this.#items.indexOf(item, this.#head);
    if (i < 0) return false;
    this.#items.splice(i, 1);
    return true;
  }

  items(): T[] {
    return this.#items.slice(this.#head);
  }
}
