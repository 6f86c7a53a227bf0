/**
 * An internal topic whose partition leaders coordinate something: groups
 * (`__consumer_offsets`) and transactions (`__transaction_state`). The
 * coordinator of a key is the leader of the partition the key hashes to,
 * read from the metadata (the same answer on every broker); the first
 * FindCoordinator creates the topic through the controller (once at a time on
 * this broker; a creation by another broker first is fine), with at most as
 * many replicas as brokers are live.
 */
import { randomBytes } from 'node:crypto';
import { MqError, errorNumber, isMqError } from '@mq/protocol/errors';
import type { Logger } from '@mq/protocol/components';
import type { ClusterNode } from './cluster-node.js';

/** What an internal topic needs of the cluster (the group coordinator's GroupsCluster has it). */
export interface InternalTopicCluster {
  readonly brokerId: number;
  /** A topic of the cluster metadata: each partition's leader (-1: none). */
  topic(name: string): { partitions: ReadonlyArray<{ leader: number }> } | undefined;
  /** A registered broker's endpoint. */
  broker(id: number): { host: string; port: number; fenced: boolean } | undefined;
  /** Registered, unfenced brokers. */
  liveBrokers(): number;
  /** This broker has lost the controller for longer than its session (its metadata may be stale). */
  cutOff(): boolean;
  /** Proposes a topic to the controller; a refusal (e.g. TOPIC_ALREADY_EXISTS) throws its MqError. */
  createTopic(topic: { name: string; topicId: string; numPartitions: number; replicationFactor: number; configs: Record<string, string> }): Promise<void>;
}

/** The InternalTopicCluster of a broker's cluster node. */
export function internalTopicClusterOf(node: Pick<ClusterNode, 'controller' | 'replicas'>): InternalTopicCluster {
  const md = node.controller.metadata;
  return {
    brokerId: node.controller.options.brokerId,
    topic: (name) => md.topic(name),
    broker: (id) => md.broker(id),
    liveBrokers: () => md.brokers().filter((b) => !b.fenced).length,
    cutOff: () => node.replicas.cutOff,
    createTopic: async (t) => {
      await node.controller.submit({ type: 'createTopic', ...t });
    },
  };
}

export interface InternalTopicSpec {
  name: string;
  /** The partition count it is created with (fixed once it exists). */
  partitions: number;
  /** The most replicas it gets (its `*.replication.factor` config), capped at the live brokers when it is created. */
  replicationFactor: number;
  /** Topic configs it is created with (min.insync.replicas is added here). */
  configs: Record<string, string>;
}

export interface FindCoordinatorAnswer {
  errorCode: number;
  errorMessage?: string;
  nodeId?: number;
  host?: string;
  port?: number;
}

/** The replication factor and min.insync.replicas an internal topic is created with. */
export function internalTopicReplication(configuredRf: number, liveBrokers: number): { replicationFactor: number; minInsyncReplicas: number } {
  const replicationFactor = Math.max(1, Math.min(configuredRf, liveBrokers));
  return { replicationFactor, minInsyncReplicas: replicationFactor >= 3 ? 2 : 1 };
}

export function coordinatorNotAvailable(message: string): FindCoordinatorAnswer {
  return { errorCode: errorNumber('COORDINATOR_NOT_AVAILABLE'), errorMessage: message };
}

export class InternalTopic {
  #creating: Promise<void> | undefined;
  #closed = false;

  constructor(
    private readonly cluster: InternalTopicCluster,
    private readonly spec: InternalTopicSpec,
    private readonly logger: Logger,
  ) {}

  get name(): string {
    return this.spec.name;
  }

  /**
   * FindCoordinator: the leader of partition `partitionOf(count)`.
   * COORDINATOR_NOT_AVAILABLE while the partition has no leader, while the
   * topic does not exist yet (this call starts creating it), and from a
   * broker cut off from the controller (its metadata may be stale).
   */
  coordinator(partitionOf: (partitionCount: number) => number): FindCoordinatorAnswer {
    const name = this.spec.name;
    if (this.cluster.cutOff()) return coordinatorNotAvailable(`broker ${this.cluster.brokerId} has lost the active controller; ask another broker`);
    const topic = this.cluster.topic(name);
    if (!topic) {
      void this.ensure();
      return coordinatorNotAvailable(`${name} is being created; retry`);
    }
    const p = partitionOf(topic.partitions.length);
    const leader = topic.partitions[p]?.leader ?? -1;
    if (leader < 0) return coordinatorNotAvailable(`${name}-${p} has no leader right now; retry`);
    const b = this.cluster.broker(leader);
    if (!b || b.fenced) return coordinatorNotAvailable(`broker ${leader}, the leader of ${name}-${p}, is not available; retry`);
    return { errorCode: 0, nodeId: leader, host: b.host, port: b.port };
  }

  /** Creates the topic through the controller unless it exists; a failure is logged and the next FindCoordinator retries. */
  ensure(): Promise<void> {
    const { name, partitions } = this.spec;
    if (this.#closed || this.cluster.topic(name)) return Promise.resolve();
    return (this.#creating ??= (async () => {
      const live = this.cluster.liveBrokers();
      if (live === 0) throw new MqError('COORDINATOR_NOT_AVAILABLE', `no live broker to host ${name} yet`);
      const { replicationFactor, minInsyncReplicas } = internalTopicReplication(this.spec.replicationFactor, live);
      if (replicationFactor < this.spec.replicationFactor) {
        this.logger.warn(
          { configured: this.spec.replicationFactor, replicationFactor, liveBrokers: live },
          `creating ${name} with fewer replicas than configured: only ${live} broker(s) are live`,
        );
      }
      try {
        await this.cluster.createTopic({
          name,
          topicId: randomBytes(16).toString('base64url'),
          numPartitions: partitions,
          replicationFactor,
          configs: { ...this.spec.configs, 'min.insync.replicas': String(minInsyncReplicas) },
        });
        this.logger.info({ partitions, replicationFactor, minInsyncReplicas }, `created ${name}`);
      } catch (err) {
        if (!isMqError(err, 'TOPIC_ALREADY_EXISTS')) throw err;
      }
    })()
      .catch((err: unknown) => {
        if (!this.#closed) this.logger.warn({ err: (err as Error).message }, `creating ${name} failed; the next FindCoordinator retries`);
      })
      .finally(() => {
        this.#creating = undefined;
      }));
  }

  close(): void {
    this.#closed = true;
  }
}
