/**
 * Long synchronous work cut into slices (issue 22): a loop over a request's
 * entries, or the encoding of a large answer, calls `maybeYield()` after each
 * step and gives the event loop back to other connections once a slice has
 * run SLICE_MS. One mechanism for the WebSocket door's large answers
 * (server/sliced-response.ts), the Kafka door's (kafka/sliced-answer.ts), the
 * admin handlers' per-entry loops (handlers/each-topic.ts) and a connection's
 * frame intake (server/connection.ts, kafka/kafka-connection.ts), which is
 * synchronous and yields by its own means: it asks `due`, calls `yielding()`
 * and, once called back from the event loop, `restart()`.
 */
/** Longest step between two yields to the event loop. */
export const SLICE_MS = 10;

/**
 * What a slicer measures a step with and how it gives the event loop back:
 * injected (BrokerContext.sliceClock) so that the whole-cluster simulator,
 * whose clock stands still within a step, never yields on wall time and a
 * seed replays exactly.
 */
export interface SliceClock {
  now(): number;
  /** Calls `resume` from a later turn of the event loop. */
  nextTurn(resume: () => void): void;
}

/** The process's monotonic clock and `setImmediate`. */
export const REAL_SLICE_CLOCK: SliceClock = {
  now: () => performance.now(),
  nextTurn: (resume) => void setImmediate(resume),
};

export class Slicer {
  private start: number;
  /** The longest step between two yields (wall clock: on a loaded machine it includes time descheduled), and the yields. */
  longestMs = 0;
  yields = 0;

  constructor(
    private readonly sliceMs = SLICE_MS,
    private readonly clock: SliceClock = REAL_SLICE_CLOCK,
  ) {
    this.start = clock.now();
  }

  async maybeYield(): Promise<void> {
    if (!this.due) return;
    this.yielding();
    await new Promise<void>((resume) => this.clock.nextTurn(resume));
    this.restart();
  }

  /** Whether the current slice has run its time. */
  get due(): boolean {
    return this.clock.now() - this.start >= this.sliceMs;
  }

  /** The caller gives the event loop back now (counted; the step it ends is measured). */
  yielding(): void {
    this.longestMs = Math.max(this.longestMs, this.clock.now() - this.start);
    this.yields++;
  }

  /** A new slice begins: the caller was called from the event loop (a socket read, its own deferred turn). */
  restart(): void {
    this.start = this.clock.now();
  }

  private resumeScheduled = false;

  /**
   * For synchronous callers: ends the step (counted) and calls `resume` from
   * the next turn of the event loop, in a new slice; asked again before it
   * runs, nothing more is scheduled.
   */
  resumeLater(resume: () => void): void {
    if (this.resumeScheduled) return;
    this.resumeScheduled = true;
    this.yielding();
    this.clock.nextTurn(() => {
      this.resumeScheduled = false;
      this.restart();
      resume();
    });
  }

  done(): void {
    this.longestMs = Math.max(this.longestMs, this.clock.now() - this.start);
  }
}
