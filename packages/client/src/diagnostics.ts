/**
 * The client's `node:diagnostics_channel` channels, for tracers and metrics
 * that want to see what the client does without it depending on them
 * (undici's and Node's own http do the same). Subscribe by name:
 *
 *   import diagnostics_channel from 'node:diagnostics_channel';
 *   diagnostics_channel.subscribe('mq:client:request:end', (m) => histogram.observe(m.durationMs));
 *
 * Messages are published only while a channel has subscribers, so an
 * unobserved client pays one property read per event. Browsers have no
 * diagnostics_channel: there the same channels live in the page, and
 * `subscribeDiagnostics(name, fn)` (exported here, Node's subscribe in Node)
 * works in both.
 */
import { diagnosticsChannel, type DiagnosticsChannel } from '@mq/protocol/platform';

export { subscribeDiagnostics, unsubscribeDiagnostics, type DiagnosticsListener } from '@mq/protocol/platform';

export const DIAGNOSTICS_CHANNELS = {
  requestStart: 'mq:client:request:start',
  requestEnd: 'mq:client:request:end',
  produceBatch: 'mq:client:produce:batch',
  fetch: 'mq:client:fetch',
  rebalance: 'mq:client:rebalance',
  retry: 'mq:client:retry',
} as const;

/** A request written to a broker. */
export interface RequestStartMessage {
  broker: string;
  api: string;
  apiVersion: number;
  correlationId: number;
  clientId: string;
}

/** A request's answer arrived, or the request failed (timed out, aborted, connection lost, error from the broker). */
export interface RequestEndMessage {
  broker: string;
  api: string;
  correlationId: number;
  durationMs: number;
  error?: unknown;
}

/** A produced batch is done: acknowledged (with its base offset), or failed for good after `attempts`. */
export interface ProduceBatchMessage {
  topic: string;
  partition: number;
  records: number;
  bytes: number;
  attempts: number;
  /** -1 with acks=0. */
  baseOffset?: number;
  error?: unknown;
}

/** One fetch request's answer (or failure), per broker. */
export interface FetchMessage {
  broker: number;
  durationMs: number;
  partitions: Array<{ topic: string; partition: number; fetchOffset: number; bytes: number; highWatermark: number; error?: string }>;
  error?: unknown;
}

/** A group consumer's partitions changed. */
export interface RebalanceMessage {
  groupId: string;
  event: 'assigned' | 'revoked' | 'lost';
  partitions: Array<{ topic: string; partition: number }>;
}

/** Something failed and is tried again after `delayMs`. */
export interface RetryMessage {
  kind: 'request' | 'produce';
  /** The request's API (`kind: 'request'`). */
  api?: string;
  topic?: string;
  partition?: number;
  /** Attempts made so far (1 after the first failure). */
  attempt: number;
  delayMs: number;
  error: unknown;
}

export const channels: Record<keyof typeof DIAGNOSTICS_CHANNELS, DiagnosticsChannel> = {
  requestStart: diagnosticsChannel(DIAGNOSTICS_CHANNELS.requestStart),
  requestEnd: diagnosticsChannel(DIAGNOSTICS_CHANNELS.requestEnd),
  produceBatch: diagnosticsChannel(DIAGNOSTICS_CHANNELS.produceBatch),
  fetch: diagnosticsChannel(DIAGNOSTICS_CHANNELS.fetch),
  rebalance: diagnosticsChannel(DIAGNOSTICS_CHANNELS.rebalance),
  retry: diagnosticsChannel(DIAGNOSTICS_CHANNELS.retry),
};
