import fc from 'fast-check';
import vm from 'node:vm';
import {
  decodeGroupValue,
  decodeKey,
  decodeOffsetValue,
  encodeGroupValue,
  encodeKey,
  encodeOffsetValue,
  partitionForGroup,
} from './offsets-schema.js';

describe('__consumer_offsets schema', () => {
  it('round-trips keys and offset values', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.nat(100_000), fc.nat(2 ** 52), fc.integer({ min: -1, max: 2 ** 31 - 1 }), fc.string(), (group, topic, partition, offset, leaderEpoch, metadata) => {
        expect(decodeKey(encodeKey({ type: 'offset', group, topic, partition }))).toEqual({ type: 'offset', group, topic, partition });
        expect(decodeKey(encodeKey({ type: 'group', group }))).toEqual({ type: 'group', group });
        const v = { offset, leaderEpoch, metadata, commitTimestamp: 1_700_000_000_000 };
        expect(decodeOffsetValue(encodeOffsetValue(v))).toEqual(v);
        // Version 2 carries the topic id the offset was committed under.
        const withId = { ...v, topicId: `${topic}-id` };
        expect(decodeOffsetValue(encodeOffsetValue(withId))).toEqual(withId);
        expect(encodeOffsetValue(withId).readInt16BE(0)).toBe(2);
        expect(encodeOffsetValue(v).readInt16BE(0)).toBe(1);
      }),
    );
  });

  it('round-trips group metadata with members', () => {
    const v = {
      protocolType: 'consumer',
      generationId: 7,
      protocolName: 'cooperative-sticky',
      leaderId: 'a-1',
      stateTimestamp: 123,
      members: [
        {
          memberId: 'a-1',
          groupInstanceId: 'host-a',
          clientId: 'a',
          clientHost: '/10.0.0.1',
          rebalanceTimeoutMs: 60_000,
          sessionTimeoutMs: 45_000,
          subscription: Buffer.from([1, 2, 3]),
          assignment: Buffer.from([4]),
        },
        { memberId: 'b-2', groupInstanceId: null, clientId: 'b', clientHost: '', rebalanceTimeoutMs: 1, sessionTimeoutMs: 2, subscription: Buffer.alloc(0), assignment: Buffer.alloc(0) },
      ],
    };
    expect(decodeGroupValue(encodeGroupValue(v))).toEqual(v);
    expect(decodeGroupValue(encodeGroupValue({ ...v, protocolType: null, protocolName: null, leaderId: null, members: [] }))).toMatchObject({ protocolType: null, members: [] });
  });

  it('rejects truncated or trailing bytes with CORRUPT_MESSAGE and skips unknown key types', () => {
    const value = encodeOffsetValue({ offset: 1, leaderEpoch: 0, metadata: 'm', commitTimestamp: 2 });
    expect(() => decodeOffsetValue(value.subarray(0, value.length - 1))).toThrow(expect.objectContaining({ code: 'CORRUPT_MESSAGE' }));
    expect(() => decodeOffsetValue(Buffer.concat([value, Buffer.from([0])]))).toThrow(expect.objectContaining({ code: 'CORRUPT_MESSAGE' }));
    expect(() => decodeOffsetValue(Buffer.from([0, 9]))).toThrow(/version 9/);
    expect(decodeKey(Buffer.from([0, 99, 0, 0]))).toBeNull();
  });

  it('maps a group to a partition the way Kafka does (Java String.hashCode)', () => {
    expect(partitionForGroup('hello', 50)).toBe(99162322 % 50);
    // "polygenelubricants".hashCode() is Integer.MIN_VALUE; Kafka's abs maps it to 0.
    expect(partitionForGroup('polygenelubricants', 50)).toBe(0);
    fc.assert(fc.property(fc.string(), fc.integer({ min: 1, max: 200 }), (g, n) => {
      const p = partitionForGroup(g, n);
      expect(p).toBeGreaterThanOrEqual(0);
      expect(p).toBeLessThan(n);
    }));
    // The reference: Java's hashCode with 32-bit multiplication.
    const java = (s: string) => {
      let h = 0;
      for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
      return h;
    };
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 500 }), fc.integer({ min: 1, max: 200 }), (g, n) => {
      expect(partitionForGroup(g, n)).toBe((java(g) & 0x7fffffff) % n);
    }));
  });

  it('hashes a long group id without a global lookup per character (a Kafka DescribeGroups of 20,000 ids of 410 characters took 5 s in a test broker)', () => {
    // Under a vm context (as in jest) every read of a global such as `Math` goes through the context's interceptor.
    let reads = 0;
    const sandbox: Record<string, unknown> = {};
    for (const name of Object.getOwnPropertyNames(globalThis)) {
      Object.defineProperty(sandbox, name, {
        get: () => {
          reads++;
          return (globalThis as Record<string, unknown>)[name];
        },
      });
    }
    const inContext = vm.runInNewContext(`(${partitionForGroup.toString()})`, sandbox) as typeof partitionForGroup;
    expect(inContext('g'.repeat(410), 50)).toBe(partitionForGroup('g'.repeat(410), 50));
    expect(reads).toBeLessThan(5);
  });
});
