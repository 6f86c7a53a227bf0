/** The simulated clock behaves as Node's clock and timers do. */
import { describe, expect, it } from '@jest/globals';
import { Rng } from '@mq/consensus/sim';
import { SIM_EPOCH_MS, SimTime } from '../src/index.js';

describe('SimTime', () => {
  it('regression (sim seed 128 on the hw branch): truncates fractional delays as Node does, so the clock stays in whole milliseconds', async () => {
    const time = new SimTime(new Rng(1));
    const fired: number[] = [];
    time.schedule(2.5, () => fired.push(time.now()));
    time.setTimeout(() => fired.push(time.now()), 1000.75);
    await time.run(5_000, () => fired.length === 2);
    expect(fired).toEqual([SIM_EPOCH_MS + 2, SIM_EPOCH_MS + 1000]);
    expect(Number.isInteger(time.now())).toBe(true);
  });
});
