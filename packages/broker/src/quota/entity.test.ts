import { MqError } from '@mq/protocol/errors';
import { DEFAULT_ENTITY, entityKey, parseQuotaAlterations, resolveQuota, type QuotaEntity, type QuotaValues } from './entity.js';
import { ConnectionQuotas } from './connection-limits.js';

const D = DEFAULT_ENTITY;

function lookupOf(quotas: Array<[QuotaEntity, QuotaValues]>) {
  const m = new Map(quotas.map(([e, v]) => [entityKey(e), v]));
  return (k: string) => m.get(k);
}

describe('quota entity resolution (Kafka precedence)', () => {
  // Every level, each with its own value: the most specific that matches wins.
  const all: Array<[QuotaEntity, QuotaValues]> = [
    [{ user: 'alice', clientId: 'app' }, { producer_byte_rate: 1 }],
    [{ user: 'alice', clientId: D }, { producer_byte_rate: 2 }],
    [{ user: 'alice' }, { producer_byte_rate: 3 }],
    [{ user: D, clientId: 'app' }, { producer_byte_rate: 4 }],
    [{ user: D, clientId: D }, { producer_byte_rate: 5 }],
    [{ user: D }, { producer_byte_rate: 6 }],
    [{ clientId: 'app' }, { producer_byte_rate: 7 }],
    [{ clientId: D }, { producer_byte_rate: 8 }],
  ];

  it('user+client-id > user+<default> > user > <default>+client-id > <default>+<default> > <default> > client-id > <default> client', () => {
    for (let i = 0; i < all.length; i++) {
      const lookup = lookupOf(all.slice(i));
      expect(resolveQuota(lookup, 'alice', 'app', 'producer_byte_rate')?.limit).toBe(i + 1);
    }
    expect(resolveQuota(lookupOf([]), 'alice', 'app', 'producer_byte_rate')).toBeUndefined();
  });

  it('an unauthenticated client matches client-id quotas only', () => {
    expect(resolveQuota(lookupOf(all), undefined, 'app', 'producer_byte_rate')?.limit).toBe(7);
    expect(resolveQuota(lookupOf(all), undefined, 'other', 'producer_byte_rate')?.limit).toBe(8);
  });

  it('each key is resolved on its own', () => {
    const lookup = lookupOf([
      [{ user: 'alice' }, { consumer_byte_rate: 10 }],
      [{ clientId: D }, { producer_byte_rate: 20, consumer_byte_rate: 30 }],
    ]);
    expect(resolveQuota(lookup, 'alice', 'x', 'consumer_byte_rate')?.limit).toBe(10);
    expect(resolveQuota(lookup, 'alice', 'x', 'producer_byte_rate')?.limit).toBe(20);
    expect(resolveQuota(lookup, 'alice', 'x', 'request_rate')).toBeUndefined();
  });

  it('the rate is shared by what the matched entity names literally; <default> parts stand for each actual one', () => {
    const lookup = lookupOf([[{ user: 'alice' }, { request_rate: 1 }], [{ clientId: D }, { request_rate: 2 }]]);
    expect(resolveQuota(lookup, 'alice', 'a', 'request_rate')!.bucket).toBe(resolveQuota(lookup, 'alice', 'b', 'request_rate')!.bucket);
    expect(resolveQuota(lookup, 'bob', 'a', 'request_rate')!.bucket).not.toBe(resolveQuota(lookup, 'bob', 'b', 'request_rate')!.bucket);
  });
});

describe('quota alterations: bad input is refused whole with INVALID_REQUEST', () => {
  const bad = (list: unknown) => {
    try {
      parseQuotaAlterations(list);
    } catch (err) {
      expect(err).toBeInstanceOf(MqError);
      return (err as MqError).code;
    }
    return 'accepted';
  };

  it.each([
    ['a negative value', [{ entity: { user: 'alice' }, set: { producer_byte_rate: -1 } }]],
    ['zero', [{ entity: { user: 'alice' }, set: { producer_byte_rate: 0 } }]],
    ['an absurd value', [{ entity: { user: 'alice' }, set: { producer_byte_rate: 1e300 } }]],
    ['NaN', [{ entity: { user: 'alice' }, set: { producer_byte_rate: Number.NaN } }]],
    ['an unknown key', [{ entity: { user: 'alice' }, set: { producer_rate: 100 } }]],
    ['an unknown key to remove', [{ entity: { user: 'alice' }, remove: ['nope'] }]],
    ['no entity part', [{ entity: {}, set: { producer_byte_rate: 100 } }]],
    ['a bad user name', [{ entity: { user: 'al ice' }, set: { producer_byte_rate: 100 } }]],
    ['a key set and removed', [{ entity: { user: 'alice' }, set: { request_rate: 5 }, remove: ['request_rate'] }]],
    ['nothing to do', [{ entity: { user: 'alice' } }]],
    ['an entity twice', [{ entity: { user: 'alice' }, set: { request_rate: 5 } }, { entity: { user: 'alice' }, set: { request_rate: 6 } }]],
    ['one good and one bad', [{ entity: { clientId: 'ok' }, set: { request_rate: 5 } }, { entity: { clientId: 'x' }, set: { request_rate: -5 } }]],
    ['no alteration', []],
  ])('%s', (_name, list) => {
    expect(bad(list)).toBe('INVALID_REQUEST');
  });

  it('accepts users, client ids, <default> and removals', () => {
    expect(
      parseQuotaAlterations([
        { entity: { user: 'alice', clientId: '' }, set: { producer_byte_rate: 1024 } },
        { entity: { user: D, clientId: D }, set: { consumer_byte_rate: 2048.5, request_rate: 100 } },
        { entity: { clientId: 'app-1' }, remove: ['request_rate'] },
      ]),
    ).toEqual([
      { entity: { user: 'alice' }, set: { producer_byte_rate: 1024 }, remove: [] },
      { entity: { user: D, clientId: D }, set: { consumer_byte_rate: 2048.5, request_rate: 100 }, remove: [] },
      { entity: { clientId: 'app-1' }, set: {}, remove: ['request_rate'] },
    ]);
  });
});

describe('ConnectionQuotas', () => {
  it('refuses beyond the limit per IP and per principal, and counts a released connection out', () => {
    const c = new ConnectionQuotas({ maxConnectionsPerIp: 2, maxConnectionsPerPrincipal: 1 });
    expect(c.acceptIp('10.0.0.1')).toBeUndefined();
    expect(c.acceptIp('10.0.0.1')).toBeUndefined();
    expect(c.acceptIp('10.0.0.1')).toMatch(/too many connections from 10\.0\.0\.1 \(max\.connections\.per\.ip=2\)/);
    expect(c.acceptIp('10.0.0.2')).toBeUndefined();
    c.releaseIp('10.0.0.1');
    expect(c.acceptIp('10.0.0.1')).toBeUndefined();
    expect(c.acceptPrincipal('User:alice')).toBeUndefined();
    expect(c.acceptPrincipal('User:alice')).toMatch(/max\.connections\.per\.principal=1/);
    expect(c.acceptPrincipal('User:bob')).toBeUndefined();
    c.releasePrincipal('User:alice');
    expect(c.countPrincipal('User:alice')).toBe(0);
  });
});
