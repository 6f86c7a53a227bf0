/**
 * Admin: topics (create, delete, list, describe, add partitions), configs,
 * offsets and watermarks, and the cluster's brokers.
 */
import { MqError, errorCodeFromNumber, type ErrorCode } from '@mq/protocol/errors';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP } from '@mq/protocol/wire';
import { unknownTopicError, type BrokerDescription, type Cluster, type Target, type TopicDescription } from './cluster.js';
import type { RequestOptions } from './connection.js';
import { invalidArgument } from './options.js';

export interface AdminCallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface NewTopic {
  topic: string;
  /** Default 1. */
  numPartitions?: number;
  /** Default 1. */
  replicationFactor?: number;
  configs?: Record<string, string>;
}

export interface TopicResult {
  topic: string;
  numPartitions: number;
  replicationFactor: number;
  configs: Record<string, string>;
  /** A note from the broker, e.g. that keyed records will map to other partitions. */
  warning?: string;
}

export interface ConfigEntry {
  name: string;
  value: string;
  /** "default", "topic" or "broker". */
  source: string;
}

export interface ConfigResource {
  /** Topic name, or "" for the broker itself. */
  resource: string;
  entries: ConfigEntry[];
}

/** IncrementalAlterConfigs on one topic: keys to set and keys to remove (a removed key falls back to the broker's default). */
export interface ConfigChange {
  set?: Record<string, string>;
  delete?: string[];
}

/** A partition's records below `offset` are to go; -1 means up to the high watermark. */
export interface RecordsToDelete {
  partition: number;
  offset: number;
}

export interface DeletedRecords {
  partition: number;
  /** The partition's log start offset after the deletion. */
  low: number;
}

export interface Watermarks {
  /** First offset still in the log. */
  low: number;
  /** Offset after the last committed record. */
  high: number;
}

export type OffsetSpec = 'earliest' | 'latest' | number;

export interface ListedOffset {
  partition: number;
  /** -1 when no record has a timestamp at or after the one asked for. */
  offset: number;
  timestamp: number;
  low: number;
  high: number;
}

export interface ClusterDescription {
  clusterId: string;
  controllerId: number;
  brokers: BrokerDescription[];
}

function timeoutField(o: AdminCallOptions, cluster: Cluster): number {
  return o.timeoutMs ?? cluster.options.requestTimeoutMs;
}

function requestOptions(o: AdminCallOptions): RequestOptions {
  return { signal: o.signal, timeoutMs: o.timeoutMs };
}

const CONTROLLER: Target = { kind: 'controller' };

export type ScramMechanismName = 'SCRAM-SHA-256' | 'SCRAM-SHA-512';

export interface UserDescription {
  user: string;
  credentials: Array<{ mechanism: ScramMechanismName; iterations: number }>;
}

export type AclResourceType = 'topic' | 'group' | 'transactional-id' | 'cluster';
export type AclOperation = 'all' | 'read' | 'write' | 'create' | 'delete' | 'alter' | 'describe' | 'alter-configs' | 'describe-configs' | 'idempotent-write' | 'cluster-action';

/** One ACL: `principal` ("User:alice", "User:*" for everyone) may (allow) or may not (deny) do `operation` on the resource. */
export interface Acl {
  resourceType: AclResourceType;
  /** The resource's name, or its prefix with patternType "prefixed"; "*" (literal) matches every name; the cluster's is "mq-cluster". */
  resourceName: string;
  /** Default "literal". */
  patternType?: 'literal' | 'prefixed';
  principal: string;
  operation: AclOperation;
  permission: 'allow' | 'deny';
}

export type AclFilter = Partial<Acl>;

// ---- quotas

/** A quota key: producer_byte_rate and consumer_byte_rate in bytes per second, request_rate in requests per second. */
export type ClientQuotaKey = 'producer_byte_rate' | 'consumer_byte_rate' | 'request_rate';

/** Who a quota applies to: a user, a client id or both; "<default>" for every one without a quota of its own. */
export interface ClientQuotaEntity {
  user?: string;
  clientId?: string;
}

/** One entity's change: keys to set, keys to remove. */
export interface ClientQuotaAlteration {
  entity: ClientQuotaEntity;
  set?: Partial<Record<ClientQuotaKey, number>>;
  remove?: ClientQuotaKey[];
}

export interface ClientQuota {
  entity: ClientQuotaEntity;
  values: Partial<Record<ClientQuotaKey, number>>;
}

function wireAcl(a: AclFilter) {
  return {
    resourceType: a.resourceType ?? '',
    resourceName: a.resourceName ?? '',
    patternType: a.patternType ?? '',
    principal: a.principal ?? '',
    operation: a.operation ?? '',
    permission: a.permission ?? '',
  };
}

function aclOf(w: { resourceType?: string | null; resourceName?: string | null; patternType?: string | null; principal?: string | null; operation?: string | null; permission?: string | null }): Acl {
  return {
    resourceType: (w.resourceType ?? '') as AclResourceType,
    resourceName: w.resourceName ?? '',
    patternType: (w.patternType || 'literal') as 'literal' | 'prefixed',
    principal: w.principal ?? '',
    operation: (w.operation ?? '') as AclOperation,
    permission: (w.permission ?? '') as 'allow' | 'deny',
  };
}

/** The MqError of an answer's error code (undefined for NONE), with `context` (topic, partition, ...) on it. */
function errorOf(code: number | null | undefined, message: string | null | undefined, context: Record<string, unknown> = {}): MqError | undefined {
  const c = errorCodeFromNumber(code ?? 0);
  return c === 'NONE' ? undefined : new MqError(c, message || c, context);
}

interface WireTopicResult {
  name?: string | null;
  errorCode?: number | null;
  errorMessage?: string | null;
  numPartitions?: number | null;
  replicationFactor?: number | null;
  configs?: { [k: string]: string } | null;
  warning?: string | null;
}

// ---- scaleout
/** One partition's new replica set (preferred leader first), or null to cancel its reassignment in progress. */
export interface PartitionReassignment {
  topic: string;
  partition: number;
  replicas: number[] | null;
}

export interface AddingReplicaProgress {
  brokerId: number;
  /** -1: it has not fetched yet. */
  logEndOffset: number;
  offsetLag: number;
  /** Estimated bytes still to copy. */
  bytesBehind: number;
  inIsr: boolean;
}

/** One broker's log directory (describeLogDirs). */
export interface BrokerLogDir {
  brokerId: number;
  logDir: string;
  /** The file system holding it: size and bytes still free (-1: unknown). */
  totalBytes: number;
  usableBytes: number;
  /** `bytesInPerSec`: on the leader, record batch bytes produced per second over the last complete 10 s window (0 elsewhere). */
  replicas: Array<{ topic: string; partition: number; sizeBytes: number; offsetLag: number; leader: boolean; bytesInPerSec: number }>;
}

export interface OngoingReassignment {
  topic: string;
  partition: number;
  /** The current replica set: the original one followed by the adding replicas. */
  replicas: number[];
  targetReplicas: number[];
  addingReplicas: number[];
  removingReplicas: number[];
  leader: number;
  isr: number[];
  /** From the partition's leader (absent when it could not be asked). */
  progress?: { leaderLogEndOffset: number; leaderLogBytes: number; adding: AddingReplicaProgress[] };
}

export interface PartitionOutcome {
  topic: string;
  partition: number;
  /** Absent: done. */
  error?: MqError;
}

export interface DecommissionResult {
  /** Partitions whose move off the broker this call started. */
  moves: PartitionOutcome[];
  /** Partitions that still have a replica on the broker. */
  remainingReplicas: number;
}

interface WirePartitionResult {
  topic?: string | null;
  partition?: number | null;
  errorCode?: number | null;
  errorMessage?: string | null;
}

function outcome(r: WirePartitionResult): PartitionOutcome {
  const out: PartitionOutcome = { topic: r.topic ?? '', partition: r.partition ?? 0 };
  const error = errorOf(r.errorCode, r.errorMessage, { topic: out.topic, partition: out.partition });
  if (error) out.error = error;
  return out;
}

/** The metadata quorum's membership after a change. */
export interface QuorumMembership {
  voters: number[];
  learners: number[];
}

/** One member of the metadata quorum, as the active controller sees it. */
export interface QuorumMember {
  id: number;
  /** host:port of its Raft listener ('' when unknown). */
  address: string;
  /** A voter (else a learner still catching up). */
  voter: boolean;
  /** The last metadata log index the active controller knows it holds. */
  logEnd: number;
  /** Entries behind the active controller's log end. */
  lag: number;
  recentlyActive: boolean;
}

export interface QuorumDescription {
  leaderId: number;
  /** The Raft term of the active controller. */
  leaderEpoch: number;
  /** The metadata log's commit index. */
  highWatermark: number;
  members: QuorumMember[];
}

export class Admin {
  constructor(private readonly cluster: Cluster) {}

  /** Creates topics; throws (with every failure in the message) if any could not be created. */
  async createTopics(topics: readonly NewTopic[], options: AdminCallOptions & { validateOnly?: boolean } = {}): Promise<TopicResult[]> {
    if (!Array.isArray(topics) || topics.length === 0) throw invalidArgument('createTopics needs at least one topic');
    const wire = topics.map((t) => {
      if (!t || typeof t.topic !== 'string' || t.topic.length === 0) throw invalidArgument('each new topic needs a name');
      const numPartitions = t.numPartitions ?? 1;
      const replicationFactor = t.replicationFactor ?? 1;
      if (!Number.isInteger(numPartitions) || numPartitions < 1) {
        throw new MqError('INVALID_PARTITIONS', `topic "${t.topic}": partitions must be an integer >= 1, got ${numPartitions}`);
      }
      if (!Number.isInteger(replicationFactor) || replicationFactor < 1) {
        throw new MqError(
          'INVALID_REPLICATION_FACTOR',
          `topic "${t.topic}": replication factor must be an integer >= 1, got ${replicationFactor}`,
        );
      }
      return { name: t.topic, numPartitions, replicationFactor, configs: { ...(t.configs ?? {}) } };
    });
    const resp = await this.cluster.send(
      CONTROLLER,
      'createTopics',
      { topics: wire, timeoutMs: timeoutField(options, this.cluster), validateOnly: options.validateOnly ?? false },
      requestOptions(options),
    );
    const results = this.results(resp.results ?? [], 'create');
    for (const t of topics) this.cluster.invalidate(t.topic);
    return results;
  }

  async createTopic(topic: string, spec: Omit<NewTopic, 'topic'> = {}, options: AdminCallOptions = {}): Promise<TopicResult> {
    return (await this.createTopics([{ topic, ...spec }], options))[0]!;
  }

  async deleteTopics(topics: readonly string[], options: AdminCallOptions = {}): Promise<void> {
    if (!Array.isArray(topics) || topics.length === 0) throw invalidArgument('deleteTopics needs at least one topic');
    const resp = await this.cluster.send(
      CONTROLLER,
      'deleteTopics',
      { topics: [...topics], timeoutMs: timeoutField(options, this.cluster) },
      requestOptions(options),
    );
    this.results(resp.results ?? [], 'delete');
    for (const t of topics) this.cluster.invalidate(t);
  }

  /**
   * Adds partitions: `count` is the new total. Keyed records map to other
   * partitions afterwards (the result carries the broker's warning).
   */
  async createPartitions(
    topics: ReadonlyArray<{ topic: string; count: number }>,
    options: AdminCallOptions & { validateOnly?: boolean } = {},
  ): Promise<TopicResult[]> {
    if (!Array.isArray(topics) || topics.length === 0) throw invalidArgument('createPartitions needs at least one topic');
    const resp = await this.cluster.send(
      CONTROLLER,
      'createPartitions',
      {
        topics: topics.map((t) => ({ topic: t.topic, count: t.count })),
        timeoutMs: timeoutField(options, this.cluster),
        validateOnly: options.validateOnly ?? false,
      },
      requestOptions(options),
    );
    const results = this.results(resp.results ?? [], 'add partitions to');
    for (const t of topics) this.cluster.invalidate(t.topic);
    return results;
  }

  /** Names of every (non-internal) topic, sorted. */
  async listTopics(options: AdminCallOptions = {}): Promise<string[]> {
    const topics = await this.cluster.listTopics(options.signal);
    return topics.filter((t) => !t.internal).map((t) => t.name).sort();
  }

  /** Partitions with leader, replicas and ISR; UNKNOWN_TOPIC_OR_PARTITION for a topic that does not exist. */
  async describeTopics(topics: readonly string[], options: AdminCallOptions = {}): Promise<TopicDescription[]> {
    for (const t of topics) this.cluster.invalidate(t);
    await this.cluster.refreshMetadata(topics, options.signal);
    return topics.map((t) => {
      const d = this.cluster.cachedTopic(t);
      if (!d) throw this.cluster.missingTopicError(t);
      return d;
    });
  }

  async describeTopic(topic: string, options: AdminCallOptions = {}): Promise<TopicDescription> {
    return (await this.describeTopics([topic], options))[0]!;
  }

  async describeConfigs(
    request: { topics?: string[]; includeBroker?: boolean },
    options: AdminCallOptions = {},
  ): Promise<ConfigResource[]> {
    const resp = await this.cluster.send(
      { kind: 'any' },
      'describeConfigs',
      { topics: request.topics ?? [], includeBroker: request.includeBroker ?? false },
      requestOptions(options),
    );
    return (resp.results ?? []).map((r) => {
      const code = errorCodeFromNumber(r.errorCode ?? 0);
      if (code !== 'NONE') throw this.topicError(code, r.resource ?? '', r.errorMessage ?? '', 'describe');
      return {
        resource: r.resource ?? '',
        entries: (r.entries ?? []).map((e) => ({ name: e.name ?? '', value: e.value ?? '', source: e.source ?? '' })),
      };
    });
  }

  /**
   * Sets and removes some of a topic's own configs, keeping the others;
   * returns the topic's effective configs after the change (or what they
   * would be, with `validateOnly`).
   */
  async alterConfigs(topic: string, change: ConfigChange, options: AdminCallOptions & { validateOnly?: boolean } = {}): Promise<ConfigResource> {
    if (typeof topic !== 'string' || topic.length === 0) throw invalidArgument('alterConfigs needs a topic name');
    const set = { ...(change.set ?? {}) };
    const remove = [...(change.delete ?? [])];
    if (Object.keys(set).length === 0 && remove.length === 0) throw invalidArgument('alterConfigs needs at least one key to set or delete');
    for (const [k, v] of Object.entries(set)) {
      if (typeof v !== 'string') throw invalidArgument(`config ${k} must be a string value, got ${typeof v}`);
    }
    const resp = await this.cluster.send(
      CONTROLLER,
      'incrementalAlterConfigs',
      { resources: [{ topic, set, delete: remove }], validateOnly: options.validateOnly ?? false, timeoutMs: timeoutField(options, this.cluster) },
      requestOptions(options),
    );
    const r = (resp.results ?? []).find((x) => x.resource === topic);
    if (!r) throw new MqError('UNKNOWN', `the broker did not answer for topic "${topic}"`, { topic });
    const code = errorCodeFromNumber(r.errorCode ?? 0);
    if (code !== 'NONE') throw this.topicError(code, topic, r.errorMessage ?? '', 'alter the configs of');
    return { resource: topic, entries: (r.entries ?? []).map((e) => ({ name: e.name ?? '', value: e.value ?? '', source: e.source ?? '' })) };
  }

  /**
   * Deletes the records below an offset in partitions of one topic (each
   * partition's leader moves its log start up; -1 means the high
   * watermark). Returns each partition's new log start.
   */
  async deleteRecords(topic: string, partitions: readonly RecordsToDelete[], options: AdminCallOptions = {}): Promise<DeletedRecords[]> {
    if (!Array.isArray(partitions) || partitions.length === 0) throw invalidArgument('deleteRecords needs at least one partition');
    const meta = await this.cluster.topic(topic, options.signal);
    for (const { partition, offset } of partitions) {
      if (!meta.partitions[partition]) {
        throw new MqError('UNKNOWN_TOPIC_OR_PARTITION', `partition ${partition} of topic "${topic}" does not exist (it has ${meta.partitions.length})`, {
          topic,
          partition,
          retriable: false,
        });
      }
      if (!Number.isSafeInteger(offset) || offset < -1) throw invalidArgument(`offset must be an integer >= 0, or -1 for the high watermark, got ${String(offset)}`);
    }
    const byLeader = new Map<number, RecordsToDelete[]>();
    for (const p of partitions) {
      const leader = this.cluster.leaderOf(topic, p.partition);
      let l = byLeader.get(leader);
      if (!l) byLeader.set(leader, (l = []));
      l.push(p);
    }
    const out: DeletedRecords[] = [];
    await Promise.all(
      [...byLeader].map(async ([leader, parts]) => {
        const resp = await this.cluster.send(
          () => ({ kind: 'broker', id: leader >= 0 ? this.cluster.leaderOf(topic, parts[0]!.partition) : leader }),
          'deleteRecords',
          { topics: [{ name: topic, partitions: parts.map((p) => ({ partition: p.partition, offset: p.offset })) }], timeoutMs: timeoutField(options, this.cluster) },
          requestOptions(options),
        );
        for (const p of resp.topics?.find((t) => t.name === topic)?.partitions ?? []) {
          const code = errorCodeFromNumber(p.errorCode ?? 0);
          if (code !== 'NONE') throw this.topicError(code, topic, p.errorMessage ?? '', 'delete records of');
          out.push({ partition: p.partition ?? 0, low: Number(p.lowWatermark ?? -1) });
        }
      }),
    );
    return out.sort((a, b) => a.partition - b.partition);
  }

  /** `{low, high}` of one partition, from its leader. */
  async watermarks(topic: string, partition: number, options: AdminCallOptions = {}): Promise<Watermarks> {
    const [o] = await this.listOffsets(topic, [{ partition, spec: 'latest' }], options);
    return { low: o!.low, high: o!.high };
  }

  /** Offsets by spec (earliest, latest, or the first at or after a timestamp) for partitions of one topic. */
  async listOffsets(
    topic: string,
    partitions: ReadonlyArray<{ partition: number; spec: OffsetSpec }>,
    options: AdminCallOptions = {},
  ): Promise<ListedOffset[]> {
    const meta = await this.cluster.topic(topic, options.signal);
    for (const { partition } of partitions) {
      if (!meta.partitions[partition]) {
        throw new MqError(
          'UNKNOWN_TOPIC_OR_PARTITION',
          `partition ${partition} of topic "${topic}" does not exist (it has ${meta.partitions.length})`,
          { topic, partition, retriable: false },
        );
      }
    }
    const byLeader = new Map<number, Array<{ partition: number; timestamp: number }>>();
    for (const { partition, spec } of partitions) {
      const leader = this.cluster.leaderOf(topic, partition);
      const timestamp = spec === 'earliest' ? EARLIEST_TIMESTAMP : spec === 'latest' ? LATEST_TIMESTAMP : spec;
      if (!Number.isSafeInteger(timestamp) || (timestamp < 0 && timestamp !== EARLIEST_TIMESTAMP && timestamp !== LATEST_TIMESTAMP)) {
        throw invalidArgument(`offset spec must be earliest, latest or a timestamp in ms, got ${String(spec)}`);
      }
      let l = byLeader.get(leader);
      if (!l) byLeader.set(leader, (l = []));
      l.push({ partition, timestamp });
    }
    const out: ListedOffset[] = [];
    await Promise.all(
      [...byLeader].map(async ([leader, parts]) => {
        const resp = await this.cluster.send(
          () => ({ kind: 'broker', id: leader >= 0 ? this.cluster.leaderOf(topic, parts[0]!.partition) : leader }),
          'listOffsets',
          {
            replicaId: -1,
            topics: [{ name: topic, partitions: parts.map((p) => ({ ...p, currentLeaderEpoch: -1 })) }],
          },
          requestOptions(options),
        );
        for (const p of resp.topics?.find((t) => t.name === topic)?.partitions ?? []) {
          const code = errorCodeFromNumber(p.errorCode ?? 0);
          if (code !== 'NONE') throw this.topicError(code, topic, p.errorMessage ?? '', 'list offsets of');
          out.push({
            partition: p.partition ?? 0,
            offset: Number(p.offset ?? -1),
            timestamp: Number(p.timestamp ?? -1),
            low: Number(p.logStartOffset ?? 0),
            high: Number(p.highWatermark ?? 0),
          });
        }
      }),
    );
    return out.sort((a, b) => a.partition - b.partition);
  }

  async describeCluster(options: AdminCallOptions = {}): Promise<ClusterDescription> {
    await this.cluster.refreshMetadata([], options.signal);
    return {
      clusterId: this.cluster.clusterId,
      controllerId: this.cluster.controllerId,
      brokers: [...this.cluster.brokers.values()].sort((a, b) => a.id - b.id),
    };
  }

  // ---- users (SASL SCRAM credentials) and ACLs

  /**
   * Creates a user, or sets a new password, for one SCRAM mechanism (default
   * both). The credential (salt, iterations, StoredKey, ServerKey) is computed
   * here: the password never leaves this process.
   */
  async createUser(user: string, password: string, options: AdminCallOptions & { mechanisms?: ScramMechanismName[]; iterations?: number } = {}): Promise<void> {
    if (typeof user !== 'string' || user.length === 0) throw invalidArgument('createUser needs a user name');
    if (typeof password !== 'string' || password.length === 0) throw invalidArgument('createUser needs a non-empty password');
    const { scramCredential } = await import('@mq/protocol/scram');
    const upsertions = await Promise.all(
      (options.mechanisms ?? ['SCRAM-SHA-256', 'SCRAM-SHA-512']).map(async (mechanism) => {
        const c = await scramCredential(mechanism, password, options.iterations !== undefined ? { iterations: options.iterations } : {});
        return { user, mechanism, iterations: c.iterations, salt: c.salt, storedKey: c.storedKey, serverKey: c.serverKey };
      }),
    );
    const resp = await this.cluster.send(CONTROLLER, 'alterUserScramCredentials', { upsertions }, requestOptions(options));
    this.userResults(resp.results ?? []);
  }

  /** Deletes a user's credential for one mechanism, or all of them. */
  async deleteUser(user: string, options: AdminCallOptions & { mechanism?: ScramMechanismName } = {}): Promise<void> {
    const resp = await this.cluster.send(CONTROLLER, 'alterUserScramCredentials', { deletions: [{ user, mechanism: options.mechanism ?? '' }] }, requestOptions(options));
    this.userResults(resp.results ?? []);
  }

  /** Users with SCRAM credentials, with their mechanisms and iteration counts. */
  async listUsers(options: AdminCallOptions = {}): Promise<UserDescription[]> {
    const resp = await this.cluster.send(CONTROLLER, 'describeUserScramCredentials', { users: [] }, requestOptions(options));
    return (resp.results ?? []).map((r) => ({
      user: r.user ?? '',
      credentials: (r.credentials ?? []).map((c) => ({ mechanism: (c.mechanism ?? '') as ScramMechanismName, iterations: c.iterations ?? 0 })),
    }));
  }

  /** Adds ACLs (an existing identical ACL is kept once). */
  async createAcls(acls: readonly Acl[], options: AdminCallOptions = {}): Promise<void> {
    if (!Array.isArray(acls) || acls.length === 0) throw invalidArgument('createAcls needs at least one ACL');
    const resp = await this.cluster.send(CONTROLLER, 'createAcls', { creations: acls.map(wireAcl) }, requestOptions(options));
    const failed = (resp.results ?? []).map((r) => errorOf(r.errorCode, r.errorMessage)).filter((e): e is MqError => e !== undefined);
    if (failed.length > 0) throw new MqError(failed[0]!.code, failed.map((f) => f.message).join('; '));
  }

  /** Removes every ACL matching one of the filters (an absent field matches anything); returns what was removed. */
  async deleteAcls(filters: readonly AclFilter[], options: AdminCallOptions = {}): Promise<Acl[]> {
    if (!Array.isArray(filters) || filters.length === 0) throw invalidArgument('deleteAcls needs at least one filter');
    const resp = await this.cluster.send(CONTROLLER, 'deleteAcls', { filters: filters.map(wireAcl) }, requestOptions(options));
    const out: Acl[] = [];
    for (const r of resp.results ?? []) {
      const e = errorOf(r.errorCode, r.errorMessage);
      if (e) throw e;
      out.push(...(r.deleted ?? []).map(aclOf));
    }
    return out;
  }

  /** The ACLs matching `filter` (default: all). */
  async describeAcls(filter: AclFilter = {}, options: AdminCallOptions = {}): Promise<Acl[]> {
    const resp = await this.cluster.send(CONTROLLER, 'describeAcls', { filter: wireAcl(filter) }, requestOptions(options));
    const e = errorOf(resp.errorCode, resp.errorMessage);
    if (e) throw e;
    return (resp.acls ?? []).map(aclOf);
  }

  private userResults(results: ReadonlyArray<{ user?: string | null; errorCode?: number | null; errorMessage?: string | null }>): void {
    for (const r of results) {
      const e = errorOf(r.errorCode, r.errorMessage);
      if (e) throw new MqError(e.code, `user "${r.user ?? ''}": ${e.message}`, { user: r.user });
    }
  }

  // ---- scaleout: partition reassignment, preferred-leader election, decommission

  /**
   * Starts (or, replicas null, cancels) partition reassignments. Throws the
   * refusal when any partition was refused (with every one in the message and
   * `errors`); the others were started. A replica count other than the
   * current one needs `allowReplicationFactorChange`.
   */
  async alterPartitionReassignments(
    moves: readonly PartitionReassignment[],
    options: AdminCallOptions & { allowReplicationFactorChange?: boolean } = {},
  ): Promise<PartitionOutcome[]> {
    if (!Array.isArray(moves) || moves.length === 0) throw invalidArgument('alterPartitionReassignments needs at least one partition');
    const byTopic = new Map<string, { partition: number; replicas: number[]; cancel: boolean }[]>();
    for (const m of moves) {
      if (!m || typeof m.topic !== 'string' || !Number.isInteger(m.partition) || m.partition < 0) throw invalidArgument('each reassignment needs a topic and a partition >= 0');
      if (m.replicas !== null && (!Array.isArray(m.replicas) || m.replicas.some((id: number) => !Number.isInteger(id) || id < 0))) {
        throw invalidArgument(`${m.topic}-${m.partition}: replicas must be broker ids (integers >= 0), or null to cancel`);
      }
      let l = byTopic.get(m.topic);
      if (!l) byTopic.set(m.topic, (l = []));
      l.push({ partition: m.partition, replicas: m.replicas ? [...m.replicas] : [], cancel: m.replicas === null });
    }
    const resp = await this.cluster.send(
      CONTROLLER,
      'alterPartitionReassignments',
      {
        topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })),
        timeoutMs: timeoutField(options, this.cluster),
        allowReplicationFactorChange: options.allowReplicationFactorChange ?? false,
      },
      requestOptions(options),
    );
    const out = (resp.results ?? []).map(outcome);
    for (const t of byTopic.keys()) this.cluster.invalidate(t);
    const failures = out.flatMap((o) => (o.error ? [o.error] : []));
    const [first] = failures;
    if (first && failures.length === 1) throw first;
    if (first) throw new MqError(first.code, failures.map((f) => f.message).join('; '), { errors: failures, results: out });
    return out;
  }

  /** Moves one partition to `replicas` (preferred leader first). */
  async reassignPartition(topic: string, partition: number, replicas: number[], options: AdminCallOptions & { allowReplicationFactorChange?: boolean } = {}): Promise<void> {
    await this.alterPartitionReassignments([{ topic, partition, replicas }], options);
  }

  /** Cancels a partition's reassignment in progress: its original replica set is restored. */
  async cancelPartitionReassignment(topic: string, partition: number, options: AdminCallOptions = {}): Promise<void> {
    await this.alterPartitionReassignments([{ topic, partition, replicas: null }], options);
  }

  /** Reassignments in progress (of `topics`, or all), with each move's progress as its partition's leader reports it. */
  async listPartitionReassignments(topics: readonly string[] = [], options: AdminCallOptions = {}): Promise<OngoingReassignment[]> {
    const list = await this.cluster.send({ kind: 'any' }, 'listPartitionReassignments', { topics: [...topics] }, requestOptions(options));
    const toOngoing = (r: NonNullable<typeof list.reassignments>[number]): OngoingReassignment => {
      const o: OngoingReassignment = {
        topic: r.topic ?? '',
        partition: r.partition ?? 0,
        replicas: [...(r.replicas ?? [])],
        targetReplicas: [...(r.targetReplicas ?? [])],
        addingReplicas: [...(r.addingReplicas ?? [])],
        removingReplicas: [...(r.removingReplicas ?? [])],
        leader: r.leader ?? -1,
        isr: [...(r.isr ?? [])],
      };
      if (r.progressKnown) {
        o.progress = {
          leaderLogEndOffset: Number(r.leaderLogEndOffset ?? 0),
          leaderLogBytes: Number(r.leaderLogBytes ?? 0),
          adding: (r.addingProgress ?? []).map((a) => ({
            brokerId: a.brokerId ?? 0,
            logEndOffset: Number(a.logEndOffset ?? -1),
            offsetLag: Number(a.offsetLag ?? 0),
            bytesBehind: Number(a.bytesBehind ?? 0),
            inIsr: a.inIsr ?? false,
          })),
        };
      }
      return o;
    };
    const out = (list.reassignments ?? []).map(toOngoing);
    // The progress of a move is known to its partition's leader: ask each leader once, in parallel.
    const leaders = [...new Set(out.filter((o) => !o.progress && o.leader >= 0 && o.leader !== list.brokerId).map((o) => o.leader))];
    await Promise.all(
      leaders.map(async (id) => {
        try {
          // One bounded try per leader (a leader that just died is not waited for: its progress stays unknown).
          const limit = AbortSignal.timeout(Math.min(options.timeoutMs ?? 3000, 3000));
          const signal = options.signal ? AbortSignal.any([options.signal, limit]) : limit;
          const r = await this.cluster.send({ kind: 'broker', id }, 'listPartitionReassignments', { topics: [...topics] }, { signal, timeoutMs: 3000 });
          for (const e of r.reassignments ?? []) {
            if (!e.progressKnown) continue;
            const i = out.findIndex((o) => o.topic === e.topic && o.partition === e.partition && !o.progress);
            if (i >= 0) out[i] = toOngoing(e);
          }
        } catch {
          // Progress stays unknown for that leader's partitions; the list itself is complete.
        }
      }),
    );
    return out;
  }

  /**
   * Preferred-leader election: moves leadership to each partition's first
   * replica where it is alive and in the ISR (the mechanism of the automatic
   * one). `topics` absent: every partition; a topic without partitions: all of
   * its partitions. Named partitions get an outcome each (ELECTION_NOT_NEEDED
   * when the preferred replica already leads).
   */
  async electLeaders(topics?: ReadonlyArray<{ topic: string; partitions?: number[] }>, options: AdminCallOptions = {}): Promise<{ moved: number; results: PartitionOutcome[] }> {
    const resp = await this.cluster.send(
      CONTROLLER,
      'electLeaders',
      { topics: (topics ?? []).map((t) => ({ name: t.topic, partitions: [...(t.partitions ?? [])] })), timeoutMs: timeoutField(options, this.cluster) },
      requestOptions(options),
    );
    for (const t of topics ?? []) this.cluster.invalidate(t.topic);
    return { moved: resp.moved ?? 0, results: (resp.results ?? []).map(outcome) };
  }

  /**
   * Decommissions a broker: no replica is placed on it any more and every
   * replica it holds starts moving to the other brokers. Refused
   * (INVALID_REPLICATION_FACTOR) when they cannot hold a partition's
   * replication factor. Call again (or watch listPartitionReassignments)
   * until `remainingReplicas` is 0, then stop the broker. `cancel`: it takes
   * replicas again.
   */
  async decommissionBroker(brokerId: number, options: AdminCallOptions & { cancel?: boolean } = {}): Promise<DecommissionResult> {
    if (!Number.isInteger(brokerId) || brokerId < 1) throw invalidArgument(`a broker id is an integer >= 1, got ${brokerId}`);
    const resp = await this.cluster.send(
      CONTROLLER,
      'decommissionBroker',
      { brokerId, cancel: options.cancel ?? false, timeoutMs: timeoutField(options, this.cluster) },
      requestOptions(options),
    );
    return { moves: (resp.moves ?? []).map(outcome), remainingReplicas: resp.remainingReplicas ?? 0 };
  }

  /**
   * The replication throttle of reassignment moves: each broker's replicas
   * being added copy at most `bytesPerSec` in total (0: no limit); takes
   * effect at once, also on moves in progress. Returns the previous value.
   * Without an argument, only reads it.
   */
  async replicationThrottle(bytesPerSec?: number, options: AdminCallOptions = {}): Promise<{ bytesPerSec: number; previous: number }> {
    if (bytesPerSec !== undefined && (!Number.isSafeInteger(bytesPerSec) || bytesPerSec < 0)) throw invalidArgument(`the replication throttle is a number of bytes per second >= 0 (0: none), got ${bytesPerSec}`);
    const resp = await this.cluster.send(CONTROLLER, 'alterReplicationThrottle', { bytesPerSec: bytesPerSec ?? -1, timeoutMs: timeoutField(options, this.cluster) }, requestOptions(options));
    return { bytesPerSec: Number(resp.bytesPerSec ?? 0), previous: Number(resp.previousBytesPerSec ?? 0) };
  }

  // ---- controller quorum membership (Kafka's KIP-853)

  /**
   * Adds controller `id`, whose Raft listener is `address` (host:port), to
   * the metadata quorum: it joins as a learner, catches up with the log,
   * then becomes a voter. The process must already run with
   * controller.raft.address set to `address`. Refused with DUPLICATE_VOTER
   * when it is a voter, VOTER_CHANGE_IN_PROGRESS (retriable) while another
   * change is not done.
   */
  async addRaftVoter(id: number, address: string, options: AdminCallOptions = {}): Promise<QuorumMembership> {
    if (!Number.isSafeInteger(id) || id < 1) throw invalidArgument(`a controller id is an integer >= 1, got ${id}`);
    if (typeof address !== 'string' || !/^.+:\d{1,5}$/.test(address)) throw invalidArgument(`the address is host:port of the controller's Raft listener, got ${JSON.stringify(address)}`);
    return this.alterRaftVoters({ voterId: id, address, remove: false }, options);
  }

  /**
   * Removes controller `id` (a voter or a learner) from the metadata quorum.
   * Refused for a non-member (UNKNOWN_NODE) and for the last voter. The
   * active controller removing itself steps down once the change commits.
   */
  async removeRaftVoter(id: number, options: AdminCallOptions = {}): Promise<QuorumMembership> {
    if (!Number.isSafeInteger(id) || id < 1) throw invalidArgument(`a controller id is an integer >= 1, got ${id}`);
    return this.alterRaftVoters({ voterId: id, address: '', remove: true }, options);
  }

  private async alterRaftVoters(req: { voterId: number; address: string; remove: boolean }, options: AdminCallOptions): Promise<QuorumMembership> {
    const timeoutMs = timeoutField(options, this.cluster);
    // The controller answers within timeoutMs (an add that did not catch up is undone in it); the answer gets a margin to travel.
    const r = await this.cluster.send({ kind: 'any' }, 'alterRaftVoters', { ...req, timeoutMs }, { signal: options.signal, timeoutMs: timeoutMs + 5000 });
    return { voters: [...(r.voters ?? [])], learners: [...(r.learners ?? [])] };
  }

  /** The metadata quorum: the active controller, and each voter's and learner's address, log end and lag. */
  async describeQuorum(options: AdminCallOptions = {}): Promise<QuorumDescription> {
    const r = await this.cluster.send({ kind: 'any' }, 'describeQuorum', {}, requestOptions(options));
    return {
      leaderId: r.leaderId ?? -1,
      leaderEpoch: Number(r.leaderEpoch ?? 0),
      highWatermark: Number(r.highWatermark ?? 0),
      members: (r.members ?? []).map((m) => ({
        id: m.id ?? 0,
        address: m.address ?? '',
        voter: m.voter ?? false,
        logEnd: Number(m.logEnd ?? 0),
        lag: Number(m.lag ?? 0),
        recentlyActive: m.recentlyActive ?? false,
      })),
    };
  }

  // ---- log dirs

  /**
   * The partition replicas one broker hosts, their size on its disk, and its
   * file system's size and free room (Kafka's DescribeLogDirs, one log
   * directory per broker); `topics` narrows the replicas listed.
   */
  async describeLogDirs(brokerId: number, topics: readonly string[] = [], options: AdminCallOptions = {}): Promise<BrokerLogDir> {
    if (!Number.isInteger(brokerId) || brokerId < 0) throw invalidArgument(`a broker id is an integer >= 0, got ${brokerId}`);
    const r = await this.cluster.send({ kind: 'broker', id: brokerId }, 'describeLogDirs', { topics: [...topics] }, requestOptions(options));
    const err = errorOf(r.errorCode, r.errorMessage);
    if (err) throw err;
    return {
      brokerId: r.brokerId ?? brokerId,
      logDir: r.logDir ?? '',
      totalBytes: Number(r.totalBytes ?? -1),
      usableBytes: Number(r.usableBytes ?? -1),
      replicas: (r.replicas ?? []).map((x) => ({ topic: x.topic ?? '', partition: x.partition ?? 0, sizeBytes: Number(x.sizeBytes ?? 0), offsetLag: Number(x.offsetLag ?? 0), leader: x.leader === true, bytesInPerSec: x.bytesInPerSec ?? 0 })),
    };
  }

  // ---- quotas

  /**
   * Sets and removes client quotas (Kafka's AlterClientQuotas). The request is
   * checked whole: a bad entity, key or value refuses all of it with
   * INVALID_REQUEST and nothing changes. `validateOnly`: check only.
   */
  async alterClientQuotas(alterations: readonly ClientQuotaAlteration[], options: AdminCallOptions & { validateOnly?: boolean } = {}): Promise<void> {
    if (!Array.isArray(alterations) || alterations.length === 0) throw invalidArgument('alterClientQuotas needs at least one alteration');
    const wire = alterations.map((a) => ({
      entity: { user: a.entity?.user ?? '', clientId: a.entity?.clientId ?? '' },
      ops: [...Object.entries(a.set ?? {}).map(([key, value]) => ({ key, value })), ...(a.remove ?? []).map((key: ClientQuotaKey) => ({ key, remove: true }))],
    }));
    const resp = await this.cluster.send(CONTROLLER, 'alterClientQuotas', { alterations: wire, validateOnly: options.validateOnly === true }, requestOptions(options));
    for (const r of resp.results ?? []) {
      const e = errorOf(r.errorCode, r.errorMessage);
      if (e) throw e;
    }
  }

  /** The client quotas whose entity matches (an absent field matches anything). */
  async describeClientQuotas(filter: ClientQuotaEntity = {}, options: AdminCallOptions = {}): Promise<ClientQuota[]> {
    const resp = await this.cluster.send(CONTROLLER, 'describeClientQuotas', { user: filter.user ?? '', clientId: filter.clientId ?? '' }, requestOptions(options));
    const e = errorOf(resp.errorCode, resp.errorMessage);
    if (e) throw e;
    return (resp.entries ?? []).map((q) => ({
      entity: { ...(q.entity?.user ? { user: q.entity.user } : {}), ...(q.entity?.clientId ? { clientId: q.entity.clientId } : {}) },
      values: Object.fromEntries((q.values ?? []).map((v) => [v.key ?? '', v.value ?? 0])) as ClientQuota['values'],
    }));
  }

  private results(results: readonly WireTopicResult[], verb: string): TopicResult[] {
    const failures: MqError[] = [];
    const out: TopicResult[] = [];
    for (const r of results) {
      const name = r.name ?? '';
      const code = errorCodeFromNumber(r.errorCode ?? 0);
      if (code !== 'NONE') {
        failures.push(this.topicError(code, name, r.errorMessage ?? '', verb));
        continue;
      }
      const res: TopicResult = {
        topic: name,
        numPartitions: r.numPartitions ?? 0,
        replicationFactor: r.replicationFactor ?? 0,
        configs: { ...(r.configs ?? {}) },
      };
      if (r.warning) res.warning = r.warning;
      out.push(res);
    }
    const [first] = failures;
    if (first && failures.length === 1) throw first;
    if (failures.length > 1) {
      throw new MqError(failures[0]!.code, failures.map((f) => f.message).join('; '), { errors: failures, succeeded: out });
    }
    return out;
  }

  private topicError(code: ErrorCode, topic: string, message: string, verb: string): MqError {
    if (code === 'UNKNOWN_TOPIC_OR_PARTITION') return unknownTopicError(topic);
    if (code === 'TOPIC_ALREADY_EXISTS') {
      return new MqError(code, `topic "${topic}" already exists`, { topic });
    }
    return new MqError(code, message ? `cannot ${verb} topic "${topic}": ${message}` : `cannot ${verb} topic "${topic}": ${code}`, {
      topic,
    });
  }
}
