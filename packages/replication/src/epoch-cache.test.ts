import { endOffsetForEpoch, truncationTarget } from './epoch-cache.js';
import { MemoryLog } from './testing/index.js';
import { encodeBatchSync } from '@mq/protocol/batch';

const entries = [
  { epoch: 2, startOffset: 0 },
  { epoch: 4, startOffset: 10 },
  { epoch: 7, startOffset: 25 },
];

describe('endOffsetForEpoch (OffsetForLeaderEpoch)', () => {
  it.each([
    [7, { epoch: 7, endOffset: 40 }], // latest: the log end
    [4, { epoch: 4, endOffset: 25 }],
    [5, { epoch: 4, endOffset: 25 }], // unknown epoch in between: the largest below it
    [2, { epoch: 2, endOffset: 10 }],
    [1, { epoch: 1, endOffset: 0 }], // older than everything: the first start
    [8, { epoch: -1, endOffset: -1 }], // newer than everything
    [-1, { epoch: -1, endOffset: -1 }],
  ])('epoch %i ends at %j', (epoch, expected) => {
    expect(endOffsetForEpoch(entries, epoch, 40)).toEqual(expected);
  });

  it('knows nothing with an empty cache', () => {
    expect(endOffsetForEpoch([], 3, 10)).toEqual({ epoch: -1, endOffset: -1 });
  });
});

describe('truncationTarget', () => {
  async function logWithEpochs(spec: [epoch: number, count: number][]): Promise<MemoryLog> {
    const log = new MemoryLog();
    for (const [epoch, count] of spec) {
      for (let i = 0; i < count; i++) await log.append(encodeBatchSync([{ value: 'x' }], { now: 1 }), { leaderEpoch: epoch });
    }
    return log;
  }

  it('cuts to the leader end of the shared epoch', async () => {
    const log = await logWithEpochs([[1, 5], [2, 3]]); // epoch 2 at 5..7
    expect(truncationTarget(log, { epoch: 2, endOffset: 6 }, 0)).toEqual({ offset: 6, complete: true });
    expect(truncationTarget(log, { epoch: 2, endOffset: 20 }, 0)).toEqual({ offset: 8, complete: true });
  });

  it('goes back an epoch when the leader never saw ours', async () => {
    const log = await logWithEpochs([[1, 5], [3, 3]]); // leader answers for epoch 3 with its epoch 2
    expect(truncationTarget(log, { epoch: 2, endOffset: 9 }, 0)).toEqual({ offset: 5, complete: false });
  });

  it('falls back to the high watermark when the leader knows nothing', async () => {
    const log = await logWithEpochs([[1, 5]]);
    expect(truncationTarget(log, { epoch: -1, endOffset: -1 }, 3)).toEqual({ offset: 3, complete: true });
  });
});
