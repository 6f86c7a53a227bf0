/** Client quotas in the metadata log: applied by every replica alike, kept in snapshots, checked when decoded. */
import { MqError } from '@mq/protocol/errors';
import { decodeCommand, encodeCommand, type MetadataCommand } from '../controller/commands.js';
import { MetadataState } from '../controller/metadata-state.js';
import { entityKey } from './entity.js';

function state() {
  const s = new MetadataState();
  let index = 0;
  const run = (cmd: MetadataCommand) => s.applyCommand(decodeCommand(encodeCommand(cmd)), ++index);
  return { s, run };
}

describe('client quotas in the metadata state', () => {
  it('sets, merges and removes values; an entity with no value left is gone; the version moves with every change', () => {
    const { s, run } = state();
    const v0 = s.quotasVersion;
    expect(run({ type: 'alterClientQuotas', alterations: [{ entity: { user: 'alice' }, set: { producer_byte_rate: 1000 }, remove: [] }] }).ok).toBe(true);
    run({ type: 'alterClientQuotas', alterations: [{ entity: { user: 'alice' }, set: { request_rate: 50 }, remove: [] }, { entity: { clientId: '<default>' }, set: { consumer_byte_rate: 2000 }, remove: [] }] });
    expect(s.quotasVersion).toBeGreaterThan(v0);
    expect(s.quotaValues(entityKey({ user: 'alice' }))).toEqual({ producer_byte_rate: 1000, request_rate: 50 });
    expect(s.quotaCount).toBe(2);
    run({ type: 'alterClientQuotas', alterations: [{ entity: { user: 'alice' }, set: {}, remove: ['producer_byte_rate', 'request_rate'] }] });
    expect(s.quotaValues(entityKey({ user: 'alice' }))).toBeUndefined();
    expect(s.clientQuotas()).toEqual([{ entity: { clientId: '<default>' }, values: { consumer_byte_rate: 2000 } }]);
  });

  it('survives a snapshot and restore', () => {
    const { s, run } = state();
    run({ type: 'alterClientQuotas', alterations: [{ entity: { user: 'bob', clientId: 'app' }, set: { producer_byte_rate: 4096 }, remove: [] }] });
    const copy = new MetadataState();
    copy.restore(s.snapshot(), 7);
    expect(copy.clientQuotas()).toEqual(s.clientQuotas());
    expect(copy.quotaValues(entityKey({ user: 'bob', clientId: 'app' }))).toEqual({ producer_byte_rate: 4096 });
  });

  it('a command with a bad value or key does not decode (a forwarded command from the network is checked too)', () => {
    for (const alterations of [
      [{ entity: { user: 'alice' }, set: { producer_byte_rate: -5 }, remove: [] }],
      [{ entity: { user: 'alice' }, set: { bytes: 5 }, remove: [] }],
      [{ entity: {}, set: { request_rate: 5 }, remove: [] }],
    ]) {
      expect(() => decodeCommand(encodeCommand({ type: 'alterClientQuotas', alterations } as never))).toThrow(MqError);
    }
  });
});
