/**
 * The controller's state machine: applies committed metadata commands to the
 * cluster metadata, deterministically (no clock, no randomness, no I/O), so
 * every broker that applies the same log holds the same metadata. Leader
 * elections happen here, as consequences of fencing and unfencing brokers:
 * a new leader is chosen only from the ISR, in replica order (the preferred
 * replica first), unless the topic allows unclean election.
 *
 * Unclean recovery (KIP-966 in spirit): a broker that restarted after an
 * unclean shutdown (flush `os`/`interval`) may have lost a tail it
 * acknowledged. When a partition has no trusted live ISR member, it is not
 * handed to the first live candidate: its candidates (ISR, ELR and the last
 * ISR members that left by being fenced or restarting) report their log
 * ends (`reportLogEnds`), and the longest log in (lastEpoch, endOffset)
 * order is elected once every candidate has reported, or when the active
 * controller's wait runs out (`electRecovered`).
 */
import type { Entry, StateMachine } from '@mq/consensus';
import { isMqError } from '@mq/protocol/errors';
import { mergeTopicConfigs } from '../config/alter-topic-configs.js';
import { collisionKey } from '@mq/protocol/topic-name';
import { decodeCommand, type CommandResult, type MetadataCommand } from './commands.js';
import { assignReplicas } from './placement.js';
import { toBase64, type ScramCredential, type ScramMechanism } from '@mq/protocol/scram';
import { matchesFilter, sameAcl, type AclEntry } from '../security/acl.js';
import { entityKey, type ClientQuota, type QuotaValues } from '../quota/entity.js';
import type { BrokerRegistration, MetadataDelta, PartitionRecord, QuorumAddress, RecoveryElection, ReplicaLogEnd, TopicRecord } from './types.js';

export const PRODUCER_ID_BLOCK = 1000;
/** The fence reason a broker gives for its own controlled shutdown. */
export const CONTROLLED_SHUTDOWN = 'controlled shutdown';

/** Delegated logins one broker may hold at once (each HTTP consumer instance principal has one; http.consumer.max.instances is 100 by default). */
export const MAX_DELEGATED_LOGINS_PER_BROKER = 10_000;

/** A delegated login: who it logs in as, and the broker run that made it. */
interface DelegatedLogin {
  principal: string;
  brokerId: number;
  incarnation: string;
}

interface Snapshot {
  version: 1;
  brokers: BrokerRegistration[];
  topics: TopicRecord[];
  nextProducerId: number;
  placementCursor: number;
  // ---- security (absent in snapshots from before it)
  scram?: Array<{ user: string; mechanism: ScramMechanism; iterations: number; salt: string; storedKey: string; serverKey: string }>;
  logins?: Array<{ tokenHash: string } & DelegatedLogin>;
  acls?: AclEntry[];
  // ---- scaleout (absent in older snapshots: 0)
  replicationThrottle?: number;
  // ---- quotas (absent in older snapshots: none)
  quotas?: ClientQuota[];
  // ---- controller quorum membership: Raft listeners learned from membership changes (absent: none)
  quorumAddresses?: QuorumAddress[];
  /** Controllers' inter-broker listeners (registerController; absent: none). */
  controllers?: QuorumAddress[];
}

type MutablePartition = { -readonly [K in keyof PartitionRecord]: PartitionRecord[K] };

class Delta {
  brokers = false;
  topics = new Set<string>();
  deletedTopics: { name: string; topicId: string; partitions: number }[] = [];
  uncleanElections: { topic: string; partition: number; leader: number }[] = [];
  recoveryElections: RecoveryElection[] = [];
  security = false;
}

/** A leaderless partition waiting for its candidates' log ends (see {@link MetadataState.pendingRecoveries}). */
export interface PendingRecovery {
  topic: string;
  /** The incarnation waiting (a topic deleted and created again waits afresh). */
  topicId: string;
  partition: number;
  leaderEpoch: number;
  /** Every candidate: ISR, ELR and last ISR members. */
  candidates: number[];
  /** Candidates not heard from (no report from their current run). */
  missing: number[];
  /** Candidates that reported a longer log than every live reporter but are still fenced: the election waits for them too. */
  fenced: number[];
  /** Whether `electRecovered` would elect someone now (a live ISR or ELR member has reported). */
  electable: boolean;
}

/** One partition's answer to alterReassignments (no code: accepted). */
export interface ReassignmentResult {
  topic: string;
  partition: number;
  code?: string;
  message?: string;
}

function refuse(code: string, message: string): CommandResult {
  return { ok: false, code, message };
}

export class MetadataState implements StateMachine {
  private brokersById = new Map<number, BrokerRegistration>();
  private topicsByName = new Map<string, TopicRecord>();
  private nextProducerId = 0;
  private placementCursor = 0;
  // ---- scaleout
  private throttle = 0;
  private appliedIndex = 0;
  // ---- security: SCRAM credentials by user and mechanism, and the ACLs (see security/)
  private scram = new Map<string, Map<ScramMechanism, ScramCredential>>();
  /** Delegated logins (HTTP consumer instances' clients, valid on every broker): token SHA-256 → who and whose run made it. */
  private logins = new Map<string, DelegatedLogin>();
  private aclList: readonly AclEntry[] = [];
  private readonly listeners = new Set<(delta: MetadataDelta) => void>();
  // ---- quotas: by entity key (quota/entity.ts); the version changes with every change (the brokers' resolution caches key on it)
  private quotaMap = new Map<string, ClientQuota>();
  private quotaVersion = 0;
  // ---- controller quorum membership: the Raft listener of each controller added by a membership change
  // (quorum.ts; the founding voters' come from controller.quorum.voters). In the snapshot, so a voter
  // restarting from one, or a controller joining through one, knows every member's address.
  private quorumAddressMap = new Map<number, QuorumAddress>();
  /** Each controller's inter-broker listener as it last registered it (registerController): where brokers reach it. */
  private controllerMap = new Map<number, QuorumAddress>();

  get lastApplied(): number {
    return this.appliedIndex;
  }

  brokers(): BrokerRegistration[] {
    return [...this.brokersById.values()].sort((a, b) => a.id - b.id);
  }

  broker(id: number): BrokerRegistration | undefined {
    return this.brokersById.get(id);
  }

  topics(): TopicRecord[] {
    return [...this.topicsByName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  topic(name: string): TopicRecord | undefined {
    return this.topicsByName.get(name);
  }

  /** An existing topic whose name differs from `name` only by '.' versus '_' (they collide in metric names, as in Kafka). */
  collidingTopic(name: string): string | undefined {
    const key = collisionKey(name);
    for (const n of this.topicsByName.keys()) if (n !== name && collisionKey(n) === key) return n;
    return undefined;
  }

  /** Partition replicas in the cluster (every topic's partitions times their replicas). */
  replicaCount(): number {
    let n = 0;
    for (const t of this.topicsByName.values()) for (const p of t.partitions) n += p.replicas.length;
    return n;
  }

  // ---- security
  /** A user's stored SCRAM credential for `mechanism`. */
  /** The principal of a delegated login by its token's SHA-256 (base64), while it lasts. */
  delegatedLogin(tokenHash: string): string | undefined {
    return this.logins.get(tokenHash)?.principal;
  }

  scramCredential(user: string, mechanism: ScramMechanism): ScramCredential | undefined {
    return this.scram.get(user)?.get(mechanism);
  }

  /** Every user with a SCRAM credential, by name, with its mechanisms and iterations (no keys). */
  scramUsers(): Array<{ user: string; credentials: Array<{ mechanism: ScramMechanism; iterations: number }> }> {
    return [...this.scram.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([user, m]) => ({ user, credentials: [...m.values()].map((c) => ({ mechanism: c.mechanism, iterations: c.iterations })) }));
  }

  get userCount(): number {
    return this.scram.size;
  }

  // ---- quotas

  /** Every entity with a quota, with its values. */
  clientQuotas(): ClientQuota[] {
    return [...this.quotaMap.values()].map((q) => ({ entity: { ...q.entity }, values: { ...q.values } }));
  }

  /** An entity's quota values (by quota/entity.ts entityKey). */
  quotaValues(key: string): QuotaValues | undefined {
    return this.quotaMap.get(key)?.values;
  }

  get quotaCount(): number {
    return this.quotaMap.size;
  }

  /** Changes whenever the quotas change. */
  get quotasVersion(): number {
    return this.quotaVersion;
  }

  acls(): readonly AclEntry[] {
    return this.aclList;
  }

  /** Called after every applied command that changed something. */
  onChange(fn: (delta: MetadataDelta) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  apply(entry: Entry): CommandResult | null {
    this.appliedIndex = entry.index;
    if (entry.data.length === 0) return null;
    let cmd: MetadataCommand;
    try {
      cmd = decodeCommand(entry.data);
    } catch (err) {
      return refuse(isMqError(err) ? err.code : 'INVALID_REQUEST', (err as Error).message);
    }
    return this.applyCommand(cmd, entry.index);
  }

  /** Applies one command at log index `index` (also used directly by tests). */
  /** The Raft listener a membership change recorded for controller `id` (undefined: none recorded). */
  quorumAddress(id: number): QuorumAddress | undefined {
    return this.quorumAddressMap.get(id);
  }

  /** Controller `id`'s inter-broker listener as it registered it (undefined: it never did). */
  controllerEndpoint(id: number): QuorumAddress | undefined {
    return this.controllerMap.get(id);
  }

  /** Every registered controller's inter-broker listener, by id. */
  controllerEndpoints(): QuorumAddress[] {
    return [...this.controllerMap.values()].sort((a, b) => a.id - b.id);
  }

  /**
   * A committed membership change of the metadata quorum (MetadataFeed's
   * applyConfChange): an addition with an address records it, a removal
   * forgets it.
   */
  applyQuorumChange(id: number, removed: boolean, address: QuorumAddress | undefined): void {
    if (removed) this.quorumAddressMap.delete(id);
    else if (address) this.quorumAddressMap.set(id, { id, host: address.host, port: address.port });
  }

  applyCommand(cmd: MetadataCommand, index: number): CommandResult {
    this.appliedIndex = Math.max(this.appliedIndex, index);
    const d = new Delta();
    const result = this.dispatch(cmd, index, d);
    if (d.brokers || d.topics.size > 0 || d.deletedTopics.length > 0 || d.security) {
      const delta: MetadataDelta = {
        ...(d.security ? { security: true } : {}),
        index,
        brokers: d.brokers,
        topics: [...d.topics],
        deletedTopics: d.deletedTopics,
        uncleanElections: d.uncleanElections,
        recoveryElections: d.recoveryElections,
      };
      for (const l of [...this.listeners]) l(delta);
    }
    return result;
  }

  private dispatch(cmd: MetadataCommand, index: number, d: Delta): CommandResult {
    switch (cmd.type) {
      case 'registerBroker': {
        const old = this.brokersById.get(cmd.id);
        if (old && old.incarnation === cmd.incarnation) {
          // A retried registration of the same run: same epoch.
          if (old.host !== cmd.host || old.port !== cmd.port || old.httpPort !== cmd.httpPort || old.interBrokerPort !== cmd.interBrokerPort || old.kafkaHost !== cmd.kafkaHost || old.kafkaPort !== cmd.kafkaPort || old.rack !== cmd.rack) {
            return refuse('DUPLICATE_BROKER_REGISTRATION', `broker ${cmd.id} run ${cmd.incarnation} registered before with other endpoints`);
          }
          return { ok: true, value: { brokerEpoch: old.brokerEpoch } };
        }
        // A new run (first start or restart): registered fenced; the controller unfences it once it is heard from.
        // A restarted broker may have lost its log tail (or its whole disk): it leaves every ISR it could leave
        // and leads nothing until it has caught up again and a leader lets it back in.
        const reg: BrokerRegistration = {
          id: cmd.id,
          host: cmd.host,
          port: cmd.port,
          httpPort: cmd.httpPort,
          ...(cmd.interBrokerPort !== undefined ? { interBrokerPort: cmd.interBrokerPort } : {}),
          ...(cmd.kafkaPort !== undefined && cmd.kafkaHost !== undefined ? { kafkaHost: cmd.kafkaHost, kafkaPort: cmd.kafkaPort } : {}),
          rack: cmd.rack,
          incarnation: cmd.incarnation,
          brokerEpoch: index,
          fenced: true,
          ...(cmd.cleanShutdown !== undefined ? { cleanShutdown: cmd.cleanShutdown } : {}),
          ...(cmd.flushAlways !== undefined ? { flushAlways: cmd.flushAlways } : {}),
          ...(old?.decommissioned ? { decommissioned: true } : {}),
        };
        this.brokersById.set(cmd.id, reg);
        d.brokers = true;
        if (old) this.removeFromPartitions(cmd.id, d, reg);
        // The logins its previous run delegated end with that run (a crash revoked none of them).
        for (const [hash, l] of this.logins) if (l.brokerId === cmd.id && l.incarnation !== cmd.incarnation) this.logins.delete(hash);
        return { ok: true, value: { brokerEpoch: index } };
      }
      case 'fenceBroker': {
        const b = this.brokersById.get(cmd.id);
        if (!b) return refuse('BROKER_NOT_AVAILABLE', `broker ${cmd.id} is not registered`);
        if (b.brokerEpoch !== cmd.brokerEpoch) return refuse('STALE_BROKER_EPOCH', `broker ${cmd.id} epoch ${cmd.brokerEpoch} is not the current ${b.brokerEpoch}`);
        const shuttingDown = cmd.reason === CONTROLLED_SHUTDOWN || b.shuttingDown === true;
        if (b.fenced) {
          if (shuttingDown && !b.shuttingDown) this.brokersById.set(cmd.id, { ...b, shuttingDown });
          return { ok: true };
        }
        this.brokersById.set(cmd.id, { ...b, fenced: true, ...(shuttingDown ? { shuttingDown } : {}) });
        d.brokers = true;
        this.removeFromPartitions(cmd.id, d);
        return { ok: true };
      }
      case 'unfenceBroker': {
        const b = this.brokersById.get(cmd.id);
        if (!b) return refuse('BROKER_NOT_AVAILABLE', `broker ${cmd.id} is not registered`);
        if (b.brokerEpoch !== cmd.brokerEpoch) return refuse('STALE_BROKER_EPOCH', `broker ${cmd.id} epoch ${cmd.brokerEpoch} is not the current ${b.brokerEpoch}`);
        if (!b.fenced) return { ok: true };
        if (b.shuttingDown) return refuse('STALE_BROKER_EPOCH', `broker ${cmd.id} epoch ${cmd.brokerEpoch} shut down; it must register again`);
        this.brokersById.set(cmd.id, { ...b, fenced: false });
        d.brokers = true;
        this.electOffline(d);
        return { ok: true };
      }
      case 'createTopic': {
        const existing = this.topicsByName.get(cmd.name);
        if (existing?.topicId === cmd.topicId) {
          // The same request retried after its answer was lost.
          return { ok: true, value: { partitions: existing.partitions.length, replicationFactor: existing.partitions[0]?.replicas.length ?? 0 } };
        }
        if (existing) return refuse('TOPIC_ALREADY_EXISTS', `topic "${cmd.name}" already exists`);
        const clash = this.collidingTopic(cmd.name);
        if (clash) return refuse('INVALID_TOPIC', `topic "${cmd.name}" collides with existing topic "${clash}": '.' and '_' are the same in metric names`);
        const live = this.placeable();
        if (cmd.replicationFactor > live.length) {
          return refuse(
            'INVALID_REPLICATION_FACTOR',
            `replication factor ${cmd.replicationFactor} is larger than the number of live brokers (${live.length})`,
          );
        }
        const assignment = assignReplicas(live, cmd.numPartitions, cmd.replicationFactor, this.placementCursor);
        this.placementCursor += cmd.numPartitions;
        const partitions = assignment.map((replicas) => ({ replicas, isr: replicas, leader: replicas[0]!, leaderEpoch: 0, partitionEpoch: 0 }));
        this.topicsByName.set(cmd.name, { name: cmd.name, topicId: cmd.topicId, configs: { ...cmd.configs }, partitions });
        d.topics.add(cmd.name);
        return { ok: true, value: { partitions: partitions.length, replicationFactor: cmd.replicationFactor } };
      }
      case 'deleteTopic': {
        const t = this.topicsByName.get(cmd.name);
        if (!t) return refuse('UNKNOWN_TOPIC_OR_PARTITION', `topic "${cmd.name}" does not exist`);
        this.topicsByName.delete(cmd.name);
        d.deletedTopics.push({ name: t.name, topicId: t.topicId, partitions: t.partitions.length });
        return { ok: true, value: { partitions: t.partitions.length, replicationFactor: t.partitions[0]?.replicas.length ?? 0, configs: t.configs } };
      }
      case 'createPartitions': {
        const t = this.topicsByName.get(cmd.name);
        if (!t) return refuse('UNKNOWN_TOPIC_OR_PARTITION', `topic "${cmd.name}" does not exist`);
        const current = t.partitions.length;
        if (cmd.count <= current) {
          return refuse('INVALID_PARTITIONS', `topic "${cmd.name}" has ${current} partitions; the new count ${cmd.count} must be larger`);
        }
        const rf = t.partitions[0]?.replicas.length ?? 1;
        const live = this.placeable();
        if (rf > live.length) return refuse('INVALID_REPLICATION_FACTOR', `replication factor ${rf} is larger than the number of live brokers (${live.length})`);
        const assignment = assignReplicas(live, cmd.count - current, rf, this.placementCursor);
        this.placementCursor += cmd.count - current;
        const added = assignment.map((replicas) => ({ replicas, isr: replicas, leader: replicas[0]!, leaderEpoch: 0, partitionEpoch: 0 }));
        this.topicsByName.set(t.name, { ...t, partitions: [...t.partitions, ...added] });
        d.topics.add(t.name);
        return { ok: true, value: { partitions: cmd.count, replicationFactor: rf, configs: t.configs } };
      }
      case 'alterTopicConfigs': {
        const t = this.topicsByName.get(cmd.name);
        if (!t || t.topicId !== cmd.topicId) return refuse('UNKNOWN_TOPIC_OR_PARTITION', `topic "${cmd.name}" does not exist`);
        const configs = mergeTopicConfigs(t.configs, cmd.set, cmd.delete);
        this.topicsByName.set(t.name, { ...t, configs });
        d.topics.add(t.name);
        return { ok: true, value: { configs } };
      }
      case 'alterPartition': {
        const t = this.topicsByName.get(cmd.topic);
        const p = t?.partitions[cmd.partition];
        if (!t || !p) return refuse('UNKNOWN_TOPIC_OR_PARTITION', `${cmd.topic}-${cmd.partition} does not exist`);
        if (cmd.topicId !== undefined && cmd.topicId !== t.topicId) {
          return refuse('UNKNOWN_TOPIC_ID', `${cmd.topic}-${cmd.partition}: topic id ${cmd.topicId} is a deleted incarnation (the topic's id is ${t.topicId})`);
        }
        if (cmd.leaderEpoch !== p.leaderEpoch || cmd.leaderId !== p.leader) {
          return refuse('FENCED_LEADER_EPOCH', `${cmd.topic}-${cmd.partition}: broker ${cmd.leaderId} in leader epoch ${cmd.leaderEpoch} is not the leader (leader ${p.leader}, epoch ${p.leaderEpoch})`);
        }
        if (cmd.partitionEpoch !== p.partitionEpoch) {
          return refuse('INCONSISTENT_PARTITION_EPOCH', `${cmd.topic}-${cmd.partition}: partition epoch ${cmd.partitionEpoch} is not the current ${p.partitionEpoch}`);
        }
        const isr = [...new Set(cmd.isr)];
        if (isr.length !== cmd.isr.length || !isr.includes(p.leader) || isr.some((id) => !p.replicas.includes(id))) {
          return refuse('INVALID_REQUEST', `${cmd.topic}-${cmd.partition}: ISR [${cmd.isr.join(', ')}] must hold the leader and only replicas [${p.replicas.join(', ')}], each once`);
        }
        const added = isr.filter((id) => !p.isr.includes(id));
        const ineligible = added.filter((id) => this.brokersById.get(id)?.fenced !== false);
        if (ineligible.length > 0) {
          return refuse('REPLICA_NOT_AVAILABLE', `${cmd.topic}-${cmd.partition}: broker(s) ${ineligible.join(', ')} are fenced and cannot join the ISR`);
        }
        let next: MutablePartition = { ...p, isr: orderLike(p.replicas, isr), partitionEpoch: p.partitionEpoch + 1 };
        // A member the leader lets back in is in sync again: no longer a recovery candidate of its own.
        const full = next.isr.length === p.replicas.length;
        setList(next, 'elr', full ? [] : without(p.elr, added));
        setList(next, 'leftIsr', full ? [] : without(p.leftIsr, added));
        setList(next, 'unverified', without(p.unverified, added));
        // A reassignment whose adding replicas are now all in sync completes in the same step.
        next = this.completeReassignment(next);
        this.setPartition(t, cmd.partition, next, d);
        return { ok: true, value: { leaderEpoch: next.leaderEpoch, partitionEpoch: next.partitionEpoch, isr: next.isr, replicas: next.replicas } };
      }
      case 'electPreferred': {
        let moved = 0;
        for (const q of cmd.partitions) {
          const t = this.topicsByName.get(q.topic);
          const p = t?.partitions[q.partition];
          if (!t || !p || p.leaderEpoch !== q.leaderEpoch) continue;
          const preferred = p.replicas[0]!;
          if (p.leader === preferred || !p.isr.includes(preferred) || this.brokersById.get(preferred)?.fenced !== false) continue;
          this.setPartition(t, q.partition, { ...p, leader: preferred, leaderEpoch: p.leaderEpoch + 1, partitionEpoch: p.partitionEpoch + 1 }, d);
          moved++;
        }
        return { ok: true, value: { moved } };
      }
      case 'reportLogEnds': {
        const b = this.brokersById.get(cmd.brokerId);
        if (!b) return refuse('BROKER_NOT_AVAILABLE', `broker ${cmd.brokerId} is not registered`);
        if (b.brokerEpoch !== cmd.brokerEpoch) return refuse('STALE_BROKER_EPOCH', `broker ${cmd.brokerId} epoch ${cmd.brokerEpoch} is not the current ${b.brokerEpoch}`);
        let accepted = 0;
        for (const q of cmd.partitions) {
          const t = this.topicsByName.get(q.topic);
          const p = t?.partitions[q.partition];
          // Only while the partition has no leader, only from a candidate, and only about this incarnation's log.
          if (!t || !p || p.leader >= 0 || !candidatesOf(p).includes(cmd.brokerId)) continue;
          if (q.topicId !== undefined && q.topicId !== t.topicId) continue;
          const report: ReplicaLogEnd = { broker: cmd.brokerId, brokerEpoch: cmd.brokerEpoch, lastEpoch: q.lastEpoch, endOffset: q.endOffset };
          const logEnds = [...(p.logEnds ?? []).filter((e) => e.broker !== cmd.brokerId), report].sort((a, c) => a.broker - c.broker);
          let next: MutablePartition = { ...p, logEnds };
          next = this.elect(t, q.partition, next, d);
          this.setPartition(t, q.partition, next, d);
          accepted++;
        }
        return { ok: true, value: { accepted } };
      }
      case 'electRecovered': {
        const t = this.topicsByName.get(cmd.topic);
        const p = t?.partitions[cmd.partition];
        if (!t || !p) return refuse('UNKNOWN_TOPIC_OR_PARTITION', `${cmd.topic}-${cmd.partition} does not exist`);
        // The wait was for a deleted incarnation of the topic: nothing to do for this one.
        if (cmd.topicId !== undefined && cmd.topicId !== t.topicId) return { ok: true, value: { leader: p.leader } };
        if (p.leader >= 0 || p.leaderEpoch !== cmd.leaderEpoch) return { ok: true, value: { leader: p.leader } };
        const next = this.elect(t, cmd.partition, { ...p }, d, true);
        if (next.leader >= 0) this.setPartition(t, cmd.partition, next, d);
        return { ok: true, value: { leader: next.leader } };
      }
      case 'allocateProducerIds': {
        const first = this.nextProducerId;
        this.nextProducerId += cmd.count;
        return { ok: true, value: { firstProducerId: first, count: cmd.count } };
      }
      // ---- security
      case 'upsertScramCredential': {
        // One bootstrap request creates one user with one credential per mechanism (several commands): each may
        // add a mechanism the new user lacks, none may touch another user or replace a credential.
        const others = [...this.scram.keys()].some((u) => u !== cmd.user);
        if (cmd.onlyIfNoUsers && (others || this.scram.get(cmd.user)?.has(cmd.mechanism))) {
          return refuse('CLUSTER_AUTHORIZATION_FAILED', `users exist already: log in as one to create user "${cmd.user}" (the first-user exception holds only while the cluster has none)`);
        }
        const forUser = new Map(this.scram.get(cmd.user));
        forUser.set(cmd.mechanism, {
          mechanism: cmd.mechanism,
          iterations: cmd.iterations,
          salt: Buffer.from(cmd.salt, 'base64'),
          storedKey: Buffer.from(cmd.storedKey, 'base64'),
          serverKey: Buffer.from(cmd.serverKey, 'base64'),
        });
        this.scram.set(cmd.user, forUser);
        d.security = true;
        return { ok: true };
      }
      case 'deleteScramCredential': {
        const forUser = this.scram.get(cmd.user);
        if (!forUser || (cmd.mechanism && !forUser.has(cmd.mechanism))) {
          return refuse('RESOURCE_NOT_FOUND', `user "${cmd.user}" has no ${cmd.mechanism ?? 'SCRAM'} credential`);
        }
        const left = new Map(forUser);
        if (cmd.mechanism) left.delete(cmd.mechanism);
        else left.clear();
        if (left.size === 0) this.scram.delete(cmd.user);
        else this.scram.set(cmd.user, left);
        d.security = true;
        return { ok: true };
      }
      case 'delegateLogin': {
        const run = this.brokersById.get(cmd.brokerId);
        if (!run || run.incarnation !== cmd.incarnation) return refuse('BROKER_NOT_AVAILABLE', `broker ${cmd.brokerId} run ${cmd.incarnation} is not registered`);
        const theirs = [...this.logins.values()].filter((l) => l.brokerId === cmd.brokerId).length;
        if (theirs >= MAX_DELEGATED_LOGINS_PER_BROKER) return refuse('POLICY_VIOLATION', `broker ${cmd.brokerId} holds ${theirs} delegated logins (at most ${MAX_DELEGATED_LOGINS_PER_BROKER})`);
        this.logins.set(cmd.tokenHash, { principal: cmd.principal, brokerId: cmd.brokerId, incarnation: cmd.incarnation });
        d.security = true;
        return { ok: true };
      }
      case 'revokeLogin': {
        if (this.logins.delete(cmd.tokenHash)) d.security = true;
        return { ok: true };
      }
      case 'createAcls': {
        const added = cmd.acls.filter((a, i) => !this.aclList.some((b) => sameAcl(a, b)) && cmd.acls.findIndex((b) => sameAcl(a, b)) === i);
        if (added.length > 0) {
          this.aclList = [...this.aclList, ...added];
          d.security = true;
        }
        return { ok: true, value: { created: added.length } };
      }
      case 'deleteAcls': {
        const deleted = cmd.filters.map((f) => this.aclList.filter((a) => matchesFilter(a, f)));
        const gone = new Set(deleted.flat());
        if (gone.size > 0) {
          this.aclList = this.aclList.filter((a) => !gone.has(a));
          d.security = true;
        }
        return { ok: true, value: { deleted } };
      }
      // ---- controller quorum membership: Raft membership changes, never metadata commands (quorum.ts)
      case 'addVoter':
      case 'removeVoter':
      case 'describeQuorum':
        return refuse('INVALID_REQUEST', `${cmd.type} is a request for the active controller, not a metadata log entry`);
      case 'registerController':
        this.controllerMap.set(cmd.id, { id: cmd.id, host: cmd.host, port: cmd.port });
        return { ok: true };
      // ---- quotas: each alteration applies to its entity; the command was checked whole (commands.ts)
      case 'alterClientQuotas': {
        for (const a of cmd.alterations) {
          const key = entityKey(a.entity);
          const values: QuotaValues = { ...this.quotaMap.get(key)?.values, ...a.set };
          for (const k of a.remove) delete values[k];
          if (Object.keys(values).length === 0) this.quotaMap.delete(key);
          else this.quotaMap.set(key, { entity: { ...a.entity }, values });
        }
        this.quotaVersion++;
        d.security = true;
        return { ok: true };
      }
      // ---- scaleout
      case 'decommissionBroker': {
        const b = this.brokersById.get(cmd.id);
        if (!b) return refuse('BROKER_NOT_AVAILABLE', `broker ${cmd.id} is not registered`);
        if ((b.decommissioned ?? false) === cmd.decommissioned) return { ok: true };
        const { decommissioned: _d, ...rest } = b;
        this.brokersById.set(cmd.id, cmd.decommissioned ? { ...rest, decommissioned: true } : rest);
        d.brokers = true;
        return { ok: true };
      }
      case 'setReplicationThrottle': {
        const previous = this.throttle;
        this.throttle = cmd.bytesPerSec;
        if (previous !== cmd.bytesPerSec) d.brokers = true;
        return { ok: true, value: { previous, bytesPerSec: cmd.bytesPerSec } };
      }
      case 'alterReassignments': {
        const results: ReassignmentResult[] = [];
        for (const q of cmd.partitions) {
          const r = this.reassign(q, d);
          results.push({ topic: q.topic, partition: q.partition, ...r });
        }
        return { ok: true, value: { results } };
      }
    }
  }

  // ---- scaleout: partition reassignment

  /** The replication throttle of reassignment moves (bytes/s per broker for its adding replicas; 0: none). */
  get replicationThrottle(): number {
    return this.throttle;
  }

  /** Brokers new replicas may be placed on: live and not decommissioned. */
  placeable(): BrokerRegistration[] {
    return this.brokers().filter((b) => !b.fenced && !b.decommissioned);
  }

  /** Partitions being reassigned, in topic and partition order. */
  reassignments(): { topic: string; partition: number; record: PartitionRecord }[] {
    const out: { topic: string; partition: number; record: PartitionRecord }[] = [];
    for (const t of this.topics()) t.partitions.forEach((p, partition) => p.targetReplicas && out.push({ topic: t.name, partition, record: p }));
    return out;
  }

  /**
   * Starts (or cancels, `replicas` null) one partition's reassignment; the
   * refusal of a bad one changes nothing. A move adds the new replicas to
   * `replicas` (after the original ones: the preferred leader does not change
   * while it moves) outside the ISR; it completes when the leader lets the
   * last of them into the ISR (alterPartition), or at once when none is added.
   */
  private reassign(q: { topic: string; partition: number; replicas: number[] | null; allowReplicationFactorChange?: boolean }, d: Delta): { code?: string; message?: string } {
    const t = this.topicsByName.get(q.topic);
    const p = t?.partitions[q.partition];
    const name = `${q.topic}-${q.partition}`;
    if (!t || !p) return { code: 'UNKNOWN_TOPIC_OR_PARTITION', message: `${name} does not exist` };
    if (q.replicas === null) {
      if (!p.targetReplicas) return { code: 'NO_REASSIGNMENT_IN_PROGRESS', message: `${name} is not being reassigned` };
      const next = this.cancelReassignment(p);
      if (!next) {
        return { code: 'REASSIGNMENT_IN_PROGRESS', message: `${name}: no replica of the original set [${without(p.replicas, p.adding ?? []).join(', ')}] is in sync and alive; the reassignment cannot be cancelled now` };
      }
      this.setPartition(t, q.partition, next, d);
      return {};
    }
    const target = q.replicas;
    if (target.length === 0) return { code: 'INVALID_REPLICA_ASSIGNMENT', message: `${name}: the replica list is empty` };
    if (new Set(target).size !== target.length) return { code: 'INVALID_REPLICA_ASSIGNMENT', message: `${name}: the replica list [${target.join(', ')}] names a broker more than once` };
    const unknown = target.filter((id) => !this.brokersById.has(id));
    if (unknown.length > 0) return { code: 'INVALID_REPLICA_ASSIGNMENT', message: `${name}: broker(s) ${unknown.join(', ')} are not registered in the cluster` };
    const gone = target.filter((id) => this.brokersById.get(id)?.decommissioned);
    if (gone.length > 0) return { code: 'BROKER_DECOMMISSIONED', message: `${name}: broker(s) ${gone.join(', ')} are decommissioned; no replica may move there` };
    if (p.targetReplicas) {
      return { code: 'REASSIGNMENT_IN_PROGRESS', message: `${name} is already moving to [${p.targetReplicas.join(', ')}]; cancel it first (mq topic reassign --cancel ${q.topic} --partition ${q.partition})` };
    }
    if (target.length !== p.replicas.length && !q.allowReplicationFactorChange) {
      return {
        code: 'INVALID_REPLICATION_FACTOR',
        message: `${name}: ${target.length} replicas would change the replication factor from ${p.replicas.length}; say so explicitly to change it (--allow-rf-change)`,
      };
    }
    const adding = target.filter((id) => !p.replicas.includes(id));
    const removing = p.replicas.filter((id) => !target.includes(id));
    if (adding.length === 0 && removing.length === 0 && target.join() === p.replicas.join()) return {};
    let next: MutablePartition = { ...p, replicas: [...p.replicas, ...adding], targetReplicas: [...target], adding, removing, partitionEpoch: p.partitionEpoch + 1 };
    next = this.completeReassignment(next);
    this.setPartition(t, q.partition, next, d);
    return {};
  }

  /**
   * Completes a reassignment once every adding replica is in the ISR and a
   * live, trusted member of the target set is in the ISR to lead: the
   * replica set becomes the target, the removed replicas leave the ISR (and
   * their brokers drop their logs), and a removed leader hands leadership to
   * the first such member of the new set. Otherwise `p` unchanged.
   */
  private completeReassignment(p: MutablePartition): MutablePartition {
    const target = p.targetReplicas;
    if (!target || p.leader < 0) return p;
    if (!(p.adding ?? []).every((id) => p.isr.includes(id))) return p;
    const unverified = p.unverified ?? [];
    const leaderKept = target.includes(p.leader);
    const leader = leaderKept ? p.leader : (target.find((id) => p.isr.includes(id) && this.live(id) && !unverified.includes(id)) ?? -1);
    if (leader < 0) return p;
    const { targetReplicas: _t, adding: _a, removing: _r, ...rest } = p;
    const next: MutablePartition = { ...rest, replicas: [...target], isr: orderLike(target, p.isr), partitionEpoch: p.partitionEpoch + 1 };
    setList(next, 'elr', orderLike(target, p.elr ?? []));
    setList(next, 'leftIsr', orderLike(target, p.leftIsr ?? []));
    setList(next, 'unverified', orderLike(target, unverified));
    if (!leaderKept) {
      next.leader = leader;
      next.leaderEpoch = p.leaderEpoch + 1;
    }
    return next;
  }

  /** The original replica set back (null when none of it is in sync and alive to lead). */
  private cancelReassignment(p: PartitionRecord): MutablePartition | undefined {
    const original = without(p.replicas, p.adding ?? []);
    const isr = orderLike(original, p.isr);
    const unverified = p.unverified ?? [];
    const leaderKept = p.leader >= 0 && original.includes(p.leader);
    const leader = leaderKept || p.leader < 0 ? p.leader : (original.find((id) => isr.includes(id) && this.live(id) && !unverified.includes(id)) ?? -1);
    if (isr.length === 0 || (p.leader >= 0 && leader < 0)) return undefined;
    const { targetReplicas: _t, adding: _a, removing: _r, ...rest } = p;
    const next: MutablePartition = { ...rest, replicas: original, isr, partitionEpoch: p.partitionEpoch + 1 };
    setList(next, 'elr', orderLike(original, p.elr ?? []));
    setList(next, 'leftIsr', orderLike(original, p.leftIsr ?? []));
    setList(next, 'unverified', orderLike(original, unverified));
    if (!leaderKept && p.leader >= 0) {
      next.leader = leader;
      next.leaderEpoch = p.leaderEpoch + 1;
    }
    return next;
  }

  /**
   * A broker is gone (fenced or restarted): it leaves every ISR that keeps
   * another member, and partitions it led get a new leader from the ISR.
   * When it was the last ISR member it stays there (it alone has every
   * committed record) and the partition goes offline until it returns,
   * unless the topic allows unclean election. A member that leaves this way
   * stays a recovery candidate: in the ELR when the rest of the ISR is below
   * `min.insync.replicas`, else in the last ISR (`leftIsr`).
   *
   * `restarted` is the broker's new registration when it restarted: its old
   * run's reports no longer count, and where it stays in the ISR after an
   * unclean shutdown (and the topic is not flush `always`) it is unverified.
   */
  private removeFromPartitions(id: number, d: Delta, restarted?: BrokerRegistration): void {
    for (const t of this.topicsByName.values()) {
      t.partitions.forEach((p, index) => {
        if (!p.replicas.includes(id)) return;
        let next: MutablePartition = { ...p };
        if (p.isr.includes(id) && p.isr.length > 1) {
          next.isr = p.isr.filter((x) => x !== id);
          if (next.isr.length < minInsync(t)) setList(next, 'elr', orderLike(p.replicas, [...(p.elr ?? []), id]));
          else setList(next, 'leftIsr', orderLike(p.replicas, [...(p.leftIsr ?? []), id]));
        }
        if (restarted) {
          if (p.logEnds?.some((e) => e.broker === id)) setList(next, 'logEnds', p.logEnds.filter((e) => e.broker !== id));
          if (next.isr.includes(id) && !this.trusted(t, restarted) && !p.unverified?.includes(id)) setList(next, 'unverified', orderLike(p.replicas, [...(p.unverified ?? []), id]));
        }
        if (p.leader === id) next = this.elect(t, index, next, d);
        if (next.isr !== p.isr || next.leader !== p.leader || next.elr !== p.elr || next.leftIsr !== p.leftIsr || next.unverified !== p.unverified || next.logEnds !== p.logEnds) {
          if (next.leader === p.leader) next.partitionEpoch = p.partitionEpoch + 1;
          this.setPartition(t, index, next, d);
        }
      });
    }
  }

  /** Whether a broker's logs of topic `t` are trusted to hold what it acknowledged: a clean shutdown, or flush `always`. */
  private trusted(t: TopicRecord, b: BrokerRegistration): boolean {
    if (b.cleanShutdown !== false) return true;
    const policy = t.configs['flush.policy'] ?? (b.flushAlways ? 'always' : undefined);
    return policy === 'always';
  }

  /**
   * Leaderless partitions whose leader waits for unclean recovery: a live
   * candidate exists but not every candidate has reported its log end. The
   * active controller gives them `unclean.recovery.wait.ms`, then sends
   * `electRecovered`.
   */
  pendingRecoveries(): PendingRecovery[] {
    const out: PendingRecovery[] = [];
    for (const t of this.topics()) {
      t.partitions.forEach((p, partition) => {
        if (p.leader >= 0) return;
        const candidates = candidatesOf(p);
        if (!candidates.some((id) => this.live(id))) return;
        const reports = this.currentReports(p).filter((r) => candidates.includes(r.broker));
        const missing = candidates.filter((id) => !reports.some((r) => r.broker === id));
        const fenced = this.fencedAhead(p, reports);
        if (missing.length === 0 && fenced.length === 0) return;
        const electable = reports.some((r) => this.live(r.broker) && (p.isr.includes(r.broker) || (p.elr ?? []).includes(r.broker)));
        out.push({ topic: t.name, topicId: t.topicId, partition, leaderEpoch: p.leaderEpoch, candidates, missing, fenced, electable });
      });
    }
    return out;
  }

  private live(id: number): boolean {
    return this.brokersById.get(id)?.fenced === false;
  }

  /** Reports made by the current run of each broker. */
  private currentReports(p: PartitionRecord): ReplicaLogEnd[] {
    return (p.logEnds ?? []).filter((e) => this.brokersById.get(e.broker)?.brokerEpoch === e.brokerEpoch);
  }

  /** Reports in election order: the longest log in (lastEpoch, endOffset) order first, ties in replica order. */
  private ranked(p: PartitionRecord, reports: readonly ReplicaLogEnd[]): ReplicaLogEnd[] {
    const order = (id: number) => p.replicas.indexOf(id);
    return [...reports].sort((a, b) => b.lastEpoch - a.lastEpoch || b.endOffset - a.endOffset || order(a.broker) - order(b.broker));
  }

  /**
   * Reporters still fenced (registered, not yet unfenced) that rank above
   * every live reporter: electing now would pass over a longer log.
   */
  private fencedAhead(p: PartitionRecord, reports: readonly ReplicaLogEnd[]): number[] {
    const out: number[] = [];
    for (const r of this.ranked(p, reports)) {
      if (this.live(r.broker)) break;
      out.push(r.broker);
    }
    return out;
  }

  /**
   * Unclean recovery: once every candidate has reported (or `force`, when
   * the wait is over), the reporter with the longest log in (lastEpoch,
   * endOffset) order, ties in replica order. Every report counts, fenced or
   * not: when the longest log's broker is still fenced (it registered and
   * reported before being unfenced), the election waits for its unfencing
   * rather than pick a shorter log. On a timeout the best live reporter is
   * elected, and the fenced ones passed over count as missing; only a
   * reporter from the ISR or ELR may be elected then (a last-ISR member
   * alone may lack later commits); with no report at all, the first live
   * ISR/ELR member. undefined: keep waiting.
   */
  private recoveryChoice(p: PartitionRecord, force: boolean): { leader: number; report: ReplicaLogEnd | undefined; reports: ReplicaLogEnd[]; missing: number[] } | undefined {
    const candidates = candidatesOf(p);
    const reports = this.currentReports(p).filter((r) => candidates.includes(r.broker));
    const missing = candidates.filter((id) => !reports.some((r) => r.broker === id));
    if (missing.length > 0 && !force) return undefined;
    const eligible = (id: number) => p.isr.includes(id) || (p.elr ?? []).includes(id);
    if (missing.length > 0 && !reports.some((r) => this.live(r.broker) && eligible(r.broker))) {
      if (reports.length > 0) return undefined;
      const first = p.replicas.find((id) => eligible(id) && this.live(id));
      return first === undefined ? undefined : { leader: first, report: undefined, reports, missing };
    }
    const fenced = this.fencedAhead(p, reports);
    if (fenced.length > 0 && !force) return undefined;
    const best = this.ranked(p, reports).find((r) => this.live(r.broker));
    return best ? { leader: best.broker, report: best, reports, missing: [...missing, ...fenced] } : undefined;
  }

  /** Offline partitions (leader -1) get a leader when an eligible replica is back. */
  private electOffline(d: Delta): void {
    for (const t of this.topicsByName.values()) {
      t.partitions.forEach((p, index) => {
        if (p.leader >= 0) return;
        const next = this.elect(t, index, { ...p }, d);
        if (next.leader >= 0) this.setPartition(t, index, next, d);
      });
    }
  }

  /**
   * Chooses a leader among trusted live ISR members in replica order; with
   * none, by unclean recovery when a candidate is alive (see recoveryChoice);
   * bumps the epochs when it changes.
   */
  private elect(t: TopicRecord, index: number, p: MutablePartition, d: Delta, force = false): MutablePartition {
    const live = (id: number) => this.live(id);
    const unverified = p.unverified ?? [];
    let leader = p.replicas.find((id) => p.isr.includes(id) && live(id) && !unverified.includes(id)) ?? -1;
    let isr = p.isr;
    if (leader < 0 && candidatesOf(p).some(live)) {
      const choice = this.recoveryChoice(p, force);
      if (!choice) return p.leader < 0 ? p : { ...p, leader: -1, leaderEpoch: p.leaderEpoch + 1, partitionEpoch: p.partitionEpoch + 1 };
      const leaderEpoch = p.leaderEpoch + 1;
      d.recoveryElections.push({
        topic: t.name,
        partition: index,
        leader: choice.leader,
        leaderEpoch,
        lastEpoch: choice.report?.lastEpoch ?? -1,
        endOffset: choice.report?.endOffset ?? -1,
        reports: choice.reports,
        missing: choice.missing,
      });
      // The new leader's log is now the partition's: the others catch up from it (truncating what differs) and rejoin.
      const { elr: _e, leftIsr: _l, unverified: _u, logEnds: _r, ...rest } = p;
      const recovery = { leaderEpoch, lastEpoch: choice.report?.lastEpoch ?? -1, endOffset: choice.report?.endOffset ?? -1, missing: choice.missing };
      return { ...rest, leader: choice.leader, isr: [choice.leader], leaderEpoch, partitionEpoch: p.partitionEpoch + 1, recovery };
    }
    if (leader < 0 && t.configs['unclean.leader.election.enable'] === 'true') {
      leader = p.replicas.find(live) ?? -1;
      if (leader >= 0) {
        isr = [leader];
        d.uncleanElections.push({ topic: t.name, partition: index, leader });
      }
    }
    if (leader === p.leader) return p;
    const next: MutablePartition = { ...p, leader, isr, leaderEpoch: p.leaderEpoch + 1, partitionEpoch: p.partitionEpoch + 1 };
    if (leader >= 0) setList(next, 'logEnds', []);
    delete next.recovery;
    return next;
  }

  private setPartition(t: TopicRecord, index: number, p: PartitionRecord, d: Delta): void {
    const current = this.topicsByName.get(t.name) ?? t; // `t` may be a copy from before an earlier change in this command
    const partitions = [...current.partitions];
    partitions[index] = p;
    this.topicsByName.set(t.name, { ...current, partitions });
    d.topics.add(t.name);
  }

  snapshot(): Uint8Array {
    const s: Snapshot = {
      version: 1,
      brokers: this.brokers(),
      topics: this.topics(),
      nextProducerId: this.nextProducerId,
      placementCursor: this.placementCursor,
      scram: [...this.scram.entries()].flatMap(([user, m]) =>
        [...m.values()].map((c) => ({
          user,
          mechanism: c.mechanism,
          iterations: c.iterations,
          salt: toBase64(c.salt),
          storedKey: toBase64(c.storedKey),
          serverKey: toBase64(c.serverKey),
        })),
      ),
      acls: [...this.aclList],
      ...(this.logins.size > 0 ? { logins: [...this.logins].map(([tokenHash, l]) => ({ tokenHash, ...l })) } : {}),
      ...(this.throttle > 0 ? { replicationThrottle: this.throttle } : {}),
      ...(this.quotaMap.size > 0 ? { quotas: this.clientQuotas() } : {}),
      ...(this.quorumAddressMap.size > 0 ? { quorumAddresses: [...this.quorumAddressMap.values()] } : {}),
      ...(this.controllerMap.size > 0 ? { controllers: this.controllerEndpoints() } : {}),
    };
    return Buffer.from(JSON.stringify(s), 'utf8');
  }

  restore(data: Uint8Array, index: number): void {
    const text = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8');
    const s = (text ? JSON.parse(text) : { version: 1, brokers: [], topics: [], nextProducerId: 0, placementCursor: 0 }) as Snapshot;
    this.brokersById = new Map(s.brokers.map((b) => [b.id, b]));
    this.topicsByName = new Map(s.topics.map((t) => [t.name, t]));
    this.nextProducerId = s.nextProducerId;
    this.placementCursor = s.placementCursor;
    this.scram = new Map();
    for (const c of s.scram ?? []) {
      const m = this.scram.get(c.user) ?? new Map<ScramMechanism, ScramCredential>();
      m.set(c.mechanism, { mechanism: c.mechanism, iterations: c.iterations, salt: Buffer.from(c.salt, 'base64'), storedKey: Buffer.from(c.storedKey, 'base64'), serverKey: Buffer.from(c.serverKey, 'base64') });
      this.scram.set(c.user, m);
    }
    this.aclList = s.acls ?? [];
    this.logins = new Map((s.logins ?? []).map(({ tokenHash, ...l }) => [tokenHash, l]));
    this.throttle = s.replicationThrottle ?? 0;
    this.quotaMap = new Map((s.quotas ?? []).map((q) => [entityKey(q.entity), q]));
    this.quotaVersion++;
    this.quorumAddressMap = new Map((s.quorumAddresses ?? []).map((a) => [a.id, a]));
    this.controllerMap = new Map((s.controllers ?? []).map((a) => [a.id, a]));
    this.appliedIndex = index;
    const delta: MetadataDelta = { index, brokers: true, topics: s.topics.map((t) => t.name), deletedTopics: [], uncleanElections: [], recoveryElections: [], security: true };
    for (const l of [...this.listeners]) l(delta);
  }
}

/** Who may lead after a whole-ISR failure: the ISR, the ELR and the last ISR members, in replica order. */
function candidatesOf(p: PartitionRecord): number[] {
  return p.replicas.filter((id) => p.isr.includes(id) || (p.elr ?? []).includes(id) || (p.leftIsr ?? []).includes(id));
}

/** The topic's min.insync.replicas when it sets one (the broker default is not in the metadata: 1). */
function minInsync(t: TopicRecord): number {
  const v = Number(t.configs['min.insync.replicas']);
  return Number.isSafeInteger(v) && v > 0 ? v : 1;
}

function without(list: readonly number[] | undefined, ids: readonly number[]): number[] {
  return (list ?? []).filter((id) => !ids.includes(id));
}

type ListKey = 'elr' | 'leftIsr' | 'unverified' | 'logEnds';

/** Sets an optional list field, leaving it out when empty (records stay as they were before these fields existed). */
function setList<K extends ListKey>(p: MutablePartition, k: K, v: NonNullable<PartitionRecord[K]>): void {
  if (v.length === 0) {
    if (p[k] !== undefined) delete p[k];
  } else {
    p[k] = v;
  }
}

/** `members` in the order of `replicas`. */
function orderLike(replicas: readonly number[], members: readonly number[]): number[] {
  return replicas.filter((id) => members.includes(id));
}

