/**
 * Transactions in a cluster, as groups use `__consumer_offsets`:
 * `__transaction_state` is a replicated, compacted internal topic created
 * through the controller by the first FindCoordinator with key type 1; the
 * coordinator of a transactional id is the leader of the partition the id
 * hashes to. This broker loads a partition when it becomes its leader
 * (COORDINATOR_LOAD_IN_PROGRESS meanwhile, then it finishes any prepared
 * transaction it finds) and drops it when it stops leading
 * (NOT_COORDINATOR). Markers go to each partition's leader: this broker's
 * own through the WriteTxnMarkers code directly, the others' as a
 * WriteTxnMarkers request on the inter-broker connection.
 */
import { errorCodeFromNumber, MqError } from '@mq/protocol/errors';
import type { Logger, Timers } from '@mq/protocol/components';
import { guard } from '../guard.js';
import type { ClusterNode } from '../cluster/cluster-node.js';
import type { BrokerConfig } from '../config/broker-config.js';
import { validateTopicConfigs } from '../config/topic-config.js';
import { InternalTopic, internalTopicClusterOf, type FindCoordinatorAnswer } from '../cluster/internal-topic.js';
import { OFFSETS_TOPIC } from '../group/options.js';
import { replicatedOffsetsLog } from '../group/replicated-offsets-log.js';
import type { HandlerDeps } from '../handlers/deps.js';
import { appendTxnMarkers } from '../handlers/write-txn-markers.js';
import type { ProducerIdManager } from '../producers/producer-ids.js';
import { TXN_STATE_TOPIC, TxnCoordinator, partitionForTransactionalId, type TopicPartition, type TxnMarker } from './txn-coordinator.js';

/** Errors of a marker write that mean: the partition is gone, count it as written (as Kafka does for a deleted topic). */
const GONE = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'UNKNOWN_TOPIC_ID', 'INVALID_TOPIC']);

export interface ClusterTransactionsDeps {
  config: BrokerConfig;
  logger: Logger;
  clock: () => number;
  timers: Timers;
  producerIds: ProducerIdManager;
  onTxnMarker?: HandlerDeps['onTxnMarker'];
}

export class ClusterTransactions {
  private coordinatorValue: TxnCoordinator | undefined;
  private readonly stateTopic: InternalTopic;
  private readonly unsubscribe: Array<() => void> = [];
  private closed = false;
  private readonly d: HandlerDeps;

  constructor(
    private readonly node: Pick<ClusterNode, 'controller' | 'replicas' | 'peers'>,
    private readonly deps: ClusterTransactionsDeps,
  ) {
    const cfg = deps.config;
    this.stateTopic = new InternalTopic(
      internalTopicClusterOf(node),
      {
        name: TXN_STATE_TOPIC,
        partitions: cfg.int('transaction.state.log.num.partitions'),
        replicationFactor: cfg.int('transaction.state.log.replication.factor'),
        configs: validateTopicConfigs(
          { 'cleanup.policy': 'compact', 'retention.ms': '-1', 'retention.bytes': '-1', 'segment.bytes': cfg.get('transaction.state.log.segment.bytes') },
          cfg.int('max.frame.bytes'),
        ),
      },
      deps.logger,
    );
    this.d = { controller: node.controller, replicas: node.replicas, config: deps.config, timers: deps.timers, ...(deps.onTxnMarker ? { onTxnMarker: deps.onTxnMarker } : {}) };
    this.unsubscribe.push(node.controller.metadata.onChange(guard(deps.logger, 'starting the transaction coordinator', () => this.maybeStart())));
    this.unsubscribe.push(
      node.replicas.onLeadershipChange(
        guard(deps.logger, 'moving a __transaction_state partition', (ch: { topic: string; partition: number; leader: boolean }) => {
          if (ch.topic !== TXN_STATE_TOPIC || !this.coordinatorValue) return;
          if (ch.leader) this.load(ch.partition);
          else this.coordinatorValue.unloadPartition(ch.partition);
        }),
      ),
    );
    this.maybeStart();
  }

  get coordinator(): TxnCoordinator | undefined {
    return this.coordinatorValue;
  }

  private maybeStart(): void {
    if (this.coordinatorValue || this.closed) return;
    const topic = this.node.controller.metadata.topic(TXN_STATE_TOPIC);
    if (!topic) return;
    const partitionCount = topic.partitions.length;
    const cfg = this.deps.config;
    this.coordinatorValue = new TxnCoordinator(
      {
        partitionCount,
        maxTimeoutMs: cfg.int('transaction.max.timeout.ms'),
        abortCheckIntervalMs: cfg.int('transaction.abort.timed.out.transaction.cleanup.interval.ms'),
        expirationMs: cfg.int('transactional.id.expiration.ms'),
        offsetsPartitionCount: () => this.node.controller.metadata.topic(OFFSETS_TOPIC)?.partitions.length,
      },
      {
        log: replicatedOffsetsLog(
          { leaderOf: (p) => this.node.replicas.leaderOf(TXN_STATE_TOPIC, p), localLog: (p) => this.node.replicas.hostedPartition(TXN_STATE_TOPIC, p)?.log },
          { partitionCount, commitTimeoutMs: cfg.int('offsets.commit.timeout.ms'), topic: TXN_STATE_TOPIC },
        ),
        allocateProducerId: () => this.deps.producerIds.allocate(),
        writeMarkers: (m) => this.writeMarkers(m),
        partitionProblem: (t, p) => this.partitionProblem(t, p),
        clock: this.deps.clock,
        timers: this.deps.timers,
        logger: this.deps.logger,
      },
    );
    for (let p = 0; p < partitionCount; p++) if (this.node.replicas.leaderOf(TXN_STATE_TOPIC, p)) this.load(p);
  }

  private load(partition: number): void {
    const c = this.coordinatorValue;
    if (!c || this.closed) return;
    c.loadPartition(partition).catch((err: unknown) => {
      if (this.closed || !this.node.replicas.leaderOf(TXN_STATE_TOPIC, partition)) return;
      this.deps.logger.warn({ partition, err: (err as Error).message }, `loading ${TXN_STATE_TOPIC}-${partition} failed; retrying`);
      const t = this.deps.timers.setTimeout(() => {
        if (this.node.replicas.leaderOf(TXN_STATE_TOPIC, partition)) this.load(partition);
      }, 500);
      void t;
    });
  }

  /** A partition a transaction may include: an existing partition of a topic (internal ones only through AddOffsetsToTxn). */
  private partitionProblem(topic: string, partition: number): MqError | undefined {
    const t = this.node.controller.metadata.topic(topic);
    if (!t) return new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${topic}" does not exist (create it with: mq topic create ${topic})`, { retriable: false });
    if (!Number.isInteger(partition) || partition < 0 || partition >= t.partitions.length) {
      return new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${topic}" has no partition ${partition} (it has ${t.partitions.length})`, { retriable: false });
    }
    if (topic === TXN_STATE_TOPIC) return new MqError('INVALID_TOPIC', `${TXN_STATE_TOPIC} cannot be written by a transaction`);
    return undefined;
  }

  /** One marker to each partition's leader (grouped per leader); answers the partitions to retry. */
  private async writeMarkers(m: TxnMarker): Promise<TopicPartition[]> {
    const md = this.node.controller.metadata;
    const byLeader = new Map<number, TopicPartition[]>();
    const retry: TopicPartition[] = [];
    for (const tp of m.partitions) {
      const t = md.topic(tp.topic);
      if (!t || !t.partitions[tp.partition]) continue; // deleted: nothing to mark
      const leader = t.partitions[tp.partition]!.leader;
      if (leader < 0) {
        retry.push(tp);
        continue;
      }
      let list = byLeader.get(leader);
      if (!list) byLeader.set(leader, (list = []));
      list.push(tp);
    }
    const self = this.node.controller.options.brokerId;
    const timeoutMs = this.deps.config.int('transaction.marker.timeout.ms');
    await Promise.all(
      [...byLeader].map(async ([leader, tps]) => {
        const topics = groupTopics(tps);
        const marker = { producerId: m.producerId, producerEpoch: m.producerEpoch, committed: m.committed, topics };
        try {
          const results =
            leader === self
              ? (await appendTxnMarkers(this.d, [marker], timeoutMs, this.deps.clock())).map((r) => ({ topic: r.topic, partition: r.partition, code: r.error?.code ?? 'NONE', message: r.error?.message }))
              : ((await this.node.peers.request(leader, 'writeTxnMarkers', { markers: [marker], timeoutMs }, { timeoutMs: timeoutMs + 5000 })).results ?? []).map((r) => ({
                  topic: r.topic ?? '',
                  partition: r.partition ?? 0,
                  code: errorCodeFromNumber(r.errorCode ?? 0),
                  message: r.errorMessage ?? '',
                }));
          const answered = new Set<string>();
          for (const r of results) {
            answered.add(`${r.topic}\u0000${r.partition}`);
            if (r.code === 'NONE' || GONE.has(r.code)) continue;
            this.deps.logger.debug({ topic: r.topic, partition: r.partition, code: r.code, err: r.message, leader }, 'transaction marker not written yet; retrying');
            retry.push({ topic: r.topic, partition: r.partition });
          }
          for (const tp of tps) if (!answered.has(`${tp.topic}\u0000${tp.partition}`)) retry.push(tp);
        } catch (err) {
          this.deps.logger.debug({ leader, err: (err as Error).message }, 'WriteTxnMarkers to a leader failed; retrying');
          retry.push(...tps);
        }
      }),
    );
    return retry;
  }

  /** FindCoordinator with key type 1: the leader of the id's `__transaction_state` partition (see InternalTopic.coordinator). */
  findCoordinator(transactionalId: string): FindCoordinatorAnswer {
    return this.stateTopic.coordinator((count) => partitionForTransactionalId(transactionalId, count));
  }

  ensureTopic(): Promise<void> {
    return this.stateTopic.ensure();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stateTopic.close();
    for (const off of this.unsubscribe.splice(0)) off();
    this.coordinatorValue?.close();
  }
}

function groupTopics(tps: readonly TopicPartition[]): Array<{ name: string; partitions: number[] }> {
  const m = new Map<string, number[]>();
  for (const tp of tps) {
    let l = m.get(tp.topic);
    if (!l) m.set(tp.topic, (l = []));
    l.push(tp.partition);
  }
  return [...m].map(([name, partitions]) => ({ name, partitions }));
}

