/**
 * AlterClientQuotas, DescribeClientQuotas: the client quotas of the metadata
 * log (quota/), changed through the controller and answered once the change
 * is applied here. An alteration request is checked whole before anything is
 * submitted: one bad entity, key or value refuses it all with
 * INVALID_REQUEST, and nothing changes.
 */
import type { mq } from '@mq/protocol/wire';
import { entityKey, parseQuotaAlterations, type ClientQuota, type QuotaEntity, type QuotaKey } from '../quota/entity.js';
import { applied, type HandlerDeps } from './deps.js';
import type { Handler } from './types.js';

const wireEntity = (e: QuotaEntity): mq.QuotaEntity.$Properties => ({ user: e.user ?? '', clientId: e.clientId ?? '' });

export function alterClientQuotas(d: HandlerDeps): Handler<'alterClientQuotas'> {
  const md = d.controller.metadata;
  return async (req, ctx) => {
    const raw = (req.alterations ?? []).map((a) => {
      const set: Record<string, unknown> = {};
      const remove: unknown[] = [];
      for (const op of a.ops ?? []) {
        if (op.remove) remove.push(op.key ?? '');
        else set[op.key ?? ''] = op.value;
      }
      return { entity: { user: a.entity?.user ?? '', clientId: a.entity?.clientId ?? '' }, set, remove };
    });
    const alterations = parseQuotaAlterations(raw);
    if (!req.validateOnly) {
      await d.controller.submit({ type: 'alterClientQuotas', alterations });
      // Answered once this broker holds what was asked (another alteration applied first is not this one).
      const done = () =>
        alterations.every((a) => {
          const values = md.quotaValues(entityKey(a.entity)) ?? {};
          return Object.entries(a.set).every(([k, v]) => values[k as QuotaKey] === v) && a.remove.every((k) => values[k] === undefined);
        });
      await applied(d, done);
      ctx.logger.info({ audit: true, alterations, principal: ctx.connection.session?.principal }, 'client quotas altered');
    }
    return { results: alterations.map((a) => ({ entity: wireEntity(a.entity), errorCode: 0 })) };
  };
}

export function describeClientQuotas(d: HandlerDeps): Handler<'describeClientQuotas'> {
  const md = d.controller.metadata;
  return async (req) => {
    const user = req.user ?? '';
    const clientId = req.clientId ?? '';
    const match = (q: ClientQuota) => (user === '' || q.entity.user === user) && (clientId === '' || q.entity.clientId === clientId);
    return {
      errorCode: 0,
      entries: md
        .clientQuotas()
        .filter(match)
        .map((q) => ({ entity: wireEntity(q.entity), values: Object.entries(q.values).map(([key, value]) => ({ key, value })) })),
    };
  };
}
