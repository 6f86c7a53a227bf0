import { deferred, Fifo, type Deferred } from './deferred.js';

/** Consecutive publishing ids sent in one event-loop turn, settled together. */
interface Group {
  first: number;
  last: number;
  /** Every id from first to here is confirmed. */
  upTo: number;
  /** Ids confirmed ahead of upTo (out of order; normally never used). */
  ahead: Set<number> | null;
  error: Error | null;
  done: Deferred;
}

/**
 * Follows a publisher's confirms by publishing id (RabbitMQ Streams, or any
 * protocol that numbers publishes 1, 2, 3… and confirms them by number) without
 * a promise and a map entry per record: the ids taken in one event-loop turn
 * form one group with one promise, settled once every id in it is confirmed
 * (rejected if any was refused). The waiting groups are bounded by the
 * caller's window of outstanding records.
 */
export class ConfirmTracker {
  #lastId = 0;
  #current: Group | null = null;
  #waiting = new Fifo<Group>();

  /** The id the next record will be given (1 for the first). */
  get nextId(): number {
    return this.#lastId + 1;
  }

  /** Groups waiting for confirms. */
  get pendingGroups(): number {
    return this.#waiting.length;
  }

  /** Takes the next id; resolves when it (and its group) is confirmed. */
  add(): Promise<void> {
    const id = ++this.#lastId;
    let g = this.#current;
    if (g === null) {
      g = { first: id, last: id, upTo: id - 1, ahead: null, error: null, done: deferred() };
      this.#current = g;
      this.#waiting.push(g);
    }
    g.last = id;
    return g.done.promise;
  }

  /** Ends the current group: the next add() starts another (call once per event-loop turn). */
  endGroup(): void {
    this.#current = null;
  }

  /** Settles `id`; `error` non-null if the server refused it. Unknown or repeated ids are ignored. */
  confirm(id: number, error: string | null): void {
    let g = this.#waiting.peek();
    if (g === undefined || id < g.first) return; // settled already, or never ours
    if (id > g.last) {
      g = this.#waiting.find((x) => id >= x.first && id <= x.last);
      if (g === undefined) return;
    }
    if (id <= g.upTo || g.ahead?.has(id) === true) return; // repeated
    if (error !== null && g.error === null) g.error = new Error(error);
    if (id === g.upTo + 1) {
      g.upTo = id;
      while (g.ahead !== null && g.ahead.delete(g.upTo + 1)) g.upTo++;
    } else {
      (g.ahead ??= new Set()).add(id);
    }
    if (g.upTo < g.last) return;
    this.#waiting.remove(g);
    if (this.#current === g) this.#current = null;
    if (g.error === null) g.done.resolve();
    else g.done.reject(g.error);
  }

  /** Rejects everything still waiting (the connection failed). */
  failAll(err: unknown): void {
    this.#current = null;
    for (let g = this.#waiting.shift(); g !== undefined; g = this.#waiting.shift()) g.done.reject(err);
  }

  /** Resolves once every group waiting now has settled. */
  async settled(): Promise<void> {
    await Promise.allSettled(this.#waiting.items().map((g) => g.done.promise));
  }
}
