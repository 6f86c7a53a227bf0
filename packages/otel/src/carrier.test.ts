import { propagation, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { ConsumerRecord } from '@mq/client';
import { headerList, headerSetter, recordGetter } from './carrier.js';

describe('record headers as a propagation carrier', () => {
  beforeAll(() => propagation.setGlobalPropagator(new W3CTraceContextPropagator()));
  afterAll(() => propagation.disable());

  it('injects traceparent into a record\'s headers (object or list form, replacing an old one) and extracts it back', () => {
    const spanContext = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED };
    const headers = headerList({ value: 'v', headers: { source: 'web', traceparent: 'stale' } });
    propagation.inject(trace.setSpanContext(ROOT_CONTEXT, spanContext), headers, headerSetter);
    expect(headers).toEqual([
      { key: 'source', value: 'web' },
      { key: 'traceparent', value: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    ]);
    const record: ConsumerRecord = {
      topic: 't',
      partition: 0,
      offset: 1,
      timestamp: 0,
      key: null,
      value: null,
      headers: headers.map((h) => ({ key: h.key, value: h.value === null ? null : Buffer.from(h.value as string) })),
    };
    expect(recordGetter.keys(record)).toEqual(['source', 'traceparent']);
    const extracted = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, record, recordGetter));
    expect(extracted).toMatchObject({ traceId: spanContext.traceId, spanId: spanContext.spanId, isRemote: true });
  });

  it('a record without trace headers extracts no span context; a null header value is absent', () => {
    const record: ConsumerRecord = { topic: 't', partition: 0, offset: 0, timestamp: 0, key: null, value: null, headers: [{ key: 'traceparent', value: null }] };
    expect(recordGetter.get(record, 'traceparent')).toBeUndefined();
    expect(trace.getSpanContext(propagation.extract(ROOT_CONTEXT, record, recordGetter))).toBeUndefined();
  });
});
