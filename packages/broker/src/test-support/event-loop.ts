/** Event-loop helpers for the tests of work done in slices (src/slicer.ts). Not part of the published package. */

/** How many times the event loop turned while `work` ran (0 when it ran in one synchronous step). */
export async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  const result = await work();
  running = false;
  return { result, turns };
}

/**
 * Runs `big` and, while it is pending, `small` again and again (another connection's request); how many `small`
 * calls were answered before `big` was. Work done in one synchronous step lets at most one in.
 */
export async function servedMeanwhile<T>(big: Promise<T>, small: () => Promise<unknown>): Promise<{ result: T; answeredBefore: number }> {
  let done = false;
  const pending = big.finally(() => {
    done = true;
  });
  // A failure of `big` ends the loop and is thrown below.
  pending.catch(() => undefined);
  let answeredBefore = 0;
  while (!done) {
    await small();
    if (!done) answeredBefore++;
  }
  return { result: await pending, answeredBefore };
}
