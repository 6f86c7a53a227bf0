/**
 * Record headers as an OpenTelemetry propagation carrier: the W3C `traceparent` and `tracestate` (or whatever
 * propagator the application registered) travel as record headers, as Kafka instrumentations carry them.
 */
import type { TextMapGetter, TextMapSetter } from '@opentelemetry/api';
import type { ConsumerRecord, ProducerRecord } from '@mq/client';

type HeaderList = Array<{ key: string; value: Buffer | Uint8Array | string | null }>;

/** A producer record's headers as a list (the object form becomes one), so propagation headers can be added. */
export function headerList(record: ProducerRecord): HeaderList {
  const h = record.headers;
  if (!h) return [];
  if (Array.isArray(h)) return [...h];
  return Object.entries(h).map(([key, value]) => ({ key, value: value ?? null }));
}

/** Writes propagation fields into a header list, replacing an earlier value of the same key. */
export const headerSetter: TextMapSetter<HeaderList> = {
  set(carrier, key, value) {
    const i = carrier.findIndex((h) => h.key === key);
    if (i >= 0) carrier.splice(i, 1);
    carrier.push({ key, value });
  },
};

/** Reads propagation fields from a consumed record's headers (the last value of a key wins). */
export const recordGetter: TextMapGetter<ConsumerRecord> = {
  keys(record) {
    return [...new Set(record.headers.map((h) => h.key))];
  },
  get(record, key) {
    for (let i = record.headers.length - 1; i >= 0; i--) {
      const h = record.headers[i]!;
      if (h.key === key) return h.value === null ? undefined : h.value.toString('utf8');
    }
    return undefined;
  },
};
