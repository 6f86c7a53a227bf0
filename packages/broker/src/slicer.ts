/**
 * Long synchronous work cut into slices (issue 22): a loop over a request's
 * entries, or the encoding of a large answer, calls `maybeYield()` after each
 * step and gives the event loop back to other connections once a slice has
 * run SLICE_MS. One mechanism for the WebSocket door's large answers
 * (server/sliced-response.ts), the Kafka door's (kafka/sliced-answer.ts) and
 * the admin handlers' per-entry loops (handlers/each-topic.ts).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Longest step between two yields to the event loop. */
export const SLICE_MS = 10;

export class Slicer {
  private start = performance.now();
  /** The longest step between two yields (wall clock: on a loaded machine it includes time descheduled), and the yields. */
  longestMs = 0;
  yields = 0;

  constructor(private readonly sliceMs = SLICE_MS) {}

  async maybeYield(): Promise<void> {
    const ms = performance.now() - this.start;
    if (ms < this.sliceMs) return;
    this.longestMs = Math.max(this.longestMs, ms);
    this.yields++;
    await nextTurn();
    this.start = performance.now();
  }

  done(): void {
    this.longestMs = Math.max(this.longestMs, performance.now() - this.start);
  }
}
