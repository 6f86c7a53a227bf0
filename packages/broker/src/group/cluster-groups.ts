/**
 * Consumer groups in a cluster, the Kafka way: `__consumer_offsets` is a
 * replicated cluster topic (created through the controller on the first
 * FindCoordinator), and the coordinator of a group is the leader of the
 * offsets partition its id hashes to. This broker's coordinator loads a
 * partition when it becomes its leader (COORDINATOR_LOAD_IN_PROGRESS
 * meanwhile) and unloads it when it stops leading (NOT_COORDINATOR: clients
 * find the new coordinator). Writes go through the PartitionLeader with
 * acks=all (see replicated-offsets-log.ts).
 */
import { guard } from '../guard.js';
import { createGroupCoordinator, type GroupCoordinator } from './group-coordinator.js';
import { partitionForGroup } from './offsets-schema.js';
import { OFFSETS_TOPIC, type GroupCoordinatorOptions } from './options.js';
import { replicatedOffsetsLog, type OffsetsPartitionLeader, type OffsetsReplicaLog } from './replicated-offsets-log.js';
import type { Logger } from '@mq/protocol/components';
import type { TopicView } from './types.js';
import { InternalTopic, type FindCoordinatorAnswer, type InternalTopicCluster } from '../cluster/internal-topic.js';

export type { FindCoordinatorAnswer } from '../cluster/internal-topic.js';

/** What the cluster offers the groups (built from the broker's ClusterNode by `groupsClusterOf`). */
export interface GroupsCluster extends InternalTopicCluster {
  /** A topic of the cluster metadata: each partition's leader (-1: none). */
  topic(name: string): { partitions: ReadonlyArray<{ leader: number; replicas: readonly number[] }> } | undefined;
  /** A registered broker's endpoint. */
  broker(id: number): { host: string; port: number; httpPort?: number; fenced: boolean } | undefined;
  onMetadataChange(fn: () => void): () => void;
  /** Topics deleted by a metadata change, by name (absent: deletions are not watched). */
  onTopicsDeleted?(fn: (names: readonly string[]) => void): () => void;
  leaderOf(topic: string, partition: number): OffsetsPartitionLeader | undefined;
  localLog(topic: string, partition: number): OffsetsReplicaLog | undefined;
  onLeadershipChange(fn: (change: { topic: string; partition: number; leader: boolean }) => void): () => void;
  /** Partition counts from the metadata; high watermarks of partitions led here (undefined elsewhere). */
  readonly topics: TopicView;
}

export interface ClusterGroupsOptions {
  coordinator: GroupCoordinatorOptions;
  /** offsets.topic.num.partitions: the partition count `__consumer_offsets` is created with. */
  offsetsTopicPartitions: number;
  /** offsets.topic.replication.factor: the most replicas it gets (capped at the live brokers when it is created). */
  offsetsTopicReplicationFactor: number;
  /** Topic configs it is created with (cleanup.policy=compact etc.; min.insync.replicas is added here). */
  offsetsTopicConfigs: Record<string, string>;
  /** offsets.commit.timeout.ms: how long a write waits for the in-sync replicas. */
  commitTimeoutMs: number;
  /** Wait before retrying a load that failed while this broker still leads the partition. */
  loadRetryMs?: number;
}


export class ClusterGroups {
  private coordinatorValue: GroupCoordinator | undefined;
  private readonly offsetsTopic: InternalTopic;
  private readonly unsubscribe: Array<() => void> = [];
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(
    private readonly cluster: GroupsCluster,
    private readonly options: ClusterGroupsOptions,
    private readonly deps: { clock: () => number; logger: Logger; newMemberId?: (clientId: string) => string },
  ) {
    this.offsetsTopic = new InternalTopic(
      cluster,
      { name: OFFSETS_TOPIC, partitions: options.offsetsTopicPartitions, replicationFactor: options.offsetsTopicReplicationFactor, configs: options.offsetsTopicConfigs },
      deps.logger,
    );
    this.unsubscribe.push(cluster.onMetadataChange(guard(deps.logger, 'starting the group coordinator', () => this.maybeStart())));
    // Offsets committed for a deleted topic mean nothing in a topic re-created under its name: they go with it (as Kafka's).
    const onDeleted = cluster.onTopicsDeleted?.(
      guard(deps.logger, 'removing the offsets of deleted topics', (names: readonly string[]) => {
        const coordinator = this.coordinatorValue;
        if (!coordinator) return;
        coordinator.removeTopicOffsets(new Set(names), deps.clock()).catch((err: unknown) => deps.logger.warn({ topics: names.slice(0, 10), err }, 'could not remove the offsets of deleted topics'));
      }),
    );
    if (onDeleted) this.unsubscribe.push(onDeleted);
    this.unsubscribe.push(
      cluster.onLeadershipChange(
        guard(deps.logger, 'moving a __consumer_offsets partition', (ch: { topic: string; partition: number; leader: boolean }) => {
          if (ch.topic !== OFFSETS_TOPIC || !this.coordinatorValue) return;
          if (ch.leader) this.load(ch.partition);
          else this.coordinatorValue.unloadPartition(ch.partition);
        }),
      ),
    );
    this.maybeStart();
  }

  /** The coordinator, once `__consumer_offsets` exists. */
  get coordinator(): GroupCoordinator | undefined {
    return this.coordinatorValue;
  }

  /** The coordinator starts once the topic is in the metadata, and loads the partitions this broker leads already. */
  private maybeStart(): void {
    if (this.coordinatorValue || this.closed) return;
    const topic = this.cluster.topic(OFFSETS_TOPIC);
    if (!topic) return;
    const partitions = topic.partitions.length;
    if (partitions !== this.options.offsetsTopicPartitions) {
      this.deps.logger.warn(
        { configured: this.options.offsetsTopicPartitions, actual: partitions },
        `${OFFSETS_TOPIC} exists with another partition count; using it (the count is fixed once created)`,
      );
    }
    this.coordinatorValue = createGroupCoordinator(
      { ...this.options.coordinator, offsetsTopicPartitions: partitions },
      {
        offsetsLog: replicatedOffsetsLog(
          { leaderOf: (p) => this.cluster.leaderOf(OFFSETS_TOPIC, p), localLog: (p) => this.cluster.localLog(OFFSETS_TOPIC, p) },
          { partitionCount: partitions, commitTimeoutMs: this.options.commitTimeoutMs },
        ),
        topics: this.cluster.topics,
        clock: this.deps.clock,
        logger: this.deps.logger,
        ...(this.deps.newMemberId ? { newMemberId: this.deps.newMemberId } : {}),
      },
    );
    for (let p = 0; p < partitions; p++) if (this.cluster.leaderOf(OFFSETS_TOPIC, p)) this.load(p);
  }

  private load(partition: number): void {
    const coordinator = this.coordinatorValue;
    if (!coordinator || this.closed) return;
    const started = this.deps.clock();
    coordinator.loadPartition(partition).then(
      () => {
        if (coordinator.isPartitionLoaded(partition)) {
          this.deps.logger.info({ partition, ms: this.deps.clock() - started }, `coordinating the groups of ${OFFSETS_TOPIC}-${partition}`);
        }
      },
      (err: unknown) => {
        if (this.closed || !this.cluster.leaderOf(OFFSETS_TOPIC, partition)) return;
        this.deps.logger.warn({ partition, err }, `loading ${OFFSETS_TOPIC}-${partition} failed; retrying`);
        const timer = setTimeout(() => {
          this.retryTimers.delete(timer);
          if (this.cluster.leaderOf(OFFSETS_TOPIC, partition)) this.load(partition);
        }, this.options.loadRetryMs ?? 500);
        timer.unref();
        this.retryTimers.add(timer);
      },
    );
  }

  /** FindCoordinator: the leader of the group's offsets partition (see InternalTopic.coordinator). */
  findCoordinator(groupId: string): FindCoordinatorAnswer {
    return this.offsetsTopic.coordinator((count) => partitionForGroup(groupId, count));
  }

  /** Where to ask about a group instead (for the HTTP API of a broker that does not coordinate it). */
  coordinatorHint(groupId: string): string {
    const a = this.findCoordinator(groupId);
    if (a.errorCode !== 0 || a.nodeId === undefined) return a.errorMessage ?? 'no coordinator right now; retry';
    const b = this.cluster.broker(a.nodeId);
    return `broker ${a.nodeId} coordinates it${b?.httpPort ? `: ask http://${b.host}:${b.httpPort}` : ''}`;
  }

  /** Creates `__consumer_offsets` unless it exists (replication factor: offsets.topic.replication.factor, capped at the live brokers). */
  ensureOffsetsTopic(): Promise<void> {
    return this.offsetsTopic.ensure();
  }

  /**
   * Resolves once `__consumer_offsets` exists and every partition of it the
   * metadata says this broker leads is loaded, or after `timeoutMs` (a one-node cluster's start: its
   * groups are served from its first request, as a single broker's were).
   */
  async ready(timeoutMs: number): Promise<void> {
    await this.ensureOffsetsTopic();
    const deadline = this.deps.clock() + timeoutMs;
    const loaded = () => {
      const topic = this.cluster.topic(OFFSETS_TOPIC);
      const c = this.coordinatorValue;
      if (!topic || !c) return false;
      return topic.partitions.every((rec, p) => rec.leader !== this.cluster.brokerId || c.isPartitionLoaded(p));
    };
    while (!this.closed && !loaded()) {
      if (this.deps.clock() > deadline) {
        this.deps.logger.warn({ timeoutMs }, `${OFFSETS_TOPIC} is not loaded yet; group requests answer COORDINATOR_LOAD_IN_PROGRESS until it is`);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.offsetsTopic.close();
    for (const off of this.unsubscribe.splice(0)) off();
    for (const t of this.retryTimers) clearTimeout(t);
    this.retryTimers.clear();
    this.coordinatorValue?.close();
  }
}

