/**
 * ACLs: who (a principal) may do what (an operation) to which resource (a
 * topic, a group, a transactional id or the cluster), by literal name or by
 * name prefix, allowed or denied. Deny wins over allow; with no matching
 * allow the answer is no (Kafka's allow.everyone.if.no.acl.found=false).
 * Super users (super.users) pass every check. Stored in the metadata log
 * (createAcls / deleteAcls commands), so every broker decides the same.
 */
import { MqError } from '@mq/protocol/errors';

export const RESOURCE_TYPES = ['topic', 'group', 'transactional-id', 'cluster'] as const;
export type ResourceType = (typeof RESOURCE_TYPES)[number];
export const PATTERN_TYPES = ['literal', 'prefixed'] as const;
export type PatternType = (typeof PATTERN_TYPES)[number];
export const OPERATIONS = ['all', 'read', 'write', 'create', 'delete', 'alter', 'describe', 'alter-configs', 'describe-configs', 'idempotent-write', 'cluster-action'] as const;
export type Operation = (typeof OPERATIONS)[number];
export const PERMISSIONS = ['allow', 'deny'] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** The one name of the cluster resource (as Kafka's "kafka-cluster"). */
export const CLUSTER_RESOURCE = 'mq-cluster';
/** Matches every principal; also "*" as a literal resource name matches every name. */
export const ANY_PRINCIPAL = 'User:*';
export const ANONYMOUS = 'User:ANONYMOUS';

export interface AclEntry {
  readonly resourceType: ResourceType;
  readonly resourceName: string;
  readonly patternType: PatternType;
  readonly principal: string;
  readonly operation: Operation;
  readonly permission: Permission;
}

/** Each field optional: absent matches anything. */
export type AclFilter = { readonly [K in keyof AclEntry]?: AclEntry[K] };

/** Operations an allowed one implies (Kafka: read, write, delete and alter imply describe; alter-configs implies describe-configs). */
const IMPLIED_BY: Partial<Record<Operation, readonly Operation[]>> = {
  describe: ['read', 'write', 'delete', 'alter'],
  'describe-configs': ['alter-configs'],
};

const MAX_NAME = 1024;
const PRINCIPAL = /^User:[^\s;,]{1,255}$/;

function oneOf<T extends string>(what: string, v: unknown, allowed: readonly T[]): T {
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
    throw new MqError('INVALID_REQUEST', `${what} ${JSON.stringify(String(v).slice(0, 40))} is not one of ${allowed.join(', ')}`);
  }
  return v as T;
}

/** Checks a whole ACL as a client sent it (wire strings); INVALID_REQUEST when it is not one. */
export function parseAcl(o: Partial<Record<keyof AclEntry, unknown>>): AclEntry {
  const resourceType = oneOf('resource type', o.resourceType, RESOURCE_TYPES);
  const patternType = oneOf('pattern type', o.patternType || 'literal', PATTERN_TYPES);
  let resourceName = o.resourceName;
  if (resourceType === 'cluster') resourceName = resourceName || CLUSTER_RESOURCE;
  if (typeof resourceName !== 'string' || resourceName.length === 0 || resourceName.length > MAX_NAME) {
    throw new MqError('INVALID_REQUEST', `an ACL needs a resource name of 1..${MAX_NAME} characters`);
  }
  if (resourceType === 'cluster' && resourceName !== CLUSTER_RESOURCE) {
    throw new MqError('INVALID_REQUEST', `the cluster resource is named "${CLUSTER_RESOURCE}"`);
  }
  const principal = o.principal;
  if (typeof principal !== 'string' || !PRINCIPAL.test(principal)) {
    throw new MqError('INVALID_REQUEST', `principal ${JSON.stringify(String(principal).slice(0, 40))} is not User:<name> (or User:* for everyone)`);
  }
  return {
    resourceType,
    resourceName,
    patternType,
    principal,
    operation: oneOf('operation', o.operation, OPERATIONS),
    permission: oneOf('permission', o.permission, PERMISSIONS),
  };
}

/** A filter from wire strings: empty fields match anything; the rest must be valid values. */
export function parseAclFilter(o: Partial<Record<keyof AclEntry, unknown>>): AclFilter {
  const f: { -readonly [K in keyof AclEntry]?: AclEntry[K] } = {};
  if (o.resourceType) f.resourceType = oneOf('resource type', o.resourceType, RESOURCE_TYPES);
  if (o.patternType) f.patternType = oneOf('pattern type', o.patternType, PATTERN_TYPES);
  if (o.operation) f.operation = oneOf('operation', o.operation, OPERATIONS);
  if (o.permission) f.permission = oneOf('permission', o.permission, PERMISSIONS);
  if (o.resourceName) f.resourceName = String(o.resourceName).slice(0, MAX_NAME);
  if (o.principal) f.principal = String(o.principal).slice(0, 300);
  return f;
}

export function matchesFilter(acl: AclEntry, f: AclFilter): boolean {
  return (Object.keys(f) as Array<keyof AclEntry>).every((k) => f[k] === undefined || f[k] === acl[k]);
}

export function sameAcl(a: AclEntry, b: AclEntry): boolean {
  return matchesFilter(a, b);
}

function coversResource(acl: AclEntry, type: ResourceType, name: string): boolean {
  if (acl.resourceType !== type) return false;
  if (acl.patternType === 'prefixed') return name.startsWith(acl.resourceName);
  return acl.resourceName === '*' || acl.resourceName === name;
}

function coversOperation(acl: AclEntry, op: Operation, permission: Permission): boolean {
  if (acl.operation === 'all' || acl.operation === op) return true;
  // Implication works for allows only: a deny of read does not deny describe.
  return permission === 'allow' && (IMPLIED_BY[op] ?? []).includes(acl.operation);
}

/** Whether `acls` let `principal` do `op` on the resource: some allow matches and no deny does. */
export function aclsAllow(acls: readonly AclEntry[], principal: string, op: Operation, type: ResourceType, name: string): boolean {
  let allowed = false;
  for (const acl of acls) {
    if (acl.principal !== principal && acl.principal !== ANY_PRINCIPAL) continue;
    if (!coversResource(acl, type, name)) continue;
    if (!coversOperation(acl, op, acl.permission)) continue;
    if (acl.permission === 'deny') return false;
    allowed = true;
  }
  return allowed;
}

/** The error a refused operation on a resource of this type answers (retriable false). */
export function authorizationError(type: ResourceType, op: Operation, name: string, principal: string): MqError {
  const code =
    type === 'topic' ? 'TOPIC_AUTHORIZATION_FAILED' : type === 'group' ? 'GROUP_AUTHORIZATION_FAILED' : type === 'cluster' ? 'CLUSTER_AUTHORIZATION_FAILED' : 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED';
  const what = type === 'cluster' ? 'the cluster' : `${type} "${name}"`;
  return new MqError(code, `${principal} may not ${op} ${what} (grant it with: mq acl add --allow ${principal} --operation ${op} --${type === 'transactional-id' ? 'transactional-id' : type}${type === 'cluster' ? '' : ` ${name}`})`, { retriable: false });
}
