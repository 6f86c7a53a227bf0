/**
 * Authentication and authorization of every API, in one place: the broker's
 * handler map is wrapped once (`secureHandlers`), and every door calls that
 * map (the WebSocket and Kafka listeners directly, the HTTP API through its
 * backend, which calls `authorizeRequest` before it forwards anything). So
 * no door can skip a check.
 *
 * Per API (as Kafka's authorizer): the resources a request names and the
 * operation it needs on each. A request is refused whole, before its
 * handler runs (nothing changes), with the first refused resource's
 * TOPIC_/GROUP_/CLUSTER_/TRANSACTIONAL_ID_AUTHORIZATION_FAILED and one audit
 * line. Metadata and ListGroups answer only what the principal may describe.
 * With authentication and authorization off (the default) nothing here
 * refuses anything.
 */
import { MqError } from '@mq/protocol/errors';
import type { RequestBody } from '@mq/protocol/wire';
import { errorNumber } from '@mq/protocol/errors';
import type { RequestContext } from '../context.js';
import type { Operation, ResourceType } from '../security/acl.js';
import type { Security } from '../security/security.js';
import type { Handler, HandlerMap, RequestOf, ResponseOf } from './types.js';

/** APIs a connection may call before it authenticated. */
const OPEN: ReadonlySet<RequestBody> = new Set<RequestBody>(['handshake', 'saslAuthenticate']);

type Need = [Operation, ResourceType, string?];
type Rule<K extends RequestBody> = (req: RequestOf<K>, principal: string, sec: Security) => Need[];
type Rules = { readonly [K in RequestBody]: Rule<K> };

const names = (list: ReadonlyArray<{ name?: string | null }> | null | undefined) => (list ?? []).map((t) => t.name ?? '');
const topics = (op: Operation, list: readonly string[]): Need[] => [...new Set(list)].map((n) => [op, 'topic', n]);
const cluster = (op: Operation): Need[] => [[op, 'cluster']];

/** What each API needs. Every RequestBody has a rule (a new API does not compile until it has one). */
export const API_RULES: Rules = {
  handshake: () => [],
  saslAuthenticate: () => [],
  // Metadata filters instead of refusing (see secureHandlers).
  metadata: () => [],
  createTopics: (r, p, sec) => (sec.allows(p, 'create', 'cluster') ? [] : topics('create', names(r.topics))),
  deleteTopics: (r) => topics('delete', r.topics ?? []),
  createPartitions: (r) => topics('alter', (r.topics ?? []).map((t) => t.topic ?? '')),
  describeConfigs: (r) => [...topics('describe-configs', r.topics ?? []), ...(r.includeBroker ? cluster('describe-configs') : [])],
  incrementalAlterConfigs: (r) => topics('alter-configs', (r.resources ?? []).map((t) => t.topic ?? '')),
  produce: (r) => [...(r.transactionalId ? ([['write', 'transactional-id', r.transactionalId]] as Need[]) : []), ...topics('write', names(r.topics))],
  fetch: (r) => ((r.replicaId ?? -1) > 0 ? cluster('cluster-action') : topics('read', names(r.topics))),
  listOffsets: (r) => ((r.replicaId ?? -1) > 0 ? cluster('cluster-action') : topics('describe', names(r.topics))),
  offsetForLeaderEpoch: (r) => ((r.replicaId ?? -1) > 0 ? cluster('cluster-action') : topics('describe', names(r.topics))),
  deleteRecords: (r) => topics('delete', names(r.topics)),
  findCoordinator: (r) => [['describe', (r.keyType ?? 0) === 1 ? 'transactional-id' : 'group', r.key ?? '']],
  joinGroup: (r) => [['read', 'group', r.groupId ?? '']],
  syncGroup: (r) => [['read', 'group', r.groupId ?? '']],
  heartbeat: (r) => [['read', 'group', r.groupId ?? '']],
  leaveGroup: (r) => [['read', 'group', r.groupId ?? '']],
  offsetCommit: (r) => [['read', 'group', r.groupId ?? ''], ...topics('read', names(r.topics))],
  offsetFetch: (r) => [['describe', 'group', r.groupId ?? ''], ...topics('describe', names(r.topics))],
  // ListGroups filters instead of refusing (see secureHandlers).
  listGroups: () => [],
  describeGroups: (r) => (r.groupIds ?? []).map((g): Need => ['describe', 'group', g]),
  deleteGroups: (r) => (r.groupIds ?? []).map((g): Need => ['delete', 'group', g]),
  // Idempotent producers: idempotent-write on the cluster (Kafka's rule); transactional ones: write on their id.
  initProducerId: (r) => (r.transactionalId ? [['write', 'transactional-id', r.transactionalId]] : cluster('idempotent-write')),
  controllerForward: () => cluster('cluster-action'),
  // Served only on the inter-broker listener, as its first frames (server/connection.ts), never through this map.
  clusterAuth: () => cluster('cluster-action'),
  // Transactions (Kafka's rules): write on the transactional id, and on what the transaction touches.
  addPartitionsToTxn: (r) => [['write', 'transactional-id', r.transactionalId ?? ''], ...topics('write', names(r.topics))],
  addOffsetsToTxn: (r) => [['write', 'transactional-id', r.transactionalId ?? ''], ['read', 'group', r.groupId ?? '']],
  endTxn: (r) => [['write', 'transactional-id', r.transactionalId ?? '']],
  txnOffsetCommit: (r) => [['write', 'transactional-id', r.transactionalId ?? ''], ['read', 'group', r.groupId ?? ''], ...topics('read', names(r.topics))],
  writeTxnMarkers: () => cluster('cluster-action'),
  // Scale-out (Kafka's rules): moving replicas and leaders alters the cluster; the throttle is a cluster config.
  alterPartitionReassignments: () => cluster('alter'),
  listPartitionReassignments: () => cluster('describe'),
  electLeaders: () => cluster('alter'),
  decommissionBroker: () => cluster('alter'),
  alterReplicationThrottle: (r) => cluster(Number(r.bytesPerSec ?? -1) >= 0 ? 'alter-configs' : 'describe-configs'),
  alterUserScramCredentials: () => cluster('alter'),
  describeUserScramCredentials: () => cluster('describe'),
  createAcls: () => cluster('alter'),
  deleteAcls: () => cluster('alter'),
  describeAcls: () => cluster('describe'),
  // ---- quotas (Kafka's rules): quotas are cluster configs.
  alterClientQuotas: () => cluster('alter-configs'),
  describeClientQuotas: () => cluster('describe-configs'),
  // ---- log dirs (Kafka's rule: DESCRIBE on the cluster)
  describeLogDirs: () => cluster('describe'),
  // ---- controller quorum membership (Kafka's rules: ALTER on the cluster to change it, DESCRIBE to read it)
  alterRaftVoters: () => cluster('alter'),
  describeQuorum: () => cluster('describe'),
};

/**
 * The bootstrap exception: while the cluster has no user at all, a connection
 * from this machine (loopback) may create users without authenticating, so
 * the first (super) user can be made with `mq user create` on a broker host.
 */
function bootstrapping(body: RequestBody, req: unknown, ctx: RequestContext, usersExist: () => boolean): boolean {
  if (!ctx.connection.session?.loopback || usersExist()) return false;
  // Metadata to find the controller (answered without any topic), then the user's creation.
  if (body === 'metadata') return true;
  if (body !== 'alterUserScramCredentials') return false;
  const r = req as RequestOf<'alterUserScramCredentials'>;
  return (r.deletions ?? []).length === 0;
}

/**
 * Checks one request of API `body` as `ctx`'s principal: SASL_AUTHENTICATION_FAILED
 * before authentication (but for the handshake and SaslAuthenticate), then the
 * API's rule. Returns the principal.
 */
export function authorizeRequest<K extends RequestBody>(body: K, req: RequestOf<K>, ctx: RequestContext, sec: Security, usersExist: () => boolean): string {
  if (OPEN.has(body)) return sec.principalOf(ctx) ?? '';
  if (sec.principalOf(ctx) === undefined && bootstrapping(body, req, ctx, usersExist)) {
    if (body === 'metadata') return '';
    ctx.logger.warn({ audit: true, remote: ctx.connection.remote, api: body }, 'bootstrap: creating the first user from this machine without authentication (no user exists yet)');
    // This broker's view may lag (a broker that just started sees no user): the controller refuses the
    // creation if any user exists by the time it applies it.
    (ctx as { bootstrap?: boolean }).bootstrap = true;
    return '';
  }
  const principal = sec.requirePrincipal(ctx);
  for (const [op, type, name] of (API_RULES[body] as Rule<K>)(req, principal, sec)) sec.check(ctx, principal, op, type, name, body);
  return principal;
}

/** `handlers` with every request authenticated and authorized first (the same map when security is off). */
export function secureHandlers(handlers: HandlerMap, sec: Security, usersExist: () => boolean): HandlerMap {
  if (!sec.enabled) return handlers;
  const out: { -readonly [K in RequestBody]?: Handler<K> } = {};
  for (const body of Object.keys(handlers) as RequestBody[]) {
    const inner = handlers[body] as Handler<RequestBody>;
    const wrapped: Handler<RequestBody> =
      body === 'metadata' || body === 'listGroups'
        ? async (req, ctx) => {
            const principal = authorizeRequest(body, req, ctx, sec, usersExist);
            if (body === 'metadata') return filterMetadata(req as RequestOf<'metadata'>, ctx, principal, sec, inner as unknown as Handler<'metadata'>);
            const res = await inner(req, ctx);
            if (typeof res !== 'object') return res;
            const r = res as ResponseOf<'listGroups'>;
            return { ...r, groups: (r.groups ?? []).filter((g) => sec.allows(principal, 'describe', 'group', g.groupId ?? '')) } as never;
          }
        : // Every other API (produce and fetch among them): the check, then the handler's own promise (no extra async step).
          (req, ctx) => {
            try {
              authorizeRequest(body, req, ctx, sec, usersExist);
            } catch (err) {
              return Promise.reject(err);
            }
            return inner(req, ctx);
          };
    (out as Record<string, Handler<RequestBody>>)[body] = wrapped;
  }
  return out as HandlerMap;
}

/**
 * Metadata shows only topics the principal may describe: a named topic it may
 * not is answered TOPIC_AUTHORIZATION_FAILED (never looked up or auto-created),
 * a listing leaves such topics out.
 */
async function filterMetadata(req: RequestOf<'metadata'>, ctx: RequestContext, principal: string, sec: Security, inner: Handler<'metadata'>): Promise<ResponseOf<'metadata'>> {
  if (principal === '') {
    // The bootstrap (no user yet, from loopback): the brokers and the controller, no topic.
    const base = (await inner({ ...req, topics: ['\u0000none'] } as never, ctx)) as ResponseOf<'metadata'>;
    return { ...base, topics: [] };
  }
  const asked = req.topics ?? [];
  const allowed = asked.filter((t) => sec.allows(principal, 'describe', 'topic', t));
  const refused = asked.filter((t) => !allowed.includes(t));
  if (asked.length > 0 && allowed.length === 0) {
    // Nothing to look up: asking the handler with no topics would list them all.
    const base = await inner({ ...req, topics: ['\u0000none'] } as never, ctx).catch(() => undefined);
    return { ...(typeof base === 'object' ? base : {}), topics: refused.map((t) => refusedTopic(ctx, principal, sec, t)) } as ResponseOf<'metadata'>;
  }
  const res = (await inner({ ...req, topics: allowed } as never, ctx)) as ResponseOf<'metadata'>;
  const shown = (res.topics ?? []).filter((t) => sec.allows(principal, 'describe', 'topic', t.name ?? ''));
  return { ...res, topics: [...shown, ...refused.map((t) => refusedTopic(ctx, principal, sec, t))] };
}

function refusedTopic(ctx: RequestContext, principal: string, sec: Security, topic: string) {
  try {
    sec.check(ctx, principal, 'describe', 'topic', topic, 'metadata');
  } catch (err) {
    return { name: topic, errorCode: errorNumber('TOPIC_AUTHORIZATION_FAILED'), errorMessage: (err as MqError).message, partitions: [] };
  }
  return { name: topic, errorCode: errorNumber('TOPIC_AUTHORIZATION_FAILED'), errorMessage: 'not authorized', partitions: [] };
}
