export { QuotaManager, type QuotaSource, type QuotaManagerComponents } from './quota-manager.js';
export { ConnectionQuotas } from './connection-limits.js';
export { quotaHandlers, quotaRecorder, quotaUser, type QuotaRecorder } from './quota-handlers.js';
export { parseQuotaOptions, DEFAULT_MAX_CONNECTIONS, DEFAULT_QUOTA_WINDOW_NUM, DEFAULT_QUOTA_WINDOW_SIZE_SECONDS, type QuotaOptions } from './options.js';
export { QuotaBucket } from './token-bucket.js';
export {
  DEFAULT_ENTITY,
  MAX_QUOTA_ALTERATIONS,
  MAX_QUOTA_VALUE,
  QUOTA_KEYS,
  entityKey,
  entityName,
  parseQuotaAlteration,
  parseQuotaAlterations,
  parseQuotaEntity,
  resolveQuota,
  type ClientQuota,
  type QuotaAlteration,
  type QuotaEntity,
  type QuotaKey,
  type QuotaValues,
  type ResolvedQuota,
} from './entity.js';
