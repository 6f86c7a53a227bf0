import { createKeyGenerator, parseKeySpec } from './keys.js';

describe('key generators', () => {
  it('none gives no key', () => {
    expect(createKeyGenerator(parseKeySpec('none'))()).toBeUndefined();
  });

  it('uniform:K uses exactly K keys, roughly evenly', () => {
    const next = createKeyGenerator(parseKeySpec('uniform:4'));
    const counts = new Map<string, number>();
    for (let i = 0; i < 40_000; i++) {
      const k = next()!.toString();
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).toEqual(['k0', 'k1', 'k2', 'k3']);
    for (const c of counts.values()) expect(c).toBeGreaterThan(9000);
  });

  it('hot sends about 90% to one key', () => {
    const next = createKeyGenerator(parseKeySpec('hot'));
    let hot = 0;
    for (let i = 0; i < 10_000; i++) if (next()!.toString() === 'hot') hot++;
    expect(hot).toBeGreaterThan(8700);
    expect(hot).toBeLessThan(9300);
  });

  it('is deterministic for a seed', () => {
    const a = createKeyGenerator(parseKeySpec('uniform:1000'), 7);
    const b = createKeyGenerator(parseKeySpec('uniform:1000'), 7);
    for (let i = 0; i < 100; i++) expect(a()!.equals(b()!)).toBe(true);
  });
});
