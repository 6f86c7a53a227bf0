/** The checker flags what it is there to flag (fed by hand, no cluster). */
import { describe, expect, it } from '@jest/globals';
import { Rng } from '@mq/consensus/sim';
import { ClusterChecker, SimTime, TxnChecker, txnValue } from '../src/index.js';

function checker(): ClusterChecker {
  return new ClusterChecker({ topic: 't', partitions: 2, brokers: [], note: () => undefined });
}

describe('ClusterChecker', () => {
  it('flags two acknowledgments of one offset with different values', () => {
    const c = checker();
    c.acked({ producer: 'p', idempotent: true, partition: 0, offset: 5, value: 'p:1' });
    expect(c.violation).toBeUndefined();
    c.acked({ producer: 'p', idempotent: true, partition: 0, offset: 5, value: 'p:2' });
    expect(c.violation).toMatch(/two acknowledgments of t-0 offset 5/);
  });

  it('flags a consumer that skips or repeats an offset within its session', () => {
    const c = checker();
    c.consumed(1, 0, 'a');
    c.consumed(1, 1, 'b');
    expect(c.violation).toBeUndefined();
    c.consumed(1, 3, 'c');
    expect(c.violation).toMatch(/read offset 3 after 1/);
  });
});

describe('TxnChecker', () => {
  function txnChecker() {
    const flagged: string[] = [];
    const c = new TxnChecker({ topic: 't', partitions: 2, brokers: [], time: new SimTime(new Rng(1)), note: () => undefined, flag: (m) => flagged.push(m) });
    return { c, flagged };
  }

  it('flags a read_committed record of a transaction whose commit was never asked for', () => {
    const { c, flagged } = txnChecker();
    c.begun(1);
    c.sent(1, 0, txnValue(1, 0));
    c.consumed(0, 0, txnValue(1, 0));
    expect(flagged.join()).toMatch(/transaction 1 was never committed/);
  });

  it('flags a read_committed record of a transaction whose abort was acknowledged, and accepts one being committed', () => {
    const { c, flagged } = txnChecker();
    c.begun(1);
    c.sent(1, 0, txnValue(1, 0));
    c.ending(1, true);
    c.consumed(0, 0, txnValue(1, 0));
    expect(flagged).toEqual([]);
    c.begun(2);
    c.sent(2, 1, txnValue(2, 0));
    c.ending(2, false);
    c.ended(2, 'aborted');
    c.consumed(1, 3, txnValue(2, 0));
    expect(flagged.join()).toMatch(/transaction 2 was aborted/);
  });

  it('flags a read_committed consumer that steps back within a partition', () => {
    const { c, flagged } = txnChecker();
    c.begun(1);
    c.ending(1, true);
    c.consumed(0, 4, txnValue(1, 0));
    c.consumed(0, 4, txnValue(1, 1));
    expect(flagged.join()).toMatch(/read offset 4 after 4/);
  });
});
