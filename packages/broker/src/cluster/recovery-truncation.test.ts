import { recoveryTruncation } from './recovery-truncation.js';

// The leader elected by unclean recovery in epoch 7 had epoch 4 as its last, ending at 1000.
const leader = { leaderEpoch: 7, lastEpoch: 4, endOffset: 1000 };

describe('recoveryTruncation', () => {
  it('a replica holding more of the leader\'s last epoch gives up the tail past its end', () => {
    expect(recoveryTruncation([{ epoch: 2, startOffset: 0 }, { epoch: 4, startOffset: 600 }], 1020, leader)).toEqual({ from: 1000, to: 1020, lastEpoch: 4 });
  });

  it('a replica with an epoch the leader never had gives it all up', () => {
    expect(recoveryTruncation([{ epoch: 4, startOffset: 0 }, { epoch: 5, startOffset: 990 }], 1010, leader)).toEqual({ from: 990, to: 1010, lastEpoch: 5 });
  });

  it('a replica at or behind the leader truncates nothing', () => {
    expect(recoveryTruncation([{ epoch: 4, startOffset: 0 }], 1000, leader)).toBeUndefined();
    expect(recoveryTruncation([{ epoch: 4, startOffset: 0 }], 700, leader)).toBeUndefined();
  });

  it('regression (issue 12): records fetched from the new leader since its election are not counted against it', () => {
    // The replica already truncated to 1000 and followed: epoch 7 (the recovery epoch) holds the leader's records.
    expect(recoveryTruncation([{ epoch: 4, startOffset: 0 }, { epoch: 7, startOffset: 1000 }], 1500, leader)).toBeUndefined();
  });

  it('regression (issue 12): an epoch this replica led without appending anything is no record to lose', () => {
    expect(recoveryTruncation([{ epoch: 4, startOffset: 0 }, { epoch: 5, startOffset: 900 }], 900, leader)).toBeUndefined();
  });

  it('a leader that reported no log end (elected without a report) says nothing', () => {
    expect(recoveryTruncation([{ epoch: 4, startOffset: 0 }], 2000, { leaderEpoch: 7, lastEpoch: -1, endOffset: -1 })).toBeUndefined();
  });
});
