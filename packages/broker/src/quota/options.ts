/** The quota settings of a broker (Kafka's names), parsed once from its configuration. */
import { MqError } from '@mq/protocol/errors';

export interface QuotaOptions {
  /** Samples a quota's rate is measured over (quota.window.num). */
  samples: number;
  /** Length of one sample, in ms (quota.window.size.seconds). */
  sampleMs: number;
  /** Connections one client IP may hold on this broker (max.connections.per.ip). */
  maxConnectionsPerIp: number;
  /** Connections one authenticated principal may hold on this broker (max.connections.per.principal). */
  maxConnectionsPerPrincipal: number;
}

export const DEFAULT_QUOTA_WINDOW_NUM = 11;
export const DEFAULT_QUOTA_WINDOW_SIZE_SECONDS = 1;
/** Kafka's default: no limit (2^31 - 1). */
export const DEFAULT_MAX_CONNECTIONS = 2147483647;

export function parseQuotaOptions(config: { int(name: string): number }): QuotaOptions {
  const samples = config.int('quota.window.num');
  const seconds = config.int('quota.window.size.seconds');
  if (samples < 2) throw new MqError('INVALID_CONFIG', `quota.window.num must be at least 2, got ${samples}`);
  if (seconds < 1) throw new MqError('INVALID_CONFIG', `quota.window.size.seconds must be at least 1, got ${seconds}`);
  return {
    samples,
    sampleMs: seconds * 1000,
    maxConnectionsPerIp: config.int('max.connections.per.ip'),
    maxConnectionsPerPrincipal: config.int('max.connections.per.principal'),
  };
}
