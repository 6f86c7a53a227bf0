/**
 * A connection's reads paused while a quota's throttle time runs (KIP-219):
 * the door that answered with a throttle time reads nothing more from that
 * connection until it has passed; a later, longer one extends it. Shared by
 * the WebSocket and Kafka doors. Once closed, it arms nothing (an answer
 * finishing after its connection closed must not hold it).
 */
export class ReadThrottle {
  #until = 0;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  /** `pause()` as soon as a throttle starts; `resume()` once it has passed. */
  constructor(private readonly hooks: { pause(): void; resume(): void }) {}

  /** True while reads are paused. */
  get paused(): boolean {
    return this.#timer !== undefined;
  }

  throttle(ms: number): void {
    const until = Date.now() + ms;
    if (ms <= 0 || until <= this.#until || this.#closed) return;
    this.#until = until;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.hooks.resume();
    }, ms);
    this.hooks.pause();
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
