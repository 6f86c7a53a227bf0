/**
 * Cluster.refreshMetadata's sharing of one request among concurrent callers, and the way out of it for a caller
 * that must not wait on a request already in flight (the producer's leader check: that request may have gone to
 * the paused leader, the first connection being every metadata request's target).
 */
import type { RequestBody } from '@mq/protocol/wire';
import { Cluster } from './cluster.js';
import { parseClientOptions } from './options.js';

/** A cluster whose metadata requests the test answers by hand, in any order. */
class HeldMetadata extends Cluster {
  readonly held: Array<(resp: unknown) => void> = [];
  override send<B extends RequestBody>(): Promise<never> {
    return new Promise((resolve) => this.held.push(resolve as (resp: unknown) => void));
  }
}

const settled = async (p: Promise<unknown>): Promise<boolean> => {
  let done = false;
  void p.then(() => (done = true));
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return done;
};

describe('Cluster.refreshMetadata', () => {
  it('shares the request in flight among concurrent callers', async () => {
    const c = new HeldMetadata(parseClientOptions({ bootstrap: '127.0.0.1:1' }));
    const first = c.refreshMetadata([]);
    const second = c.refreshMetadata([]);
    expect(c.held).toHaveLength(1);
    c.held[0]!({ brokers: [], topics: [] });
    await Promise.all([first, second]);
  });

  it('regression (issue 21, a paused leader\'s partition waited out the pause): with join: false a caller asks anew instead of waiting on the request in flight', async () => {
    const c = new HeldMetadata(parseClientOptions({ bootstrap: '127.0.0.1:1' }));
    const stuck = c.refreshMetadata([]); // went to a broker that is now paused: no answer until it runs again
    const check = c.refreshMetadata([], undefined, { join: false });
    await new Promise((r) => setImmediate(r));
    expect(c.held).toHaveLength(2);
    c.held[1]!({ brokers: [], topics: [] });
    expect(await settled(check)).toBe(true);
    expect(await settled(stuck)).toBe(false);
    c.held[0]!({ brokers: [], topics: [] });
    await stuck;
  });
});
