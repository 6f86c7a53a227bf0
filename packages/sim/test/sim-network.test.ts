/** The simulated network keeps the promises of the real transports it stands in for. */
import { describe, expect, it } from '@jest/globals';
import type { ConnectionOptions } from '@mq/client';
import { Rng } from '@mq/consensus/sim';
import { SimNetwork, SimTime, type SimProcess } from '../src/index.js';

describe('SimNetwork', () => {
  it('regression (sim seed 240): a connect whose server crashes before accepting fails within connectTimeoutMs, as ws would', async () => {
    const time = new SimTime(new Rng(1));
    const net = new SimNetwork(time, new Rng(2));
    const server: SimProcess = { name: 'b2', alive: true };
    const client: SimProcess = { name: 'consumer', alive: true };
    net.listen(server, 'b2:9092', () => undefined);
    const options = { address: 'b2:9092', connectTimeoutMs: 1000 } as ConnectionOptions;
    let outcome: string | undefined;
    time.within(client, () => net.connector(client)(options)).then(
      () => (outcome = 'connected'),
      (err: Error) => (outcome = err.message),
    );
    // The accept runs in the server's process one link delay later; the server crashes first, so it never runs.
    server.alive = false;
    net.crashed(server);
    await time.run(10_000, () => outcome !== undefined);
    expect(outcome).toBe('connect b2:9092: no answer within 1000 ms');
    expect(time.elapsed()).toBeLessThanOrEqual(1000);
  });
});
