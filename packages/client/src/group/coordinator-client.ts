/**
 * Requests to a group's coordinator: finds it (FindCoordinator), sends the
 * membership requests there (the GroupRpc of the group member), and commits
 * and fetches offsets with the client's retry policy. The coordinator is
 * looked up again after NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE or a
 * lost connection.
 */
import { MqError, errorCodeFromNumber, isMqError, type ErrorCode } from '@mq/protocol/errors';
import type { mq } from '@mq/protocol/wire';
import type { Cluster, Target } from '../cluster.js';
import type { ResponseOf } from '../connection.js';
import { Retrier } from '../retrier.js';
import type { Generation, GroupMetadataSource, GroupRpc, TopicPartition } from './types.js';

export interface OffsetAndMetadata {
  offset: number;
  metadata?: string;
  leaderEpoch?: number;
}

export interface TopicPartitionOffsetAndMetadata extends TopicPartition, OffsetAndMetadata {}

export interface CommittedOffset {
  topic: string;
  partition: number;
  /** -1 when the group has no committed offset for the partition. */
  offset: number;
  metadata: string;
  leaderEpoch: number;
}

/** The APIs a transaction coordinator serves (each answers one top-level error code). */
export type TxnCoordinatorApi = 'initProducerId' | 'addPartitionsToTxn' | 'addOffsetsToTxn' | 'endTxn';

const COORDINATOR_GONE: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['NOT_COORDINATOR', 'COORDINATOR_NOT_AVAILABLE']);

function codeOf(r: { errorCode?: number | null }): ErrorCode {
  return errorCodeFromNumber(r.errorCode ?? 0);
}

export class CoordinatorClient implements GroupRpc {
  private coordinatorId: number | null = null;
  private finding: Promise<number> | null = null;
  private findRotation = 0;
  private readonly retrier: Retrier;

  constructor(
    private readonly cluster: Cluster,
    readonly groupId: string,
    private readonly joinTimeoutMs: number = cluster.options.requestTimeoutMs,
    /** FindCoordinator's key type: 0 a group's coordinator (groupId is the group), 1 a transaction coordinator (groupId is the transactional id). */
    private readonly keyType: 0 | 1 = 0,
  ) {
    if (typeof groupId !== 'string' || groupId === '') throw new MqError('INVALID_ARGUMENT', `${keyType === 1 ? 'transactionalId' : 'groupId'} must be a non-empty string`);
    this.retrier = new Retrier({ retries: 8, initialDelayMs: 100, maxDelayMs: 2000 });
  }

  coordinatorLost(): void {
    this.coordinatorId = null;
  }

  /** The broker id of the group's coordinator (looked up once, then cached). */
  async coordinator(signal?: AbortSignal): Promise<number> {
    if (this.coordinatorId !== null) return this.coordinatorId;
    this.finding ??= this.find(signal).finally(() => {
      this.finding = null;
    });
    return this.finding;
  }

  /**
   * Where FindCoordinator goes: any broker first; each retry asks the next
   * broker of the metadata in turn (one broker may be cut off from the
   * cluster, or down, and keep answering COORDINATOR_NOT_AVAILABLE).
   */
  private findTarget(first: boolean): Target {
    const ids = [...this.cluster.brokers.values()].filter((b) => !b.fenced).map((b) => b.id).sort((a, b) => a - b);
    if (first || ids.length === 0) return { kind: 'any' };
    return { kind: 'broker', id: ids[this.findRotation++ % ids.length]! };
  }

  private async find(signal?: AbortSignal): Promise<number> {
    let first = true;
    return this.retrier.run(
      async ({ bail, attempt }) => {
        // Retries go round the brokers of the metadata: learn them if this client has none yet.
        if (attempt > 0 && this.cluster.brokers.size === 0) await this.cluster.refreshMetadata([], signal).catch(() => undefined);
        const target = () => {
          const t = this.findTarget(first);
          first = false;
          return t;
        };
        const r = await this.cluster.send(target, 'findCoordinator', { key: this.groupId, keyType: this.keyType }, { signal });
        const code = codeOf(r);
        if (code === 'NONE') {
          this.coordinatorId = r.nodeId ?? 0;
          return this.coordinatorId;
        }
        const what = this.keyType === 1 ? `transactional id "${this.groupId}"` : `group "${this.groupId}"`;
        const err = new MqError(code, `finding the coordinator of ${what}: ${r.errorMessage || code}`);
        if (!err.retriable && !COORDINATOR_GONE.has(code)) bail(err);
        throw new MqError(code, err.message, { retriable: true });
      },
      { signal },
    );
  }

  private async call<
    B extends
      | 'joinGroup'
      | 'syncGroup'
      | 'heartbeat'
      | 'leaveGroup'
      | 'offsetCommit'
      | 'offsetFetch'
      | 'describeGroups'
      | 'deleteGroups'
      | TxnCoordinatorApi
      | 'txnOffsetCommit',
  >(
    body: B,
    payload: NonNullable<mq.RequestFrame[B]>,
    signal?: AbortSignal,
    timeoutMs?: number,
  ) {
    // The cluster retries a lost connection or a timeout: each retry asks FindCoordinator again
    // (the coordinator's broker may be gone for good, its partitions led elsewhere by now).
    let attempt = 0;
    const target = async (): Promise<Target> => {
      if (attempt++ > 0) this.coordinatorLost();
      return { kind: 'broker', id: await this.coordinator(signal) };
    };
    try {
      const r = await this.cluster.send(target, body, payload as never, { signal, timeoutMs });
      if (COORDINATOR_GONE.has(codeOf(r as { errorCode?: number }))) this.coordinatorLost();
      return r;
    } catch (err) {
      if (isMqError(err) && err.retriable) this.coordinatorLost();
      throw err;
    }
  }

  /**
   * An admin request to the coordinator (describe, delete), retried with the
   * client's policy while the coordinator moved (NOT_COORDINATOR,
   * COORDINATOR_NOT_AVAILABLE: found again), is loading the group
   * (COORDINATOR_LOAD_IN_PROGRESS) or the connection to it was lost.
   * `codeOf` picks the error of the response that decides.
   */
  async request<B extends 'describeGroups' | 'deleteGroups'>(
    body: B,
    payload: NonNullable<mq.RequestFrame[B]>,
    codeOfResponse: (r: ResponseOf<B>) => ErrorCode,
    signal?: AbortSignal,
  ): Promise<ResponseOf<B>> {
    return this.retrier.run(
      async () => {
        const r = (await this.call(body, payload, signal)) as ResponseOf<B>;
        const code = codeOfResponse(r);
        if (COORDINATOR_GONE.has(code)) this.coordinatorLost();
        if (COORDINATOR_GONE.has(code) || code === 'COORDINATOR_LOAD_IN_PROGRESS') {
          throw new MqError(code, `${body} for group "${this.groupId}": the coordinator ${code === 'COORDINATOR_LOAD_IN_PROGRESS' ? 'is loading the group' : 'moved'}`, { retriable: true });
        }
        return r;
      },
      { signal },
    );
  }

  joinGroup(req: mq.JoinGroupRequest.$Properties, signal?: AbortSignal): Promise<mq.JoinGroupResponse.$Properties> {
    // A join waits for the whole rebalance: allow the rebalance timeout plus the usual request time.
    const timeout = (req.rebalanceTimeoutMs ?? 0) + this.cluster.options.requestTimeoutMs;
    return this.call('joinGroup', req, signal, Math.max(timeout, this.joinTimeoutMs));
  }

  syncGroup(req: mq.SyncGroupRequest.$Properties, signal?: AbortSignal): Promise<mq.SyncGroupResponse.$Properties> {
    return this.call('syncGroup', req, signal, this.joinTimeoutMs + this.cluster.options.requestTimeoutMs);
  }

  /**
   * A transaction coordinator request (InitProducerId, AddPartitionsToTxn,
   * AddOffsetsToTxn, EndTxn), retried with the client's policy while the
   * coordinator moved or loads and while the previous transaction completes
   * (CONCURRENT_TRANSACTIONS); any other error is thrown with its code.
   */
  async txnRequest<B extends TxnCoordinatorApi>(body: B, payload: NonNullable<mq.RequestFrame[B]>, signal?: AbortSignal): Promise<ResponseOf<B>> {
    return this.retrier.run(
      async ({ bail }) => {
        const r = (await this.call(body, payload, signal)) as ResponseOf<B>;
        const code = codeOf(r as { errorCode?: number | null });
        if (code === 'NONE') return r;
        if (COORDINATOR_GONE.has(code)) this.coordinatorLost();
        const err = new MqError(code, `${body} for transactional id "${this.groupId}": ${(r as { errorMessage?: string | null }).errorMessage || code}`);
        if (COORDINATOR_GONE.has(code) || code === 'COORDINATOR_LOAD_IN_PROGRESS' || code === 'CONCURRENT_TRANSACTIONS') throw new MqError(code, err.message, { retriable: true });
        bail(err);
        throw err;
      },
      { signal },
    );
  }

  /** TxnOffsetCommit: offsets committed inside a transaction (visible once it commits); rejects with the first partition's error. */
  async txnOffsetCommit(payload: mq.TxnOffsetCommitRequest.$Properties, signal?: AbortSignal): Promise<void> {
    await this.retrier.run(
      async ({ bail }) => {
        const r = await this.call('txnOffsetCommit', payload, signal);
        for (const t of r.topics ?? []) {
          for (const p of t.partitions ?? []) {
            const code = codeOf(p);
            if (code === 'NONE') continue;
            if (COORDINATOR_GONE.has(code)) this.coordinatorLost();
            const err = new MqError(code, `transactional commit of ${t.name}-${p.partition} for group "${this.groupId}" failed: ${p.errorMessage || code}`);
            if (!err.retriable && !COORDINATOR_GONE.has(code) && code !== 'COORDINATOR_LOAD_IN_PROGRESS') bail(err);
            throw new MqError(code, err.message, { retriable: true });
          }
        }
      },
      { signal },
    );
  }

  heartbeat(req: mq.HeartbeatRequest.$Properties, signal?: AbortSignal): Promise<mq.HeartbeatResponse.$Properties> {
    return this.call('heartbeat', req, signal);
  }

  leaveGroup(req: mq.LeaveGroupRequest.$Properties, signal?: AbortSignal): Promise<mq.LeaveGroupResponse.$Properties> {
    return this.call('leaveGroup', req, signal);
  }

  /**
   * Commits offsets, as a member (`generation`) or from outside the group
   * (null: only while the group is empty). Resolves once the coordinator
   * has stored them durably; rejects with the first partition's error.
   */
  async commit(
    offsets: readonly TopicPartitionOffsetAndMetadata[],
    generation: Generation | null,
    signal?: AbortSignal,
  ): Promise<void> {
    if (offsets.length === 0) return;
    const byTopic = new Map<string, mq.OffsetCommitPartition.$Properties[]>();
    for (const o of offsets) {
      if (!Number.isSafeInteger(o.offset) || o.offset < 0) {
        throw new MqError('INVALID_ARGUMENT', `offset ${o.offset} for ${o.topic}-${o.partition} must be an integer >= 0`);
      }
      let list = byTopic.get(o.topic);
      if (!list) byTopic.set(o.topic, (list = []));
      list.push({ partition: o.partition, committedOffset: o.offset, committedLeaderEpoch: o.leaderEpoch ?? -1, metadata: o.metadata ?? '' });
    }
    const payload = {
      groupId: this.groupId,
      generationId: generation?.generationId ?? -1,
      memberId: generation?.memberId ?? '',
      groupInstanceId: generation?.groupInstanceId ?? '',
      topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })),
    };
    await this.retrier.run(
      async ({ bail }) => {
        const r = await this.call('offsetCommit', payload, signal);
        for (const t of r.topics ?? []) {
          for (const p of t.partitions ?? []) {
            const code = codeOf(p);
            if (code === 'NONE') continue;
            if (COORDINATOR_GONE.has(code)) this.coordinatorLost();
            const err = new MqError(code, `commit of ${t.name}-${p.partition} for group "${this.groupId}" failed: ${p.errorMessage || code}`, {
              topic: t.name,
              partition: p.partition,
            });
            if (!err.retriable) bail(err);
            throw err;
          }
        }
      },
      { signal },
    );
  }

  /**
   * Committed offsets of the group (every committed partition when `partitions` is omitted).
   * `requireStable` (KIP-447; a read_committed consumer asks it): a partition whose offset was committed in a
   * transaction still open is retried until the transaction ends, instead of answering the offset before it.
   */
  async committed(partitions?: readonly TopicPartition[], signal?: AbortSignal, options: { requireStable?: boolean } = {}): Promise<CommittedOffset[]> {
    const byTopic = new Map<string, number[]>();
    for (const tp of partitions ?? []) {
      let list = byTopic.get(tp.topic);
      if (!list) byTopic.set(tp.topic, (list = []));
      list.push(tp.partition);
    }
    const r = await this.retrier.run(
      async ({ bail }) => {
        const r = await this.call(
          'offsetFetch',
          { groupId: this.groupId, topics: [...byTopic].map(([name, ps]) => ({ name, partitions: ps })), requireStable: options.requireStable ?? false },
          signal,
        );
        const code = codeOf(r);
        if (code !== 'NONE') {
          const err = new MqError(code, `fetching committed offsets of group "${this.groupId}": ${r.errorMessage || code}`);
          if (!err.retriable && !COORDINATOR_GONE.has(code)) bail(err);
          throw new MqError(code, err.message, { retriable: true });
        }
        const unstable = (r.topics ?? []).flatMap((t) => (t.partitions ?? []).filter((p) => codeOf(p) === 'UNSTABLE_OFFSET_COMMIT').map((p) => `${t.name}-${p.partition}`));
        if (unstable.length > 0) throw new MqError('UNSTABLE_OFFSET_COMMIT', `group "${this.groupId}" has offsets of ${unstable.join(', ')} committed in a transaction still open`);
        return r;
      },
      { signal },
    );
    const out: CommittedOffset[] = [];
    for (const t of r.topics ?? []) {
      for (const p of t.partitions ?? []) {
        const code = codeOf(p);
        if (code !== 'NONE') throw new MqError(code, `committed offset of ${t.name}-${p.partition}: ${code}`);
        out.push({
          topic: t.name ?? '',
          partition: p.partition ?? 0,
          offset: p.committedOffset ?? -1,
          metadata: p.metadata ?? '',
          leaderEpoch: p.committedLeaderEpoch ?? -1,
        });
      }
    }
    return out;
  }
}

/** Topic metadata for the group member, from the client's metadata cache. */
export function clusterMetadataSource(cluster: Cluster): GroupMetadataSource {
  return {
    async partitionCounts(topics, signal) {
      const out = new Map<string, number>();
      for (const t of topics) {
        try {
          out.set(t, (await cluster.topic(t, signal)).partitions.length);
        } catch (err) {
          if (!isMqError(err, 'UNKNOWN_TOPIC_OR_PARTITION')) throw err;
        }
      }
      return out;
    },
    async listTopics(signal) {
      return (await cluster.listTopics(signal)).filter((t) => !t.internal).map((t) => t.name);
    },
  };
}

