/**
 * AlterClientQuotas and DescribeClientQuotas (KIP-546) on the Kafka door:
 * Kafka's entity lists ("user" / "client-id", a null name for the default)
 * to and from the core's client quota APIs (handlers/client-quotas.ts), which
 * check and store them. The core refuses a bad alteration whole, so every
 * entry of a refused request carries its error.
 */
import { MqError } from '@mq/protocol/errors';
import {
  AlterClientQuotasApi,
  DescribeClientQuotasApi,
  type AlterClientQuotasRequest,
  type AlterClientQuotasResponse,
  type DescribeClientQuotasRequest,
  type DescribeClientQuotasResponse,
} from '@mq/kafka-protocol/messages';
import type { KafkaApi } from '../types.js';
import { DEFAULT_ENTITY } from '../../quota/entity.js';
import { askCore } from './call-core.js';


type KafkaEntity = ReadonlyArray<{ entityType: string; entityName: string | null }>;

/** Kafka's entity list as the core's entity (user, clientId; `<default>` for a null name). */
function coreEntity(list: KafkaEntity): { user: string; clientId: string } {
  let user = '';
  let clientId = '';
  for (const e of list) {
    const name = e.entityName ?? DEFAULT_ENTITY;
    if (e.entityType === 'user' && user === '') user = name;
    else if (e.entityType === 'client-id' && clientId === '') clientId = name;
    else throw new MqError('INVALID_REQUEST', `quota entity type ${JSON.stringify(e.entityType.slice(0, 40))} is unknown or given twice (user and client-id, once each)`);
  }
  return { user, clientId };
}

function kafkaEntity(e: { user?: string | null; clientId?: string | null }): Array<{ entityType: string; entityName: string | null }> {
  const out: Array<{ entityType: string; entityName: string | null }> = [];
  if (e.user) out.push({ entityType: 'user', entityName: e.user === DEFAULT_ENTITY ? null : e.user });
  if (e.clientId) out.push({ entityType: 'client-id', entityName: e.clientId === DEFAULT_ENTITY ? null : e.clientId });
  return out;
}

export const alterClientQuotas: KafkaApi<AlterClientQuotasRequest, AlterClientQuotasResponse> = {
  api: AlterClientQuotasApi,
  needs: ['alterClientQuotas'],
  async handle(req, call) {
    const alterations = req.entries.map((e) => ({ entity: coreEntity(e.entity), ops: e.ops.map((o) => ({ key: o.key, value: o.value, remove: o.remove })) }));
    await askCore(call, 'alterClientQuotas', { alterations, validateOnly: req.validateOnly });
    return { entries: req.entries.map((e) => ({ errorCode: 0, errorMessage: null, entity: e.entity })) };
  },
  refused: (req, code, message) => ({ entries: req.entries.map((e) => ({ errorCode: code, errorMessage: message, entity: e.entity })) }),
};

export const describeClientQuotas: KafkaApi<DescribeClientQuotasRequest, DescribeClientQuotasResponse> = {
  api: DescribeClientQuotasApi,
  needs: ['describeClientQuotas'],
  async handle(req, call) {
    // Kafka's null match is the default entity (exact) or unused (default, specified); the core checks the filter.
    const components = req.components.map((c) => ({ entityType: c.entityType, matchType: c.matchType, match: c.match ?? '' }));
    const r = await askCore(call, 'describeClientQuotas', { components, strict: req.strict });
    return {
      errorCode: 0,
      errorMessage: null,
      entries: (r.entries ?? []).map((q) => ({ entity: kafkaEntity(q.entity ?? {}), values: (q.values ?? []).map((v) => ({ key: v.key ?? '', value: v.value ?? 0 })) })),
    };
  },
  refused: (_req, code, message) => ({ errorCode: code, errorMessage: message, entries: null }),
};
