import { pino } from 'pino';
import { QuotaBucket } from './token-bucket.js';
import { QuotaManager, type QuotaSource } from './quota-manager.js';
import { entityKey, type QuotaEntity, type QuotaValues } from './entity.js';

describe('QuotaBucket (KIP-599 token bucket with the quota window as burst)', () => {
  it('lets a burst of quota x window through, then makes a client in debt wait debt / quota', () => {
    const b = new QuotaBucket(0);
    // 1000/s over a 2 s window: 2000 of burst.
    expect(b.record(2000, 1000, 2000, 0)).toBe(0);
    expect(b.record(500, 1000, 2000, 0)).toBe(500);
    // Half a second later the debt is paid: 100 more costs 100 ms.
    expect(b.record(100, 1000, 2000, 500)).toBe(100);
  });

  it('credit never grows beyond the burst, however long the client was idle', () => {
    const b = new QuotaBucket(0);
    b.record(0, 1000, 2000, 0);
    expect(b.record(2000, 1000, 2000, 3_600_000)).toBe(0);
    expect(b.record(1, 1000, 2000, 3_600_000)).toBeGreaterThan(0);
  });

  it('caps one answer\'s wait at the window (a larger debt is paid over several answers)', () => {
    const b = new QuotaBucket(0);
    expect(b.record(1e9, 1, 2000, 0)).toBe(2000);
    expect(b.record(0, 1, 2000, 2000)).toBe(2000);
  });
});

/** A source holding `quotas` as the metadata state would. */
function source(quotas: Array<[QuotaEntity, QuotaValues]>): QuotaSource & { set(e: QuotaEntity, v: QuotaValues): void } {
  const map = new Map(quotas.map(([e, v]) => [entityKey(e), v]));
  let version = 1;
  return {
    get quotasVersion() {
      return version;
    },
    get quotaCount() {
      return map.size;
    },
    quotaValues: (k) => map.get(k),
    set(e, v) {
      map.set(entityKey(e), v);
      version++;
    },
  };
}

describe('QuotaManager with a fake clock', () => {
  const logger = pino({ level: 'silent' });

  /** A producer that sends `size` bytes per request as fast as answers come, honouring each throttle time; bytes sent in [from, to). */
  function run(q: QuotaManager, user: string | undefined, clientId: string, size: number, from: number, to: number, now: { t: number }, requestMs = 2): number {
    let bytes = 0;
    while (now.t < to) {
      const wait = q.record(user, clientId, 'producer_byte_rate', size);
      if (now.t >= from) bytes += size;
      now.t += requestMs + wait;
    }
    return bytes;
  }

  it('a client that honours throttle_ms gets its quota (within 2 %) over every 5 s once its burst is spent, whatever the window', () => {
    for (const samples of [2, 5, 11]) {
      for (const size of [1000, 4000, 50_000]) {
        const now = { t: 0 };
        const q = new QuotaManager({ samples, sampleMs: 1000, maxConnectionsPerIp: 1, maxConnectionsPerPrincipal: 1 }, { clock: () => now.t, source: source([[{ clientId: 'slow' }, { producer_byte_rate: 100_000 }]]), logger });
        // The burst (the quota times the window) goes first.
        const burst = run(q, undefined, 'slow', size, 0, samples * 1000, now);
        expect(burst / samples).toBeGreaterThan(190_000);
        for (let at = samples * 1000; at < samples * 1000 + 20_000; at += 5000) {
          const bytes = run(q, undefined, 'slow', size, at, at + 5000, now);
          expect(bytes / 5).toBeGreaterThan(98_000 - size / 5);
          expect(bytes / 5).toBeLessThan(102_000 + size / 5);
        }
      }
    }
  });

  it('a client without a quota is never throttled, and a client over its quota does not slow another', () => {
    const now = { t: 0 };
    const q = new QuotaManager({ samples: 11, sampleMs: 1000, maxConnectionsPerIp: 1, maxConnectionsPerPrincipal: 1 }, { clock: () => now.t, source: source([[{ clientId: 'slow' }, { producer_byte_rate: 1000 }]]), logger });
    expect(q.record(undefined, 'slow', 'producer_byte_rate', 1_000_000)).toBeGreaterThan(0);
    for (let i = 0; i < 100; i++) expect(q.record(undefined, 'fast', 'producer_byte_rate', 1_000_000)).toBe(0);
    expect(q.throttledTotal.producer_byte_rate).toBe(1);
  });

  it('shares one rate per matched entity: a user quota covers all its clients; a <default> user quota is one rate per user', () => {
    const now = { t: 0 };
    const src = source([
      [{ user: 'alice' }, { producer_byte_rate: 1000 }],
      [{ user: '<default>' }, { producer_byte_rate: 1000 }],
    ]);
    const q = new QuotaManager({ samples: 2, sampleMs: 1000, maxConnectionsPerIp: 1, maxConnectionsPerPrincipal: 1 }, { clock: () => now.t, source: src, logger });
    expect(q.record('alice', 'a', 'producer_byte_rate', 1500)).toBe(0);
    // alice's second client shares her rate: now over.
    expect(q.record('alice', 'b', 'producer_byte_rate', 1500)).toBeGreaterThan(0);
    // bob and carol fall under <default>, each on a rate of his own.
    expect(q.record('bob', 'a', 'producer_byte_rate', 1500)).toBe(0);
    expect(q.record('carol', 'a', 'producer_byte_rate', 1500)).toBe(0);
    // A change of the quotas is seen at once (the resolution cache follows the version).
    src.set({ user: 'bob', clientId: 'a' }, { producer_byte_rate: 100 });
    expect(q.record('bob', 'a', 'producer_byte_rate', 900)).toBeGreaterThan(0);
  });

  it('keeps its rates bounded however many client ids a <default> quota covers, without a scan per request', () => {
    const now = { t: 0 };
    const q = new QuotaManager({ samples: 2, sampleMs: 1000, maxConnectionsPerIp: 1, maxConnectionsPerPrincipal: 1 }, { clock: () => now.t, source: source([[{ clientId: '<default>' }, { request_rate: 1000 }]]), logger });
    const rates = (q as unknown as { rates: Map<string, unknown> }).rates;
    for (let i = 0; i < 25_000; i++) {
      q.record(undefined, `client-${i}`, 'request_rate', 1);
      if (i % 1000 === 0) now.t += 1; // all within one window: none is idle
    }
    expect(rates.size).toBeLessThanOrEqual(10_000);
    // The newest clients keep their rates.
    expect([...rates.keys()].some((k) => k.endsWith('client-24999'))).toBe(true);
  });

  it('records nothing while no quota exists', () => {
    const q = new QuotaManager({ samples: 2, sampleMs: 1000, maxConnectionsPerIp: 1, maxConnectionsPerPrincipal: 1 }, { clock: () => 0, source: source([]), logger });
    expect(q.active).toBe(false);
    expect(q.record('alice', 'a', 'request_rate', 1e9)).toBe(0);
  });
});
