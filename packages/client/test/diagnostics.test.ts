/**
 * The client's node:diagnostics_channel events (src/diagnostics.ts), seen by
 * a subscriber the way a tracer or a metrics library would see them, with the
 * client running against the fake broker.
 */
import diagnostics_channel from 'node:diagnostics_channel';
import { freePort } from '../../../tools/free-port.mjs';
import { DIAGNOSTICS_CHANNELS } from '../src/diagnostics.js';
import { MqClient } from '../src/index.js';
import { startFakeBroker, type FakeBroker } from './fake-broker.js';

let broker: FakeBroker;
const seen: Record<string, unknown[]> = {};
const subscribers = Object.values(DIAGNOSTICS_CHANNELS).map((name) => {
  const fn = (message: unknown) => void (seen[name] ??= []).push(message);
  return { name, fn };
});

beforeEach(async () => {
  broker = await startFakeBroker({ topics: { one: 2 } });
  for (const k of Object.keys(seen)) delete seen[k];
  for (const { name, fn } of subscribers) diagnostics_channel.subscribe(name, fn);
});
afterEach(async () => {
  for (const { name, fn } of subscribers) diagnostics_channel.unsubscribe(name, fn);
  await broker.close();
});

describe('diagnostics channels', () => {
  it('requests: a start and an end per request, matched by correlation id, with the duration', async () => {
    const client = new MqClient({ bootstrap: broker.address });
    await client.connect();
    const starts = seen[DIAGNOSTICS_CHANNELS.requestStart] as Array<{ api: string; correlationId: number; broker: string; apiVersion: number }>;
    const ends = seen[DIAGNOSTICS_CHANNELS.requestEnd] as Array<{ api: string; correlationId: number; durationMs: number; error?: unknown }>;
    expect(starts.map((s) => s.api)).toEqual(['handshake', 'metadata']);
    expect(starts[0]).toMatchObject({ broker: broker.address, apiVersion: 0, clientId: 'mq-client' });
    expect(ends.map((e) => [e.api, e.correlationId])).toEqual(starts.map((s) => [s.api, s.correlationId]));
    expect(ends.every((e) => e.durationMs >= 0 && e.error === undefined)).toBe(true);
    await client.close();
  });

  it('produce batches: one event per acknowledged batch with its base offset and size; retries with their delay', async () => {
    const client = new MqClient({ bootstrap: broker.address, retry: { initialDelayMs: 5, maxDelayMs: 20 } });
    const producer = client.producer({ lingerMs: 0 });
    await producer.sendBatch('one', Array.from({ length: 5 }, (_, i) => ({ value: `v${i}`, partition: 0 })));
    broker.failNext('produce', 'NOT_LEADER', 1);
    await producer.send('one', { value: 'again', partition: 1 });
    const batches = seen[DIAGNOSTICS_CHANNELS.produceBatch] as Array<Record<string, unknown>>;
    expect(batches).toEqual([
      expect.objectContaining({ topic: 'one', partition: 0, records: 5, baseOffset: 0, attempts: 1 }),
      expect.objectContaining({ topic: 'one', partition: 1, records: 1, baseOffset: 0, attempts: 2 }),
    ]);
    expect(batches[0]!.bytes).toBeGreaterThan(61);
    expect(seen[DIAGNOSTICS_CHANNELS.retry]).toEqual([
      expect.objectContaining({ kind: 'produce', topic: 'one', partition: 1, attempt: 1, error: expect.objectContaining({ code: 'NOT_LEADER' }) }),
    ]);
    const ends = seen[DIAGNOSTICS_CHANNELS.requestEnd] as Array<{ api: string; error?: { code?: string } }>;
    expect(ends.filter((e) => e.api === 'produce').map((e) => e.error?.code ?? 'ok')).toEqual(['ok', 'ok', 'ok']);
    await client.close();
  });

  it('a produce batch that fails for good is published with its error', async () => {
    const client = new MqClient({ bootstrap: broker.address });
    const producer = client.producer({ lingerMs: 0, retries: 0 });
    broker.failNext('produce', 'NOT_LEADER', 1);
    await expect(producer.send('one', { value: 'x', partition: 0 })).rejects.toMatchObject({ code: 'NOT_LEADER' });
    expect(seen[DIAGNOSTICS_CHANNELS.produceBatch]).toEqual([
      expect.objectContaining({ topic: 'one', partition: 0, records: 1, error: expect.objectContaining({ code: 'NOT_LEADER' }) }),
    ]);
    await client.close();
  });

  it('request retries: the API, the attempt and the delay', async () => {
    const nobody = `127.0.0.1:${await freePort()}`;
    const client = new MqClient({ bootstrap: nobody, retry: { initialDelayMs: 5, maxDelayMs: 20, retries: 2 } });
    await expect(client.connect()).rejects.toMatchObject({ code: 'CONNECTION_ERROR' });
    const retries = seen[DIAGNOSTICS_CHANNELS.retry] as Array<Record<string, unknown>>;
    expect(retries.map((r) => [r.kind, r.api, r.attempt])).toEqual([
      ['request', 'metadata', 1],
      ['request', 'metadata', 2],
    ]);
    expect(retries.every((r) => typeof r.delayMs === 'number' && (r.error as { code?: string }).code === 'CONNECTION_ERROR')).toBe(true);
    await client.close();
  });

  it('fetches: per broker, the partitions asked for, their bytes and high watermark', async () => {
    const client = new MqClient({ bootstrap: broker.address });
    const producer = client.producer({ lingerMs: 0 });
    await producer.sendBatch('one', Array.from({ length: 3 }, (_, i) => ({ value: `v${i}`, partition: 1 })));
    const consumer = client.consumer({ autoOffsetReset: 'earliest' });
    consumer.assign([{ topic: 'one', partition: 1 }]);
    let n = 0;
    while (n < 3) n += (await consumer.poll(200)).length;
    const fetches = seen[DIAGNOSTICS_CHANNELS.fetch] as Array<{ broker: number; durationMs: number; partitions: Array<Record<string, unknown>> }>;
    const withData = fetches.find((f) => f.partitions.some((p) => (p.bytes as number) > 0));
    expect(withData).toMatchObject({ broker: 1, partitions: [expect.objectContaining({ topic: 'one', partition: 1, fetchOffset: 0, highWatermark: 3 })] });
    expect(withData!.durationMs).toBeGreaterThanOrEqual(0);
    await client.close();
  });

  it('publishes nothing while nobody subscribes', async () => {
    for (const { name, fn } of subscribers) diagnostics_channel.unsubscribe(name, fn);
    const client = new MqClient({ bootstrap: broker.address });
    await client.producer({ lingerMs: 0 }).send('one', { value: 'x' });
    await client.close();
    expect(seen).toEqual({});
    for (const { name, fn } of subscribers) diagnostics_channel.subscribe(name, fn);
  });
});
