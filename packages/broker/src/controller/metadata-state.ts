/**
 * The controller's state machine: applies committed metadata commands to the
 * cluster metadata, deterministically (no clock, no randomness, no I/O), so
 * every broker that applies the same log holds the same metadata. Leader
 * elections happen here, as consequences of fencing and unfencing brokers:
 * a new leader is chosen only from the ISR, in replica order (the preferred
 * replica first), unless the topic allows unclean election.
 */
import type { Entry, StateMachine } from '@mq/consensus';
import { decodeCommand, type CommandResult, type MetadataCommand } from './commands.js';
import { assignReplicas } from './placement.js';
import type { BrokerRegistration, MetadataDelta, PartitionRecord, TopicRecord } from './types.js';

export const PRODUCER_ID_BLOCK = 1000;
/** The fence reason a broker gives for its own controlled shutdown. */
export const CONTROLLED_SHUTDOWN = 'controlled shutdown';

interface Snapshot {
  version: 1;
  brokers: BrokerRegistration[];
  topics: TopicRecord[];
  nextProducerId: number;
  placementCursor: number;
}

type MutablePartition = { -readonly [K in keyof PartitionRecord]: PartitionRecord[K] };

class Delta {
  brokers = false;
  topics = new Set<string>();
  deletedTopics: { name: string; topicId: string; partitions: number }[] = [];
  uncleanElections: { topic: string; partition: number; leader: number }[] = [];
}

function refuse(code: string, message: string): CommandResult {
  return { ok: false, code, message };
}

export class MetadataState implements StateMachine {
  private brokersById = new Map<number, BrokerRegistration>();
  private topicsByName = new Map<string, TopicRecord>();
  private nextProducerId = 0;
  private placementCursor = 0;
  private appliedIndex = 0;
  private readonly listeners = new Set<(delta: MetadataDelta) => void>();

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
      return refuse('INVALID_REQUEST', (err as Error).message);
    }
    return this.applyCommand(cmd, entry.index);
  }

  /** Applies one command at log index `index` (also used directly by tests). */
  applyCommand(cmd: MetadataCommand, index: number): CommandResult {
    this.appliedIndex = Math.max(this.appliedIndex, index);
    const d = new Delta();
    const result = this.dispatch(cmd, index, d);
    if (d.brokers || d.topics.size > 0 || d.deletedTopics.length > 0) {
      const delta: MetadataDelta = {
        index,
        brokers: d.brokers,
        topics: [...d.topics],
        deletedTopics: d.deletedTopics,
        uncleanElections: d.uncleanElections,
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
          if (old.host !== cmd.host || old.port !== cmd.port || old.httpPort !== cmd.httpPort || old.rack !== cmd.rack) {
            return refuse('DUPLICATE_BROKER_REGISTRATION', `broker ${cmd.id} run ${cmd.incarnation} registered before with other endpoints`);
          }
          return { ok: true, value: { brokerEpoch: old.brokerEpoch } };
        }
        // A new run (first start or restart): registered fenced; the controller unfences it once it is heard from.
        // A restarted broker may have lost its log tail (or its whole disk): it leaves every ISR it could leave
        // and leads nothing until it has caught up again and a leader lets it back in.
        this.brokersById.set(cmd.id, {
          id: cmd.id,
          host: cmd.host,
          port: cmd.port,
          httpPort: cmd.httpPort,
          rack: cmd.rack,
          incarnation: cmd.incarnation,
          brokerEpoch: index,
          fenced: true,
        });
        d.brokers = true;
        if (old) this.removeFromPartitions(cmd.id, d);
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
        const live = this.brokers().filter((b) => !b.fenced);
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
        const live = this.brokers().filter((b) => !b.fenced);
        if (rf > live.length) return refuse('INVALID_REPLICATION_FACTOR', `replication factor ${rf} is larger than the number of live brokers (${live.length})`);
        const assignment = assignReplicas(live, cmd.count - current, rf, this.placementCursor);
        this.placementCursor += cmd.count - current;
        const added = assignment.map((replicas) => ({ replicas, isr: replicas, leader: replicas[0]!, leaderEpoch: 0, partitionEpoch: 0 }));
        this.topicsByName.set(t.name, { ...t, partitions: [...t.partitions, ...added] });
        d.topics.add(t.name);
        return { ok: true, value: { partitions: cmd.count, replicationFactor: rf, configs: t.configs } };
      }
      case 'alterPartition': {
        const t = this.topicsByName.get(cmd.topic);
        const p = t?.partitions[cmd.partition];
        if (!t || !p) return refuse('UNKNOWN_TOPIC_OR_PARTITION', `${cmd.topic}-${cmd.partition} does not exist`);
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
        const next = { ...p, isr: orderLike(p.replicas, isr), partitionEpoch: p.partitionEpoch + 1 };
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
      case 'allocateProducerIds': {
        const first = this.nextProducerId;
        this.nextProducerId += cmd.count;
        return { ok: true, value: { firstProducerId: first, count: cmd.count } };
      }
    }
  }

  /**
   * A broker is gone (fenced or restarted): it leaves every ISR that keeps
   * another member, and partitions it led get a new leader from the ISR.
   * When it was the last ISR member it stays there (it alone has every
   * committed record) and the partition goes offline until it returns,
   * unless the topic allows unclean election.
   */
  private removeFromPartitions(id: number, d: Delta): void {
    for (const t of this.topicsByName.values()) {
      t.partitions.forEach((p, index) => {
        if (!p.replicas.includes(id)) return;
        let next: MutablePartition = { ...p };
        if (p.isr.includes(id) && p.isr.length > 1) next.isr = p.isr.filter((x) => x !== id);
        if (p.leader === id) next = this.elect(t, index, next, d);
        if (next.isr !== p.isr || next.leader !== p.leader) {
          if (next.leader === p.leader) next.partitionEpoch = p.partitionEpoch + 1;
          this.setPartition(t, index, next, d);
        }
      });
    }
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

  /** Chooses a leader among live ISR members in replica order; bumps the epochs when it changes. */
  private elect(t: TopicRecord, index: number, p: MutablePartition, d: Delta): MutablePartition {
    const live = (id: number) => this.brokersById.get(id)?.fenced === false;
    let leader = p.replicas.find((id) => p.isr.includes(id) && live(id)) ?? -1;
    let isr = p.isr;
    if (leader < 0 && t.configs['unclean.leader.election.enable'] === 'true') {
      leader = p.replicas.find(live) ?? -1;
      if (leader >= 0) {
        isr = [leader];
        d.uncleanElections.push({ topic: t.name, partition: index, leader });
      }
    }
    if (leader === p.leader) return p;
    return { ...p, leader, isr, leaderEpoch: p.leaderEpoch + 1, partitionEpoch: p.partitionEpoch + 1 };
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
    this.appliedIndex = index;
    const delta: MetadataDelta = { index, brokers: true, topics: s.topics.map((t) => t.name), deletedTopics: [], uncleanElections: [] };
    for (const l of [...this.listeners]) l(delta);
  }
}

/** `members` in the order of `replicas`. */
function orderLike(replicas: readonly number[], members: readonly number[]): number[] {
  return replicas.filter((id) => members.includes(id));
}
