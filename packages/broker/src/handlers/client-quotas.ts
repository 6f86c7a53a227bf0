/**
 * AlterClientQuotas, DescribeClientQuotas: the client quotas of the metadata
 * log (quota/), changed through the controller and answered once the change
 * is applied here. An alteration request is checked whole before anything is
 * submitted: one bad entity, key or value refuses it all with
 * INVALID_REQUEST, and nothing changes.
 */
import { MqError } from '@mq/protocol/errors';
import type { mq } from '@mq/protocol/wire';
import { DEFAULT_ENTITY, entityKey, parseQuotaAlterations, type ClientQuota, type QuotaEntity, type QuotaKey } from '../quota/entity.js';
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

const ENTITY_TYPES = new Set(['user', 'client-id']);
const Match = { EXACT: 0, DEFAULT: 1, SPECIFIED: 2 } as const;

/**
 * The entity filter of a DescribeClientQuotas request (KIP-546): its
 * components, or the user / client id shorthand (an empty field matches
 * anything), checked once here for every door.
 */
export function quotaFilter(req: mq.DescribeClientQuotasRequest.$Properties): (e: QuotaEntity) => boolean {
  const components = req.components ?? [];
  if (components.length === 0) {
    const user = req.user ?? '';
    const clientId = req.clientId ?? '';
    return (e) => (user === '' || e.user === user) && (clientId === '' || e.clientId === clientId);
  }
  const seen = new Set<string>();
  for (const c of components) {
    const type = c.entityType ?? '';
    if (!ENTITY_TYPES.has(type)) throw new MqError('INVALID_REQUEST', `quota entity type ${JSON.stringify(type.slice(0, 40))} is unknown (user, client-id)`);
    if (seen.has(type)) throw new MqError('INVALID_REQUEST', `quota entity type ${type} is named twice in the filter`);
    seen.add(type);
    const m = c.matchType ?? Match.EXACT;
    if (m !== Match.EXACT && m !== Match.DEFAULT && m !== Match.SPECIFIED) throw new MqError('INVALID_REQUEST', `quota match type ${m} is unknown (0 exact, 1 default, 2 any specified)`);
  }
  const partOf = (e: QuotaEntity, type: string) => (type === 'user' ? e.user : e.clientId) || undefined;
  return (e) => {
    for (const c of components) {
      const v = partOf(e, c.entityType ?? '');
      if (v === undefined) return false;
      const m = c.matchType ?? Match.EXACT;
      if (m === Match.EXACT && v !== (c.match || DEFAULT_ENTITY)) return false;
      if (m === Match.DEFAULT && v !== DEFAULT_ENTITY) return false;
      if (m === Match.SPECIFIED && v === DEFAULT_ENTITY) return false;
    }
    // Strict: the entity has no part beyond the components named.
    return !req.strict || [...ENTITY_TYPES].every((type) => partOf(e, type) === undefined || seen.has(type));
  };
}

export function describeClientQuotas(d: HandlerDeps): Handler<'describeClientQuotas'> {
  const md = d.controller.metadata;
  return async (req) => {
    const match = quotaFilter(req);
    return {
      errorCode: 0,
      entries: md
        .clientQuotas()
        .filter((q: ClientQuota) => match(q.entity))
        .map((q) => ({ entity: wireEntity(q.entity), values: Object.entries(q.values).map(([key, value]) => ({ key, value })) })),
    };
  };
}
