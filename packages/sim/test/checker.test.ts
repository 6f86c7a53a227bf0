/** The checker flags what it is there to flag (fed by hand, no cluster). */
import { describe, expect, it } from '@jest/globals';
import { ClusterChecker } from '../src/index.js';

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
