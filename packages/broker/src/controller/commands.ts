/**
 * The commands of the metadata log, JSON-encoded in Raft entries and in
 * ControllerForward requests. `decodeCommand` checks the shape of whatever
 * arrives (a forwarded command comes from the network) and every rule that
 * does not depend on this cluster's configuration: topic names (the one
 * rule of topic-name.ts), topic ids, topic configs, broker endpoints and
 * ranges. The active controller decodes every command it proposes, whatever
 * door it came through, and the state machine decodes every entry it
 * applies, so neither ever sees a command that breaks these rules. What
 * depends on the configuration and the current metadata (partition limits
 * and budgets) is checked before proposing, in command-limits.ts.
 */
import { MqError } from '@mq/protocol/errors';
import { TOPIC_CONFIG } from '../config/topic-config.js';
import { validateConfigs } from '../config/config-def.js';
import { validateTopicName } from '@mq/protocol/topic-name';
import { SCRAM_MECHANISMS, checkIterations, isScramMechanism, type ScramMechanism } from '@mq/protocol/scram';
import { parseAcl, parseAclFilter, type AclEntry, type AclFilter } from '../security/acl.js';
import { parseQuotaAlterations, type QuotaAlteration } from '../quota/entity.js';

export interface RegisterBrokerCommand {
  type: 'registerBroker';
  id: number;
  host: string;
  port: number;
  httpPort: number;
  /** The inter-broker listener's port (absent in registrations from before it existed: the client port). */
  interBrokerPort?: number;
  /** The Kafka listener's advertised host and port (absent: no Kafka listener). */
  kafkaHost?: string;
  kafkaPort?: number;
  rack: string;
  incarnation: string;
  /** The previous run shut down cleanly (absent: not said, trusted as before). */
  cleanShutdown?: boolean;
  /** The broker's default log.flush.policy is `always`. */
  flushAlways?: boolean;
}

export interface FenceBrokerCommand {
  type: 'fenceBroker';
  id: number;
  /** Only the registration with this epoch is fenced (a newer one is left alone). */
  brokerEpoch: number;
  /** `controlled shutdown` (the broker asked itself) keeps it fenced until its next registration. */
  reason: string;
}

export interface UnfenceBrokerCommand {
  type: 'unfenceBroker';
  id: number;
  brokerEpoch: number;
}

export interface CreateTopicCommand {
  type: 'createTopic';
  name: string;
  topicId: string;
  numPartitions: number;
  replicationFactor: number;
  configs: Record<string, string>;
}

export interface DeleteTopicCommand {
  type: 'deleteTopic';
  name: string;
}

export interface CreatePartitionsCommand {
  type: 'createPartitions';
  name: string;
  count: number;
}

/**
 * Sets and removes some of a topic's own configs (IncrementalAlterConfigs);
 * a removed key falls back to the broker's default. Only the topic with
 * this id is changed (not a topic re-created under the same name since).
 */
export interface AlterTopicConfigsCommand {
  type: 'alterTopicConfigs';
  name: string;
  topicId: string;
  set: Record<string, string>;
  delete: string[];
}

export interface AlterPartitionCommand {
  type: 'alterPartition';
  topic: string;
  /**
   * The topic id of the leader's log: a proposal from the leader of a deleted
   * incarnation (same name, leader and epochs as the new one's) is refused
   * with UNKNOWN_TOPIC_ID. Absent in commands written before it existed.
   */
  topicId?: string;
  partition: number;
  leaderId: number;
  leaderEpoch: number;
  partitionEpoch: number;
  isr: number[];
}

/** Moves leadership to the preferred replica where it is eligible (proposed by the active controller). */
export interface ElectPreferredCommand {
  type: 'electPreferred';
  partitions: { topic: string; partition: number; leaderEpoch: number }[];
}

/**
 * A broker's log ends of partitions it is a recovery candidate of (in the
 * ISR, ELR or last ISR) while they have no leader: the controller elects
 * the longest log in (lastEpoch, endOffset) order.
 */
export interface ReportLogEndsCommand {
  type: 'reportLogEnds';
  brokerId: number;
  brokerEpoch: number;
  /** `topicId`: the incarnation whose log is reported (a report about a deleted one is ignored); absent in older commands. */
  partitions: { topic: string; topicId?: string; partition: number; lastEpoch: number; endOffset: number }[];
}

/** The active controller's wait for the last ISR members is over: elect the best candidate reported so far. */
export interface ElectRecoveredCommand {
  type: 'electRecovered';
  topic: string;
  /** Only for this incarnation of the topic (absent in older commands). */
  topicId?: string;
  partition: number;
  /** Only while the partition is still in this leader epoch (without a leader). */
  leaderEpoch: number;
}

export interface AllocateProducerIdsCommand {
  type: 'allocateProducerIds';
  brokerId: number;
  count: number;
}

// ---- security: SCRAM credentials and ACLs (packages/broker/src/security)

/** A user's SCRAM credential for one mechanism (salt and keys base64): never the password. */
export interface UpsertScramCredentialCommand {
  type: 'upsertScramCredential';
  user: string;
  mechanism: ScramMechanism;
  iterations: number;
  salt: string;
  storedKey: string;
  serverKey: string;
  /**
   * The first-user exception (an unauthenticated request from loopback while no user existed in that broker's
   * view): refused once another user exists or this user already has a credential for this mechanism, so a
   * broker with stale metadata cannot reset an existing user (it may add the new user's other mechanism).
   */
  onlyIfNoUsers?: boolean;
}

/** Removes a user's credential for one mechanism, or all of them (no mechanism). */
export interface DeleteScramCredentialCommand {
  type: 'deleteScramCredential';
  user: string;
  mechanism?: ScramMechanism;
}

/**
 * A login a broker delegates to its own client (an HTTP consumer instance acting for `principal`), valid on every
 * broker of the cluster: the token's SHA-256 (base64; never the token), the principal, and the broker run that
 * made it (its logins end when that broker registers a new run, or when it revokes them).
 */
export interface DelegateLoginCommand {
  type: 'delegateLogin';
  tokenHash: string;
  principal: string;
  brokerId: number;
  incarnation: string;
}

/** Ends a delegated login (the principal's last HTTP consumer instance on that broker closed). */
export interface RevokeLoginCommand {
  type: 'revokeLogin';
  tokenHash: string;
}

export interface CreateAclsCommand {
  type: 'createAcls';
  acls: AclEntry[];
}

export interface DeleteAclsCommand {
  type: 'deleteAcls';
  filters: AclFilter[];
}

// ---- scaleout
/** The most partitions one reassignment command may name. */
export const MAX_REASSIGNMENT_PARTITIONS = 10_000;
/** The most replicas a reassignment may give one partition. */
export const MAX_REASSIGNMENT_REPLICAS = 64;

/**
 * Starts or cancels partition reassignments (AlterPartitionReassignments).
 * `replicas`: the new replica set (its first is the preferred leader); null
 * cancels the partition's reassignment in progress, restoring its original
 * set. A replica count other than the current one is refused unless
 * `allowReplicationFactorChange`. Each partition is answered on its own.
 */
export interface AlterReassignmentsCommand {
  type: 'alterReassignments';
  partitions: { topic: string; partition: number; replicas: number[] | null; allowReplicationFactorChange?: boolean }[];
}

/** Marks a broker decommissioned (no replica is placed or moved on it), or undoes it. */
export interface DecommissionBrokerCommand {
  type: 'decommissionBroker';
  id: number;
  decommissioned: boolean;
}

/** The replication throttle of reassignment moves: bytes per second per broker for its adding replicas (0: none). */
export interface SetReplicationThrottleCommand {
  type: 'setReplicationThrottle';
  bytesPerSec: number;
}

// ---- quotas: client quotas (packages/broker/src/quota)

/** Sets and removes quota values of entities (AlterClientQuotas); an entity left with no value is gone. */
export interface AlterClientQuotasCommand {
  type: 'alterClientQuotas';
  alterations: QuotaAlteration[];
}

// ---- controller quorum membership: requests for the active controller, never entries of the log (quorum.ts)

/** Adds a controller to the metadata quorum: as a learner, then, once caught up, as a voter (KIP-853 AddRaftVoter). */
export interface AddVoterCommand {
  type: 'addVoter';
  id: number;
  /** Its Raft listener. */
  host: string;
  port: number;
}

/** Removes a voter (or a learner) from the metadata quorum (KIP-853 RemoveRaftVoter). */
export interface RemoveVoterCommand {
  type: 'removeVoter';
  id: number;
}

/** The quorum as the active controller sees it: members, addresses, log ends (KIP-595 DescribeQuorum). */
export interface DescribeQuorumCommand {
  type: 'describeQuorum';
}

/**
 * Where brokers reach controller `id` (its inter-broker listener, which serves
 * ControllerForward and metadata fetches): written by every controller at
 * start, as Kafka's ControllerRegistrationRecord (KIP-919), so a broker-only
 * process finds a controller added after its bootstrap servers were listed.
 */
export interface RegisterControllerCommand {
  type: 'registerController';
  id: number;
  host: string;
  port: number;
}

export type QuorumCommand = AddVoterCommand | RemoveVoterCommand | DescribeQuorumCommand;

export function isQuorumCommand(c: MetadataCommand): c is QuorumCommand {
  return c.type === 'addVoter' || c.type === 'removeVoter' || c.type === 'describeQuorum';
}

export type MetadataCommand =
  | RegisterBrokerCommand
  | FenceBrokerCommand
  | UnfenceBrokerCommand
  | CreateTopicCommand
  | DeleteTopicCommand
  | CreatePartitionsCommand
  | AlterTopicConfigsCommand
  | AlterPartitionCommand
  | ElectPreferredCommand
  | ReportLogEndsCommand
  | ElectRecoveredCommand
  | AllocateProducerIdsCommand
  // ---- security
  | UpsertScramCredentialCommand
  | DeleteScramCredentialCommand
  | CreateAclsCommand
  | DeleteAclsCommand
  | DelegateLoginCommand
  | RevokeLoginCommand
  // ---- scaleout
  | AlterReassignmentsCommand
  | DecommissionBrokerCommand
  | SetReplicationThrottleCommand
  // ---- quotas
  | AlterClientQuotasCommand
  // ---- controller quorum membership
  | RegisterControllerCommand
  | QuorumCommand;

/** What applying a command answered: the caller's result, or a refusal with an error code. */
export type CommandResult = { ok: true; value?: unknown } | { ok: false; code: string; message: string };

export function encodeCommand(c: MetadataCommand): Uint8Array {
  return Buffer.from(JSON.stringify(c), 'utf8');
}

/** A user name (SCRAM and the principal User:<name>). */
export const USER_NAME_PATTERN = /^[A-Za-z0-9._@+-]{1,128}$/;
/** The most ACLs one command may create or filters it may delete by. */
export const MAX_ACLS_PER_COMMAND = 1000;

/** A topic id: what the controller generates (16 random bytes, base64url) or a test's short id; never path characters. */
export const TOPIC_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
/** A delegated login's token digest: SHA-256, base64. */
const TOKEN_HASH = /^[A-Za-z0-9+/]{43}=$/;
/** The principal of a delegated login: a user or a client certificate's subject (as ACL principals). */
const DELEGATED_PRINCIPAL = /^User:[^\s;,]{1,255}$/;
/** A broker run id (incarnation): hex from the broker, short and plain. */
const INCARNATION = /^[A-Za-z0-9_-]{1,64}$/;
/** A host name or address as brokers advertise it (no spaces, no control characters, no URL syntax). */
const HOST = /^[A-Za-z0-9._:[\]%-]{1,253}$/;
/** The most producer ids one command may allocate (brokers take blocks of 1000). */
export const MAX_PRODUCER_ID_ALLOCATION = 1_000_000;
/** The longest rack name. */
const MAX_RACK_LENGTH = 255;

function bad(message: string): MqError {
  return new MqError('INVALID_REQUEST', `bad metadata command: ${message}`);
}

function int(o: Record<string, unknown>, k: string, min = 0): number {
  const v = o[k];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw bad(`${k} must be an integer >= ${min}`);
  return v;
}

function str(o: Record<string, unknown>, k: string): string {
  const v = o[k];
  if (typeof v !== 'string') throw bad(`${k} must be a string`);
  return v;
}

function upTo(o: Record<string, unknown>, k: string, min: number, max: number): number {
  const v = int(o, k, min);
  if (v > max) throw bad(`${k} must be at most ${max}, got ${v}`);
  return v;
}

function matching(o: Record<string, unknown>, k: string, re: RegExp, what: string): string {
  const v = str(o, k);
  if (!re.test(v)) throw bad(`${k} ${JSON.stringify(v.slice(0, 80))} is not ${what}`);
  return v;
}

/** A topic name under the one topic-name rule (INVALID_TOPIC otherwise). */
function topicName(o: Record<string, unknown>, k: string): string {
  return validateTopicName(str(o, k));
}

function ints(o: Record<string, unknown>, k: string): number[] {
  const v = o[k];
  if (!Array.isArray(v)) throw bad(`${k} must be an array`);
  return v.map((x, i) => int({ [`${k}[${i}]`]: x }, `${k}[${i}]`));
}

function optBool(o: Record<string, unknown>, k: string): boolean | undefined {
  const v = o[k];
  if (v !== undefined && typeof v !== 'boolean') throw bad(`${k} must be a boolean`);
  return v;
}

function strMap(o: Record<string, unknown>, k: string): Record<string, string> {
  const v = o[k];
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad(`${k} must be an object`);
  const out: Record<string, string> = {};
  for (const [kk, vv] of Object.entries(v)) {
    if (typeof vv !== 'string') throw bad(`${k}.${kk} must be a string`);
    out[kk] = vv;
  }
  return out;
}

/** Parses and checks a command; INVALID_REQUEST when it is not one. */
export function decodeCommand(data: Uint8Array): MetadataCommand {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')) as Record<string, unknown>;
  } catch {
    throw bad('not JSON');
  }
  if (typeof o !== 'object' || o === null) throw bad('not an object');
  switch (o.type) {
    case 'registerBroker': {
      const cleanShutdown = optBool(o, 'cleanShutdown');
      const flushAlways = optBool(o, 'flushAlways');
      const rack = str(o, 'rack');
      const interBrokerPort = o.interBrokerPort === undefined ? undefined : upTo(o, 'interBrokerPort', 1, 65535);
      const kafkaPort = o.kafkaPort === undefined ? undefined : upTo(o, 'kafkaPort', 1, 65535);
      const kafkaHost = o.kafkaHost === undefined ? undefined : matching(o, 'kafkaHost', HOST, 'a host name or address');
      if (rack.length > MAX_RACK_LENGTH) throw bad(`rack is ${rack.length} characters, the limit is ${MAX_RACK_LENGTH}`);
      return {
        type: o.type,
        id: int(o, 'id', 1),
        host: matching(o, 'host', HOST, 'a host name or address'),
        port: upTo(o, 'port', 1, 65535),
        httpPort: upTo(o, 'httpPort', 0, 65535),
        rack,
        incarnation: matching(o, 'incarnation', INCARNATION, 'a broker run id'),
        ...(interBrokerPort !== undefined ? { interBrokerPort } : {}),
        ...(kafkaPort !== undefined && kafkaHost !== undefined ? { kafkaHost, kafkaPort } : {}),
        ...(cleanShutdown !== undefined ? { cleanShutdown } : {}),
        ...(flushAlways !== undefined ? { flushAlways } : {}),
      };
    }
    case 'fenceBroker':
      return { type: o.type, id: int(o, 'id'), brokerEpoch: int(o, 'brokerEpoch'), reason: str(o, 'reason') };
    case 'unfenceBroker':
      return { type: o.type, id: int(o, 'id'), brokerEpoch: int(o, 'brokerEpoch') };
    case 'createTopic':
      return {
        type: o.type,
        name: topicName(o, 'name'),
        topicId: matching(o, 'topicId', TOPIC_ID_PATTERN, 'a topic id'),
        numPartitions: int(o, 'numPartitions', 1),
        replicationFactor: int(o, 'replicationFactor', 1),
        configs: validateConfigs(TOPIC_CONFIG, strMap(o, 'configs'), 'topic'),
      };
    case 'deleteTopic':
      return { type: o.type, name: topicName(o, 'name') };
    case 'createPartitions':
      return { type: o.type, name: topicName(o, 'name'), count: int(o, 'count', 1) };
    case 'alterTopicConfigs': {
      const set = validateConfigs(TOPIC_CONFIG, strMap(o, 'set'), 'topic');
      const list = o.delete;
      if (!Array.isArray(list) || list.some((k) => typeof k !== 'string')) throw bad('delete must be an array of strings');
      const removed = [...new Set(list as string[])];
      for (const k of removed) {
        if (!TOPIC_CONFIG.has(k)) throw new MqError('INVALID_CONFIG', `unknown topic config ${JSON.stringify(k.slice(0, 80))}`);
        if (k in set) throw new MqError('INVALID_CONFIG', `topic config ${k} is both set and deleted`);
      }
      return { type: o.type, name: topicName(o, 'name'), topicId: matching(o, 'topicId', TOPIC_ID_PATTERN, 'a topic id'), set, delete: removed };
    }
    case 'alterPartition':
      return {
        type: o.type,
        topic: str(o, 'topic'),
        ...(o.topicId !== undefined ? { topicId: matching(o, 'topicId', TOPIC_ID_PATTERN, 'a topic id') } : {}),
        partition: int(o, 'partition'),
        leaderId: int(o, 'leaderId'),
        leaderEpoch: int(o, 'leaderEpoch'),
        partitionEpoch: int(o, 'partitionEpoch'),
        isr: ints(o, 'isr'),
      };
    case 'electPreferred': {
      const list = o.partitions;
      if (!Array.isArray(list)) throw bad('partitions must be an array');
      return {
        type: o.type,
        partitions: list.map((p: Record<string, unknown>) => {
          if (typeof p !== 'object' || p === null) throw bad('partitions[] must be objects');
          return { topic: str(p, 'topic'), partition: int(p, 'partition'), leaderEpoch: int(p, 'leaderEpoch') };
        }),
      };
    }
    case 'reportLogEnds': {
      const list = o.partitions;
      if (!Array.isArray(list)) throw bad('partitions must be an array');
      return {
        type: o.type,
        brokerId: int(o, 'brokerId'),
        brokerEpoch: int(o, 'brokerEpoch'),
        partitions: list.map((p: Record<string, unknown>) => {
          if (typeof p !== 'object' || p === null) throw bad('partitions[] must be objects');
          return {
            topic: str(p, 'topic'),
            ...(p.topicId !== undefined ? { topicId: matching(p, 'topicId', TOPIC_ID_PATTERN, 'a topic id') } : {}),
            partition: int(p, 'partition'),
            lastEpoch: int(p, 'lastEpoch', -1),
            endOffset: int(p, 'endOffset'),
          };
        }),
      };
    }
    case 'electRecovered':
      return {
        type: o.type,
        topic: str(o, 'topic'),
        ...(o.topicId !== undefined ? { topicId: matching(o, 'topicId', TOPIC_ID_PATTERN, 'a topic id') } : {}),
        partition: int(o, 'partition'),
        leaderEpoch: int(o, 'leaderEpoch'),
      };
    case 'allocateProducerIds':
      return { type: o.type, brokerId: int(o, 'brokerId'), count: upTo(o, 'count', 1, MAX_PRODUCER_ID_ALLOCATION) };
    // ---- security
    case 'upsertScramCredential': {
      const mechanism = str(o, 'mechanism');
      if (!isScramMechanism(mechanism)) throw bad(`mechanism ${JSON.stringify(mechanism.slice(0, 40))} is not SCRAM-SHA-256 or SCRAM-SHA-512`);
      const key = (k: string, bytes: number) => {
        const v = matching(o, k, /^[A-Za-z0-9+/]{1,200}={0,2}$/, 'base64');
        if (Buffer.from(v, 'base64').length !== bytes) throw bad(`${k} must be ${bytes} bytes`);
        return v;
      };
      const keyLength = SCRAM_MECHANISMS[mechanism].keyLength;
      const iterations = int(o, 'iterations');
      checkIterations(iterations);
      return {
        type: o.type,
        user: matching(o, 'user', USER_NAME_PATTERN, 'a user name (letters, digits, . _ @ + -; at most 128)'),
        mechanism,
        iterations,
        salt: matching(o, 'salt', /^[A-Za-z0-9+/]{8,200}={0,2}$/, 'a base64 salt of at least 6 bytes'),
        storedKey: key('storedKey', keyLength),
        serverKey: key('serverKey', keyLength),
        ...(o.onlyIfNoUsers === true ? { onlyIfNoUsers: true } : {}),
      };
    }
    case 'deleteScramCredential': {
      const mechanism = o.mechanism === undefined ? undefined : str(o, 'mechanism');
      if (mechanism !== undefined && !isScramMechanism(mechanism)) throw bad(`mechanism ${JSON.stringify(mechanism.slice(0, 40))} is not SCRAM-SHA-256 or SCRAM-SHA-512`);
      return { type: o.type, user: matching(o, 'user', USER_NAME_PATTERN, 'a user name'), ...(mechanism ? { mechanism } : {}) };
    }
    case 'delegateLogin':
      return {
        type: o.type,
        tokenHash: matching(o, 'tokenHash', TOKEN_HASH, 'a SHA-256 digest in base64'),
        principal: matching(o, 'principal', DELEGATED_PRINCIPAL, 'a principal User:<name>'),
        brokerId: int(o, 'brokerId', 1),
        incarnation: matching(o, 'incarnation', INCARNATION, 'a broker run id'),
      };
    case 'revokeLogin':
      return { type: o.type, tokenHash: matching(o, 'tokenHash', TOKEN_HASH, 'a SHA-256 digest in base64') };
    case 'createAcls':
    case 'deleteAcls': {
      const list = o[o.type === 'createAcls' ? 'acls' : 'filters'];
      if (!Array.isArray(list) || list.length === 0 || list.length > MAX_ACLS_PER_COMMAND) throw bad(`an ACL command needs 1..${MAX_ACLS_PER_COMMAND} entries`);
      const objs = list.map((x) => {
        if (typeof x !== 'object' || x === null) throw bad('an ACL entry must be an object');
        return x as Record<string, unknown>;
      });
      return o.type === 'createAcls' ? { type: o.type, acls: objs.map(parseAcl) } : { type: o.type, filters: objs.map(parseAclFilter) };
    }
    case 'decommissionBroker': {
      const v = optBool(o, 'decommissioned');
      if (v === undefined) throw bad('decommissioned must be a boolean');
      return { type: o.type, id: int(o, 'id', 1), decommissioned: v };
    }
    case 'setReplicationThrottle':
      return { type: o.type, bytesPerSec: int(o, 'bytesPerSec') };
    case 'alterReassignments': {
      const list = o.partitions;
      if (!Array.isArray(list)) throw bad('partitions must be an array');
      if (list.length > MAX_REASSIGNMENT_PARTITIONS) throw bad(`partitions names ${list.length} partitions, the limit is ${MAX_REASSIGNMENT_PARTITIONS}`);
      return {
        type: o.type,
        partitions: list.map((p: Record<string, unknown>) => {
          if (typeof p !== 'object' || p === null) throw bad('partitions[] must be objects');
          let replicas: number[] | null = null;
          if (p.replicas !== null) {
            replicas = ints(p, 'replicas');
            if (replicas.length > MAX_REASSIGNMENT_REPLICAS) throw bad(`replicas lists ${replicas.length} brokers, the limit is ${MAX_REASSIGNMENT_REPLICAS}`);
          }
          const allow = optBool(p, 'allowReplicationFactorChange');
          return { topic: topicName(p, 'topic'), partition: int(p, 'partition'), replicas, ...(allow !== undefined ? { allowReplicationFactorChange: allow } : {}) };
        }),
      };
    }
    // ---- quotas
    case 'alterClientQuotas':
      return { type: o.type, alterations: parseQuotaAlterations(o.alterations) };
    // ---- controller quorum membership
    case 'addVoter':
      return { type: o.type, id: int(o, 'id', 1), host: matching(o, 'host', HOST, 'a host name or address'), port: upTo(o, 'port', 1, 65535) };
    case 'removeVoter':
      return { type: o.type, id: int(o, 'id', 1) };
    case 'registerController':
      return { type: o.type, id: int(o, 'id', 1), host: matching(o, 'host', HOST, 'a host name or address'), port: upTo(o, 'port', 1, 65535) };
    case 'describeQuorum':
      return { type: o.type };
    default:
      throw bad(`unknown type ${JSON.stringify(o.type)}`);
  }
}
