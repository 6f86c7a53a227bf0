/**
 * @mq/otel against a real broker: one trace runs from a traced send, through the record's headers (W3C
 * traceparent), to the traced handler of a group consumer and the spans the handler starts.
 */
import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { MqClient } from '@mq/client';
import { traceEachMessage, traceProducer } from '@mq/otel';
import { cleanup, startBroker, uniqueName, type BrokerProcess } from './src/harness.js';

let broker: BrokerProcess;
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer('otel-e2e');

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  broker = await startBroker();
}, 60_000);
afterAll(async () => {
  context.disable();
  propagation.disable();
  await provider.shutdown();
  await cleanup();
});

describe('@mq/otel', () => {
  it('links the publish span, the process span and the handler\'s spans into one trace through record headers', async () => {
    const topic = uniqueName('otel');
    const mq = new MqClient({ bootstrap: broker.bootstrap });
    try {
      await mq.admin().createTopic(topic, { numPartitions: 1 });
      const producer = traceProducer(mq.producer({ acks: 'all' }), { tracer });
      const sent = await producer.send(topic, { key: 'pay-1', value: 'charge 10', headers: { source: 'web' } });
      await producer.sendBatch(topic, [{ value: 'a' }, { value: 'b' }]);

      const consumer = mq.consumer({ groupId: uniqueName('otel-g'), autoOffsetReset: 'earliest' });
      consumer.subscribe([topic]);
      const stop = new AbortController();
      const seenHeaders: string[][] = [];
      await consumer.run({
        eachMessage: traceEachMessage(
          async ({ message }) => {
            seenHeaders.push(message.headers.map((h) => h.key));
            tracer.startActiveSpan('charge', (s) => s.end());
            if (message.offset === 2) stop.abort();
          },
          { tracer },
        ),
        signal: stop.signal,
      });
      await consumer.close();

      const spans = exporter.getFinishedSpans();
      const publish = spans.filter((s) => s.name === `publish ${topic}`);
      const process = spans.filter((s) => s.name === `process ${topic}`);
      const charge = spans.filter((s) => s.name === 'charge');
      expect([publish.length, process.length, charge.length]).toEqual([3, 3, 3]);
      expect(seenHeaders[0]).toEqual(['source', 'traceparent']);
      for (let i = 0; i < 3; i++) {
        const p = publish.find((s) => s.attributes['messaging.mq.offset'] === i)!;
        const c = process.find((s) => s.attributes['messaging.mq.offset'] === i)!;
        expect(p.kind).toBe(SpanKind.PRODUCER);
        expect(c.kind).toBe(SpanKind.CONSUMER);
        expect(c.spanContext().traceId).toBe(p.spanContext().traceId);
        expect(c.parentSpanContext?.spanId).toBe(p.spanContext().spanId);
        const h = charge.find((s) => s.parentSpanContext?.spanId === c.spanContext().spanId);
        expect(h?.spanContext().traceId).toBe(p.spanContext().traceId);
      }
      expect(publish.find((s) => s.attributes['messaging.mq.offset'] === sent.offset)!.attributes).toMatchObject({
        'messaging.system': 'mq',
        'messaging.destination.name': topic,
        'messaging.destination.partition.id': '0',
      });
      expect(trace.getActiveSpan()).toBeUndefined();
    } finally {
      await mq.close({ timeoutMs: 2000 });
    }
  }, 90_000);
});
