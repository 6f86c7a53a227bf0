/**
 * The idempotent producer's identity after a batch failed for good (KIP-360):
 * the next epoch of the same producer id, sequences from 0 on every
 * partition; only the first failure of an identity moves it on; a new
 * producer id only when the epoch would overflow.
 */
import type { Cluster } from '../cluster.js';
import { BatchBuilder, measureRecord } from './batch-builder.js';
import { Idempotence } from './idempotence.js';

function batch(partition: number): BatchBuilder {
  const b = new BatchBuilder(Buffer.alloc(1024), 't', partition, 1_700_000_000_000);
  const r = { value: 'v' };
  b.tryAppend(r, measureRecord(r), 1_700_000_000_000, { ok: () => {}, fail: () => {} }, 0);
  return b;
}

/** An Idempotence whose InitProducerId answers producer id 42 at `epoch`. */
function withIdentity(epoch: number): Idempotence {
  const idem = new Idempotence({} as Cluster);
  idem.setIdentity({ producerId: 42, epoch });
  return idem;
}

describe('Idempotence.reset', () => {
  it('bumps the epoch of the same producer id and restarts every partition at sequence 0', () => {
    const idem = withIdentity(3);
    const [a0, a1, b0] = [batch(0), batch(0), batch(1)];
    idem.stamp(a0, idem.current!);
    idem.stamp(a1, idem.current!);
    idem.stamp(b0, idem.current!);
    expect([a0.baseSequence, a1.baseSequence, b0.baseSequence]).toEqual([0, 1, 0]);

    expect(idem.reset(a0)).toBe('epoch');
    expect(idem.current).toEqual({ producerId: 42, epoch: 4 });
    // The partition's next stamped batch failing too does not bump again.
    expect(idem.reset(a1)).toBe('unchanged');
    expect(idem.current).toEqual({ producerId: 42, epoch: 4 });

    const [c0, c1] = [batch(0), batch(1)];
    idem.stamp(c0, idem.current!);
    idem.stamp(c1, idem.current!);
    expect([c0.producerId, c0.producerEpoch, c0.baseSequence]).toEqual([42, 4, 0]);
    expect([c1.producerId, c1.producerEpoch, c1.baseSequence]).toEqual([42, 4, 0]);
  });

  it('asks for a new producer id when the epoch would overflow int16', () => {
    const idem = withIdentity(0x7fff);
    const b = batch(0);
    idem.stamp(b, idem.current!);
    expect(idem.reset(b)).toBe('producer-id');
    expect(idem.current).toBeUndefined();
  });
});
