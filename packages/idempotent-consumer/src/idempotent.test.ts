import type { ConsumerRecord } from '@mq/client';
import { idempotent, keyFromHeader, MemoryStore, offsetKey, recordKey } from './index.js';

function record(offset: number, headers: Array<{ key: string; value: Buffer | null }> = [], key: string | null = null): ConsumerRecord {
  return { topic: 'payments', partition: 2, offset, timestamp: 0, key: key === null ? null : Buffer.from(key), value: Buffer.from('v'), headers };
}

describe('idempotent()', () => {
  it('skips a redelivered record (offset key) and an upstream duplicate (header key)', async () => {
    const seen: string[] = [];
    const outcomes: string[] = [];
    const byOffset = idempotent({ store: new MemoryStore(), onOutcome: (o) => outcomes.push(o) }, ({ key }) => void seen.push(key));
    await byOffset({ topic: 'payments', partition: 2, message: record(7) });
    await byOffset({ topic: 'payments', partition: 2, message: record(7) });
    expect(seen).toEqual(['payments/2/7']);
    expect(outcomes).toEqual(['processed', 'duplicate']);

    const byHeader = idempotent({ store: new MemoryStore(), key: keyFromHeader('payment-id') }, ({ key }) => void seen.push(key));
    await byHeader({ topic: 'payments', partition: 2, message: record(8, [{ key: 'payment-id', value: Buffer.from('pay-1') }]) });
    await byHeader({ topic: 'payments', partition: 2, message: record(9, [{ key: 'payment-id', value: Buffer.from('pay-1') }]) });
    expect(seen).toEqual(['payments/2/7', 'pay-1']);
  });

  it('a record without the key it needs is INVALID_RECORD, naming the record', async () => {
    const h = idempotent({ store: new MemoryStore(), key: keyFromHeader('payment-id') }, () => undefined);
    await expect(h({ topic: 'payments', partition: 2, message: record(3) })).rejects.toMatchObject({ code: 'INVALID_RECORD', message: expect.stringContaining('payments/2@3') });
    expect(() => recordKey(record(4))).toThrow(/no key/);
    expect(recordKey(record(4, [], 'k'))).toBe('k');
    expect(offsetKey(record(5))).toBe('payments/2/5');
    const long = idempotent({ store: new MemoryStore(), key: () => 'x'.repeat(513) }, () => undefined);
    await expect(long({ topic: 'payments', partition: 2, message: record(6) })).rejects.toMatchObject({ code: 'INVALID_RECORD' });
  });
});
