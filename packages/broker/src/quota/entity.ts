/**
 * Quota entities and values (Kafka's KIP-55/KIP-546 model) and which one
 * applies to a request. An entity is a user, a client id, or both; either
 * part may be `<default>` (every user, or client id, without a quota of its
 * own). Values: producer_byte_rate and consumer_byte_rate (bytes per second),
 * request_rate (requests per second). Each key is resolved on its own, the
 * most specific entity first (Kafka's order):
 *
 *   user + client id, user + <default> client, user,
 *   <default> user + client id, <default> user + <default> client, <default> user,
 *   client id, <default> client.
 *
 * The rate a quota is measured on (its bucket) is shared by what the matched
 * entity names literally: a quota on user "alice" is one rate for every client
 * of alice; a `<default>` part stands for each actual user (or client id), so
 * each one gets its own rate.
 */
import { MqError } from '@mq/protocol/errors';
import { clientIdProblem, shown } from '../request-limits.js';

export const QUOTA_KEYS = ['producer_byte_rate', 'consumer_byte_rate', 'request_rate'] as const;
export type QuotaKey = (typeof QUOTA_KEYS)[number];
export type QuotaValues = Partial<Record<QuotaKey, number>>;

/** The entity part that stands for every user (or client id) without a quota of its own. */
export const DEFAULT_ENTITY = '<default>';
/** Largest value of any key: 1 TiB/s, or 2^40 requests/s (beyond any real broker; a bigger one is a mistake). */
export const MAX_QUOTA_VALUE = 2 ** 40;
/** The most alterations one AlterClientQuotas request (and metadata command) may carry. */
export const MAX_QUOTA_ALTERATIONS = 1000;
/** A user name, as users are named (controller/commands.ts USER_NAME_PATTERN). */
const USER_NAME = /^[A-Za-z0-9._@+-]{1,128}$/;

export interface QuotaEntity {
  /** A user name (the principal User:<name>) or `<default>`; absent: the entity has no user part. */
  user?: string;
  /** A client id or `<default>`; absent: the entity has no client-id part. */
  clientId?: string;
}

export interface ClientQuota {
  entity: QuotaEntity;
  values: QuotaValues;
}

/** One entity's change: keys set to a value, keys removed. */
export interface QuotaAlteration {
  entity: QuotaEntity;
  set: QuotaValues;
  remove: QuotaKey[];
}

function invalid(message: string): MqError {
  return new MqError('INVALID_REQUEST', message);
}

export function isQuotaKey(k: unknown): k is QuotaKey {
  return typeof k === 'string' && (QUOTA_KEYS as readonly string[]).includes(k);
}

/** The map key of an entity (the metadata state and the resolver look entities up by it). */
export function entityKey(e: QuotaEntity): string {
  return `${e.user === undefined ? '\u0001' : e.user}\u0000${e.clientId === undefined ? '\u0001' : e.clientId}`;
}

/** An entity as users write it: `user=alice,client-id=app`, `user=<default>`. */
export function entityName(e: QuotaEntity): string {
  return [e.user !== undefined ? `user=${e.user}` : '', e.clientId !== undefined ? `client-id=${e.clientId}` : ''].filter((s) => s).join(',');
}

/** Checks an entity from the network (empty strings are absent parts); INVALID_REQUEST when it is not one. */
export function parseQuotaEntity(raw: { user?: unknown; clientId?: unknown } | null | undefined): QuotaEntity {
  const user = raw?.user === undefined || raw.user === null || raw.user === '' ? undefined : raw.user;
  const clientId = raw?.clientId === undefined || raw.clientId === null || raw.clientId === '' ? undefined : raw.clientId;
  if (user === undefined && clientId === undefined) throw invalid('a quota entity needs a user, a client id or both (<default> for every one)');
  if (user !== undefined && (typeof user !== 'string' || (user !== DEFAULT_ENTITY && !USER_NAME.test(user)))) {
    throw invalid(`quota entity user ${JSON.stringify(shown(String(user)))} is not a user name (letters, digits, . _ @ + -; at most 128) or ${DEFAULT_ENTITY}`);
  }
  if (clientId !== undefined) {
    if (typeof clientId !== 'string') throw invalid('quota entity client id must be a string');
    const bad = clientIdProblem(clientId);
    if (bad) throw invalid(`quota entity client id: ${bad.message}`);
  }
  return { ...(user !== undefined ? { user: user as string } : {}), ...(clientId !== undefined ? { clientId: clientId as string } : {}) };
}

/** Checks one value: a known key and a finite number in 1..MAX_QUOTA_VALUE; INVALID_REQUEST otherwise. */
export function parseQuotaValue(key: unknown, value: unknown): [QuotaKey, number] {
  if (!isQuotaKey(key)) throw invalid(`unknown quota key ${JSON.stringify(shown(String(key)))} (known: ${QUOTA_KEYS.join(', ')})`);
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 1 || value > MAX_QUOTA_VALUE) {
    throw invalid(`quota ${key} must be a number from 1 to ${MAX_QUOTA_VALUE} (per second), got ${JSON.stringify(value)}`);
  }
  return [key, value];
}

/** Checks one alteration (entity, keys to set, keys to remove; a key may not be both); INVALID_REQUEST otherwise. */
export function parseQuotaAlteration(raw: { entity?: unknown; set?: unknown; remove?: unknown }): QuotaAlteration {
  if (typeof raw !== 'object' || raw === null) throw invalid('a quota alteration must be an object');
  const entity = parseQuotaEntity(raw.entity as QuotaEntity | undefined);
  const set: QuotaValues = {};
  if (raw.set !== undefined) {
    if (typeof raw.set !== 'object' || raw.set === null || Array.isArray(raw.set)) throw invalid('quota values to set must be an object');
    for (const [k, v] of Object.entries(raw.set)) {
      const [key, value] = parseQuotaValue(k, v);
      set[key] = value;
    }
  }
  const remove: QuotaKey[] = [];
  if (raw.remove !== undefined) {
    if (!Array.isArray(raw.remove)) throw invalid('quota keys to remove must be an array');
    for (const k of raw.remove) {
      if (!isQuotaKey(k)) throw invalid(`unknown quota key ${JSON.stringify(shown(String(k)))} (known: ${QUOTA_KEYS.join(', ')})`);
      if (k in set) throw invalid(`quota ${k} of ${entityName(entity)} is both set and removed`);
      if (!remove.includes(k)) remove.push(k);
    }
  }
  if (Object.keys(set).length === 0 && remove.length === 0) throw invalid(`the alteration of ${entityName(entity)} sets and removes nothing`);
  return { entity, set, remove };
}

/** Checks a list of alterations; an entity may appear once. */
export function parseQuotaAlterations(list: unknown): QuotaAlteration[] {
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_QUOTA_ALTERATIONS) throw invalid(`a quota alteration needs 1..${MAX_QUOTA_ALTERATIONS} entities`);
  const out = list.map((a) => parseQuotaAlteration(a as never));
  const seen = new Set<string>();
  for (const a of out) {
    const k = entityKey(a.entity);
    if (seen.has(k)) throw invalid(`quota entity ${entityName(a.entity)} is altered twice in one request`);
    seen.add(k);
  }
  return out;
}

/** The quota that applies to one key of a request, and the rate it is measured on. */
export interface ResolvedQuota {
  limit: number;
  /** The rate's identity: the matched entity's parts, with `<default>` replaced by the actual user or client id. */
  bucket: string;
  /** The matched entity (for logs and metrics). */
  entity: QuotaEntity;
}

/** The levels of Kafka's precedence: [user part, client part], each literal ('u'/'c'), default ('*') or absent ('-'). */
const LEVELS: ReadonlyArray<readonly ['u' | '*' | '-', 'c' | '*' | '-']> = [
  ['u', 'c'],
  ['u', '*'],
  ['u', '-'],
  ['*', 'c'],
  ['*', '*'],
  ['*', '-'],
  ['-', 'c'],
  ['-', '*'],
];

/**
 * The quota on `key` for a request from `user` (undefined: not
 * authenticated, so only client-id quotas apply) with `clientId`, looked up
 * with `lookup` (by entityKey); undefined when none applies.
 */
export function resolveQuota(lookup: (entityKey: string) => QuotaValues | undefined, user: string | undefined, clientId: string, key: QuotaKey): ResolvedQuota | undefined {
  for (const [u, c] of LEVELS) {
    if (u !== '-' && user === undefined) continue;
    const entity: QuotaEntity = {
      ...(u === 'u' ? { user: user! } : u === '*' ? { user: DEFAULT_ENTITY } : {}),
      ...(c === 'c' ? { clientId } : c === '*' ? { clientId: DEFAULT_ENTITY } : {}),
    };
    const limit = lookup(entityKey(entity))?.[key];
    if (limit !== undefined) return { limit, entity, bucket: `${u === '-' ? '' : `u:${user!}`}\u0000${c === '-' ? '' : `c:${clientId}`}` };
  }
  return undefined;
}
