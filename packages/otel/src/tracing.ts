/**
 * Spans for mq, after OpenTelemetry's messaging semantic conventions: a PRODUCER span `publish <topic>` around each
 * send, whose context goes into the record's headers; a CONSUMER span `process <topic>` around each handled record,
 * a child of the context the record carries (so one trace runs from the producer through mq to the consumer).
 */
import { context, propagation, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { EachMessagePayload, Producer, ProducerRecord, RecordMetadata } from '@mq/client';
import { headerList, headerSetter, recordGetter } from './carrier.js';

export const INSTRUMENTATION_NAME = '@mq/otel';
export const INSTRUMENTATION_VERSION = '0.1.0';

export interface TracingOptions {
  /** Default: the global tracer provider's tracer for @mq/otel. */
  tracer?: Tracer;
}

function tracerOf(options: TracingOptions): Tracer {
  return options.tracer ?? trace.getTracer(INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION);
}

function fail(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

/** The send and sendBatch of a producer, traced. */
export interface TracedProducer {
  send(topic: string, record: ProducerRecord): Promise<RecordMetadata>;
  sendBatch(topic: string, records: readonly ProducerRecord[]): Promise<RecordMetadata[]>;
}

/**
 * Wraps a producer: each record gets a `publish <topic>` span (its partition and offset once acknowledged) and
 * carries that span's context in its headers. A batch gets one span per record, all ended at the batch's answer.
 */
export function traceProducer(producer: Pick<Producer, 'send' | 'sendBatch'>, options: TracingOptions = {}): TracedProducer {
  const tracer = tracerOf(options);
  const start = (topic: string, record: ProducerRecord): [Span, ProducerRecord] => {
    const span = tracer.startSpan(`publish ${topic}`, {
      kind: SpanKind.PRODUCER,
      attributes: { 'messaging.system': 'mq', 'messaging.operation.type': 'publish', 'messaging.destination.name': topic },
    });
    const headers = headerList(record);
    propagation.inject(trace.setSpan(context.active(), span), headers, headerSetter);
    return [span, { ...record, headers }];
  };
  const acked = (span: Span, m: RecordMetadata) => {
    span.setAttributes({ 'messaging.destination.partition.id': String(m.partition), 'messaging.mq.offset': m.offset });
    span.end();
  };
  return {
    async send(topic, record) {
      const [span, traced] = start(topic, record);
      try {
        const m = await producer.send(topic, traced);
        acked(span, m);
        return m;
      } catch (err) {
        fail(span, err);
        span.end();
        throw err;
      }
    },
    async sendBatch(topic, records) {
      const started = records.map((r) => start(topic, r));
      try {
        const ms = await producer.sendBatch(topic, started.map(([, r]) => r));
        ms.forEach((m, i) => acked(started[i]![0], m));
        return ms;
      } catch (err) {
        for (const [span] of started) {
          fail(span, err);
          span.end();
        }
        throw err;
      }
    },
  };
}

/**
 * Wraps an eachMessage handler: each record is handled inside a `process <topic>` span whose parent is the
 * context its headers carry (none: a new trace), with the handler's own spans as children.
 */
export function traceEachMessage(handler: (payload: EachMessagePayload) => Promise<void> | void, options: TracingOptions = {}): (payload: EachMessagePayload) => Promise<void> {
  const tracer = tracerOf(options);
  return async (payload) => {
    const parent = propagation.extract(context.active(), payload.message, recordGetter);
    const span = tracer.startSpan(
      `process ${payload.topic}`,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          'messaging.system': 'mq',
          'messaging.operation.type': 'process',
          'messaging.destination.name': payload.topic,
          'messaging.destination.partition.id': String(payload.partition),
          'messaging.mq.offset': payload.message.offset,
        },
      },
      parent,
    );
    try {
      await context.with(trace.setSpan(parent, span), () => handler(payload));
    } catch (err) {
      fail(span, err);
      throw err;
    } finally {
      span.end();
    }
  };
}
