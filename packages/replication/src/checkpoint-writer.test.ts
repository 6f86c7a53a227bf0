import { CheckpointWriter } from './checkpoint-writer.js';
import { ManualTimers, MemoryCheckpoint, settle } from './testing/index.js';
import type { Logger } from '@mq/protocol/components';

function writer(intervalMs: number, checkpoint = new MemoryCheckpoint()) {
  const timers = new ManualTimers(0);
  const warnings: string[] = [];
  const logger: Logger = { debug() {}, info() {}, warn: (_o, m) => warnings.push(m ?? ''), error() {} };
  return { timers, checkpoint, warnings, w: new CheckpointWriter(checkpoint, { timers, logger, fields: {} }, intervalMs, 0, undefined) };
}

describe('CheckpointWriter', () => {
  it('writes at most once per interval, the latest value', async () => {
    const { w, timers, checkpoint } = writer(5_000);
    for (let hw = 1; hw <= 100; hw++) w.set(hw);
    await settle();
    expect(checkpoint.saves).toBe(0);
    await timers.advance(5_000);
    expect(checkpoint.saves).toBe(1);
    expect(checkpoint.value).toBe(100);
    w.set(101);
    await w.flush();
    expect(checkpoint.value).toBe(101);
    expect(timers.pendingCount).toBe(0);
  });

  it('with interval 0 writes every change, never two saves at once', async () => {
    let inFlight = 0;
    let most = 0;
    const cp = new MemoryCheckpoint();
    const save = cp.save.bind(cp);
    cp.save = async (hw) => {
      most = Math.max(most, ++inFlight);
      await settle(1);
      await save(hw);
      inFlight--;
    };
    const { w } = writer(0, cp);
    w.set(1);
    w.set(2);
    w.set(3);
    await w.flush();
    expect(cp.value).toBe(3);
    expect(most).toBe(1);
  });

  it('logs a failed save instead of throwing, and retries on the next flush', async () => {
    const cp = new MemoryCheckpoint();
    let fail = true;
    const save = cp.save.bind(cp);
    cp.save = async (hw) => {
      if (fail) throw new Error('disk full');
      await save(hw);
    };
    const { w, warnings } = writer(10_000, cp);
    w.set(7);
    await w.flush();
    expect(warnings).toEqual(['high watermark checkpoint failed']);
    fail = false;
    await w.flush();
    expect(cp.value).toBe(7);
  });
});
