import fc from 'fast-check';
import { tpKey } from '../consumer-protocol.js';
import type { Assignor, AssignorMember, TopicPartition } from '../types.js';
import { BUILTIN_ASSIGNORS, rebalanceProtocolOf, resolveAssignors } from './index.js';
import { rangeAssignor } from './range.js';
import { roundRobinAssignor } from './round-robin.js';
import { cooperativeStickyAssignor, stickyAssignor } from './sticky.js';

const TOPICS = ['a', 'b', 'c', 'd'];

function member(id: string, topics: readonly string[], owned: TopicPartition[] = [], generationId = 1): AssignorMember {
  return { memberId: id, groupInstanceId: null, topics, ownedPartitions: owned, generationId };
}

function counts(obj: Record<string, number>): Map<string, number> {
  return new Map(Object.entries(obj));
}

const countsArb = fc
  .tuple(...TOPICS.map(() => fc.integer({ min: 0, max: 14 })))
  .map((cs) => new Map(TOPICS.map((t, i) => [t, cs[i]!] as const).filter(([, c]) => c > 0)));

/** Members with arbitrary (non-empty) subscriptions. */
const mixedMembersArb = fc
  .array(fc.subarray(TOPICS, { minLength: 1 }), { minLength: 1, maxLength: 12 })
  .map((subs) => subs.map((topics, i) => member(`m${String(i).padStart(2, '0')}`, topics)));

/** Members that all subscribe to the same topics. */
const uniformMembersArb = fc
  .tuple(fc.subarray(TOPICS, { minLength: 1 }), fc.integer({ min: 1, max: 12 }))
  .map(([topics, n]) => Array.from({ length: n }, (_, i) => member(`m${String(i).padStart(2, '0')}`, topics)));

function expectedPartitions(members: readonly AssignorMember[], pc: ReadonlyMap<string, number>): string[] {
  const topics = new Set(members.flatMap((m) => m.topics));
  const out: string[] = [];
  for (const t of topics) for (let p = 0; p < (pc.get(t) ?? 0); p++) out.push(tpKey({ topic: t, partition: p }));
  return out.sort();
}

function checkExactlyOnce(members: readonly AssignorMember[], pc: ReadonlyMap<string, number>, result: Map<string, TopicPartition[]>) {
  const seen: string[] = [];
  for (const m of members) {
    for (const tp of result.get(m.memberId) ?? []) {
      expect(m.topics).toContain(tp.topic);
      seen.push(tpKey(tp));
    }
  }
  expect(seen.sort()).toEqual(expectedPartitions(members, pc));
}

function sizes(members: readonly AssignorMember[], result: Map<string, TopicPartition[]>): number[] {
  return members.map((m) => result.get(m.memberId)?.length ?? 0);
}

function spread(xs: number[]): number {
  return Math.max(...xs) - Math.min(...xs);
}

const ALL: Assignor[] = [rangeAssignor, roundRobinAssignor, stickyAssignor, cooperativeStickyAssignor];

describe('assignors', () => {
  it('range gives contiguous ranges, the first members one more', () => {
    const r = rangeAssignor.assign([member('x', ['a']), member('y', ['a']), member('z', ['a'])], counts({ a: 7 }));
    expect(r.get('x')!.map((tp) => tp.partition)).toEqual([0, 1, 2]);
    expect(r.get('y')!.map((tp) => tp.partition)).toEqual([3, 4]);
    expect(r.get('z')!.map((tp) => tp.partition)).toEqual([5, 6]);
  });

  it('round-robin deals partitions in turn, skipping unsubscribed members', () => {
    const r = roundRobinAssignor.assign([member('x', ['a', 'b']), member('y', ['a'])], counts({ a: 2, b: 2 }));
    expect(r.get('x')).toEqual([
      { topic: 'a', partition: 0 },
      { topic: 'b', partition: 0 },
      { topic: 'b', partition: 1 },
    ]);
    expect(r.get('y')).toEqual([{ topic: 'a', partition: 1 }]);
  });

  it('twelve members on ten partitions: ten get one, two stay idle', () => {
    const ms = Array.from({ length: 12 }, (_, i) => member(`m${String(i).padStart(2, '0')}`, ['a']));
    for (const a of ALL) {
      const r = a.assign(ms, counts({ a: 10 }));
      expect(sizes(ms, r).sort()).toEqual([0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
    }
  });

  it.each(ALL.map((a) => [a.name, a] as const))('%s assigns every partition exactly once, only to subscribers', (_name, assignor) => {
    fc.assert(
      fc.property(mixedMembersArb, countsArb, (members, pc) => {
        checkExactlyOnce(members, pc, assignor.assign(members, pc, { protocol: 'eager' }));
      }),
      { numRuns: 300 },
    );
  });

  it.each([roundRobinAssignor, stickyAssignor, cooperativeStickyAssignor].map((a) => [a.name, a] as const))(
    '%s balances within one when subscriptions are identical',
    (_name, assignor) => {
      fc.assert(
        fc.property(uniformMembersArb, countsArb, (members, pc) => {
          expect(spread(sizes(members, assignor.assign(members, pc)))).toBeLessThanOrEqual(1);
        }),
        { numRuns: 300 },
      );
    },
  );

  it('range balances within one per topic', () => {
    fc.assert(
      fc.property(uniformMembersArb, countsArb, (members, pc) => {
        const r = rangeAssignor.assign(members, pc);
        for (const t of members[0]!.topics) {
          expect(spread(members.map((m) => r.get(m.memberId)!.filter((tp) => tp.topic === t).length))).toBeLessThanOrEqual(1);
        }
      }),
    );
  });

  it('sticky stays exactly-once and balanced whatever members claim to own (stale, conflicting, missing partitions)', () => {
    const claimArb = fc.array(fc.record({ topic: fc.constantFrom(...TOPICS, 'gone'), partition: fc.integer({ min: 0, max: 20 }) }), { maxLength: 10 });
    fc.assert(
      fc.property(uniformMembersArb, countsArb, fc.array(claimArb, { minLength: 12, maxLength: 12 }), fc.array(fc.integer({ min: -1, max: 5 }), { minLength: 12, maxLength: 12 }), (members, pc, claims, gens) => {
        const withClaims = members.map((m, i) => ({ ...m, ownedPartitions: claims[i]!, generationId: gens[i]! }));
        const r = stickyAssignor.assign(withClaims, pc);
        checkExactlyOnce(withClaims, pc, r);
        expect(spread(sizes(withClaims, r))).toBeLessThanOrEqual(1);
      }),
      { numRuns: 300 },
    );
  });

  it('sticky keeps owned partitions: unchanged groups keep their assignment; a joiner only takes, a leaver only gives', () => {
    fc.assert(
      fc.property(uniformMembersArb, countsArb, fc.nat(), (members, pc, pick) => {
        const first = stickyAssignor.assign(members, pc);
        const owning = members.map((m) => ({ ...m, ownedPartitions: first.get(m.memberId)!, generationId: 1 }));
        // Same members again: nothing moves.
        expect(stickyAssignor.assign(owning, pc)).toEqual(first);
        // A new member: the others only lose partitions, and no more than needed.
        const joined = [...owning, member('zz-new', members[0]!.topics)];
        const afterJoin = stickyAssignor.assign(joined, pc);
        for (const m of owning) {
          const before = new Set(first.get(m.memberId)!.map(tpKey));
          for (const tp of afterJoin.get(m.memberId)!) expect(before.has(tpKey(tp))).toBe(true);
        }
        const total = expectedPartitions(members, pc).length;
        expect(afterJoin.get('zz-new')!.length).toBe(Math.floor(total / joined.length));
        // A member leaves: everybody else keeps everything they had.
        if (owning.length > 1) {
          const leaver = pick % owning.length;
          const left = owning.filter((_, i) => i !== leaver);
          const afterLeave = stickyAssignor.assign(left, pc);
          for (const m of left) {
            const now = new Set(afterLeave.get(m.memberId)!.map(tpKey));
            for (const tp of first.get(m.memberId)!) expect(now.has(tpKey(tp))).toBe(true);
          }
          checkExactlyOnce(left, pc, afterLeave);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('cooperative-sticky never hands over a partition its owner still holds; the follow-up round completes the move', () => {
    fc.assert(
      fc.property(uniformMembersArb, countsArb, fc.integer({ min: 1, max: 3 }), (members, pc, joiners) => {
        const first = cooperativeStickyAssignor.assign(members, pc);
        const owning = members.map((m) => ({ ...m, ownedPartitions: first.get(m.memberId)!, generationId: 1 }));
        const newcomers = Array.from({ length: joiners }, (_, i) => member(`zz-${i}`, members[0]!.topics, [], -1));
        const round1 = cooperativeStickyAssignor.assign([...owning, ...newcomers], pc);
        const ownerOf = new Map<string, string>();
        for (const m of owning) for (const tp of m.ownedPartitions) ownerOf.set(tpKey(tp), m.memberId);
        for (const [id, tps] of round1) {
          for (const tp of tps) {
            const o = ownerOf.get(tpKey(tp));
            expect(o === undefined || o === id).toBe(true);
          }
        }
        // Existing members only give partitions up (the rest they keep consuming), and at most down to their fair share.
        const total = expectedPartitions(members, pc).length;
        const floor = Math.floor(total / (members.length + joiners));
        for (const m of owning) {
          const owned = new Set(m.ownedPartitions.map(tpKey));
          const kept = round1.get(m.memberId)!;
          for (const tp of kept) expect(owned.has(tpKey(tp))).toBe(true);
          expect(kept.length).toBeGreaterThanOrEqual(Math.min(floor, owned.size));
        }
        // Round 2: everybody owns what round 1 gave them (revoked partitions released).
        const all = [...owning, ...newcomers].map((m) => ({ ...m, ownedPartitions: round1.get(m.memberId)!, generationId: 2 }));
        const round2 = cooperativeStickyAssignor.assign(all, pc);
        checkExactlyOnce(all, pc, round2);
        expect(spread(sizes(all, round2))).toBeLessThanOrEqual(1);
      }),
      { numRuns: 300 },
    );
  });

  it('resolves names, rejects unknown or repeated ones, and picks the protocol', () => {
    expect(resolveAssignors(['range', 'cooperative-sticky']).map((a) => a.name)).toEqual(['range', 'cooperative-sticky']);
    expect(() => resolveAssignors(['fair'])).toThrow(/unknown partition assignor "fair"/);
    expect(() => resolveAssignors(['range', 'range'])).toThrow(/listed twice/);
    expect(() => resolveAssignors([])).toThrow(/at least one/);
    expect(rebalanceProtocolOf([BUILTIN_ASSIGNORS['cooperative-sticky']!])).toBe('cooperative');
    expect(rebalanceProtocolOf([BUILTIN_ASSIGNORS['cooperative-sticky']!, rangeAssignor])).toBe('eager');
  });
});
