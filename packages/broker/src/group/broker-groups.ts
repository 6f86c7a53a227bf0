/**
 * Wires the group coordinator into the broker: the internal topic
 * `__consumer_offsets` (created on first start), the offsets log over its
 * partitions, the request handlers and the HTTP routes.
 */
import { MqError, errorCodeFromNumber, errorNumber } from '@mq/protocol/errors';
import { iterateBatches, lastOffset } from '@mq/protocol/batch';
import type { Logger } from 'pino';
import type { BrokerConfig } from '../config/broker-config.js';
import type { BrokerContext } from '../context.js';
import type { HandlerMap } from '../handlers/types.js';
import type { Router } from '../http/router.js';
import type { TopicManager } from '../topics/topic-manager.js';
import { createGroupCoordinator, type GroupCoordinator } from './group-coordinator.js';
import type { OffsetsLog } from './offsets-log.js';
import { OFFSETS_TOPIC, groupOptionsFromConfig, parseGroupCoordinatorOptions } from './options.js';
import type { TopicView } from './types.js';

/** Broker config keys of the coordinator (Kafka's names) and their defaults. */
export const GROUP_CONFIG_KEYS = [
  'offsets.topic.num.partitions',
  'group.min.session.timeout.ms',
  'group.max.session.timeout.ms',
  'group.initial.rebalance.delay.ms',
  'group.max.size',
  'offsets.retention.minutes',
  'offsets.retention.check.interval.ms',
  'offset.metadata.max.bytes',
] as const;

export interface BrokerGroupsDeps {
  config: BrokerConfig;
  topics: TopicManager;
  logger: Logger;
  clock: () => number;
}

export interface BrokerGroups {
  readonly coordinator: GroupCoordinator;
  readonly handlers: HandlerMap;
  /**
   * Replaces where the coordinator looks topics up (partition counts, high
   * watermarks). By default the broker's local TopicManager; in cluster mode
   * the cluster's metadata must be given here.
   */
  useTopicView(view: TopicView): void;
  registerRoutes(router: Router, ctx: BrokerContext): void;
  close(): void;
}

export function isInternalTopic(name: string): boolean {
  return name === OFFSETS_TOPIC;
}

/** The offsets log over the partitions of `__consumer_offsets` this broker leads. */
function offsetsLogOver(topics: TopicManager): OffsetsLog {
  const partition = (p: number) => topics.partition(OFFSETS_TOPIC, p);
  return {
    get partitionCount() {
      return topics.require(OFFSETS_TOPIC).partitions.length;
    },
    // Single broker: appended (and flushed per the topic's flush policy) is acks=all.
    async append(p, batch) {
      const r = await partition(p).append(batch);
      return { baseOffset: r.baseOffset };
    },
    async read(p, fromOffset, maxBytes) {
      const part = partition(p);
      const records = await part.read(fromOffset, maxBytes);
      let next = fromOffset;
      for (const span of iterateBatches(records)) next = lastOffset(span.header) + 1;
      return { records, nextOffset: next };
    },
    startOffset: (p) => partition(p).logStartOffset,
    endOffset: (p) => partition(p).highWatermark,
  };
}

export async function startGroups(deps: BrokerGroupsDeps): Promise<BrokerGroups> {
  const { topics, config, logger } = deps;
  const raw: Record<string, string> = {};
  for (const key of GROUP_CONFIG_KEYS) raw[key] = config.get(key);
  const options = parseGroupCoordinatorOptions(groupOptionsFromConfig(raw));
  let existing = topics.get(OFFSETS_TOPIC);
  if (!existing) {
    await topics.create({
      name: OFFSETS_TOPIC,
      numPartitions: options.offsetsTopicPartitions,
      replicationFactor: 1,
      // Never lose committed offsets to time or size retention: the coordinator compacts the topic instead (below).
      configs: { 'cleanup.policy': 'compact', 'retention.ms': '-1', 'retention.bytes': '-1', 'segment.bytes': config.get('offsets.topic.segment.bytes') },
    });
    existing = topics.require(OFFSETS_TOPIC);
  }
  const partitions = existing.partitions.length;
  if (partitions !== options.offsetsTopicPartitions) {
    logger.warn(
      { configured: options.offsetsTopicPartitions, actual: partitions },
      `${OFFSETS_TOPIC} already exists with another partition count; using it (the count is fixed once created)`,
    );
  }
  let view: TopicView = {
    partitionCount: (t) => topics.get(t)?.partitions.length,
    logEndOffset: (t, p) => topics.get(t)?.partitions[p]?.highWatermark,
  };
  const coordinator = createGroupCoordinator(
    { ...options, offsetsTopicPartitions: partitions },
    {
      offsetsLog: offsetsLogOver(topics),
      topics: {
        partitionCount: (t) => (isInternalTopic(t) ? undefined : view.partitionCount(t)),
        logEndOffset: (t, p) => view.logEndOffset(t, p),
      },
      clock: deps.clock,
      logger: logger.child({ component: 'group-coordinator' }),
    },
  );
  const voters = clusterVoters(config);
  const started = Date.now();
  if (!voters) {
    await coordinator.startup();
    logger.info({ partitions, groups: coordinator.groupCount, ms: Date.now() - started }, 'group coordinator ready');
  }
  const compactor = startOffsetsCompaction(topics, Number(config.get('offsets.compaction.interval.ms')), logger);
  // Cluster mode: each broker coordinates the offsets partitions that map to it (see coordinatorOf);
  // it learns its id from the first request and loads them then (clients get COORDINATOR_LOAD_IN_PROGRESS meanwhile).
  let loading: Promise<void> | null = null;
  const loadOwned = (brokerId: number) =>
    (loading ??= (async () => {
      for (let p = 0; p < partitions; p++) {
        if (coordinatorOf(p, voters!) === brokerId) await coordinator.loadPartition(p);
      }
      logger.info({ partitions, brokerId, groups: coordinator.groupCount, ms: Date.now() - started }, 'group coordinator ready (cluster mode)');
    })().catch((err) => {
      loading = null;
      logger.error({ err }, 'loading group state failed; retrying on the next request');
    }));
  return {
    coordinator,
    handlers: groupHandlers(coordinator, voters ? { voters, onRequest: (brokerId) => void loadOwned(brokerId) } : {}),
    registerRoutes: (router, ctx) => registerGroupRoutes(router, ctx, coordinator),
    useTopicView: (v) => {
      view = v;
    },
    close: () => {
      compactor.stop();
      coordinator.close();
    },
  };
}

/** What a log-store log offers for compaction (not part of the broker's PartitionLog view yet). */
interface CompactableLog {
  compact?(options?: { upToOffset?: number }): Promise<{ cleanedSegments: number; removedRecords: number; bytesBefore: number; bytesAfter: number }>;
}

/**
 * `__consumer_offsets` is a compacted topic: every record is keyed by
 * (group, topic, partition) or (group), so only the latest per key matters.
 * The topic says cleanup.policy=compact; the coordinator (not the broker's
 * general cleaner, which skips internal topics) runs the log-store's key
 * compaction over its closed segments
 * (below the high watermark) on a timer; tombstones go after the log's
 * deleteRetentionMs. The active segment is never compacted (as in Kafka).
 */
export function startOffsetsCompaction(topics: TopicManager, intervalMs: number, logger: Logger): { stop(): void; runOnce(): Promise<number> } {
  let running: Promise<number> | null = null;
  let stopped = false;
  const runOnce = (): Promise<number> =>
    (running ??= (async () => {
      let removed = 0;
      try {
        const topic = topics.get(OFFSETS_TOPIC);
        for (const p of topic?.partitions ?? []) {
          if (stopped || p.isClosed) break;
          const log = p.log as unknown as CompactableLog;
          if (!log.compact) return 0;
          const r = await log.compact({ upToOffset: p.highWatermark });
          removed += r.removedRecords;
          if (r.removedRecords > 0) {
            logger.info({ partition: p.index, removedRecords: r.removedRecords, bytesBefore: r.bytesBefore, bytesAfter: r.bytesAfter }, 'compacted __consumer_offsets');
          }
        }
      } catch (err) {
        if (!stopped) logger.warn({ err }, 'compaction of __consumer_offsets failed; retrying on the next interval');
      } finally {
        running = null;
      }
      return removed;
    })());
  const timer = setInterval(() => void runOnce(), intervalMs);
  timer.unref();
  return {
    runOnce,
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}

/**
 * Broker ids of the cluster's voters when the broker runs in cluster mode
 * (`controller.quorum.voters`), sorted; null for a single broker.
 */
export function clusterVoters(config: Pick<BrokerConfig, 'get'>): number[] | null {
  let raw = '';
  try {
    raw = config.get('controller.quorum.voters');
  } catch {
    return null; // a build without cluster mode
  }
  const ids = raw
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '')
    .map((v) => Number(v.split('@')[0]))
    .filter((n) => Number.isInteger(n) && n >= 0);
  return ids.length > 0 ? [...new Set(ids)].sort((a, b) => a - b) : null;
}

/**
 * The broker that coordinates the groups of one `__consumer_offsets`
 * partition in cluster mode: spread over the voters, the same answer on
 * every broker. (Until the offsets partitions are replicated and the
 * coordinator follows their leaders, a group is available while this broker is.)
 */
export function coordinatorOf(partition: number, voters: readonly number[]): number {
  return voters[partition % voters.length]!;
}

export interface GroupHandlerOptions {
  /** Cluster mode: the voters' broker ids (sorted). */
  voters?: readonly number[];
  /** Called with this broker's id on each request (cluster mode loads its partitions on the first). */
  onRequest?: (brokerId: number) => void;
}

export function groupHandlers(coordinator: GroupCoordinator, options: GroupHandlerOptions = {}): HandlerMap {
  const { voters, onRequest } = options;
  const seen = (ctx: { broker: { brokerId: number } }) => onRequest?.(ctx.broker.brokerId);
  // On shutdown, joins and syncs waiting for a rebalance are answered at once
  // (COORDINATOR_NOT_AVAILABLE: the client retries elsewhere) instead of holding the close.
  let hooked = false;
  const from = (ctx: { connection: { clientId: string; remote: string }; broker: { shutdownSignal: AbortSignal; brokerId: number } }) => {
    seen(ctx);
    if (!hooked) {
      hooked = true;
      const signal = ctx.broker.shutdownSignal;
      if (signal.aborted) coordinator.close();
      else signal.addEventListener('abort', () => coordinator.close(), { once: true });
    }
    return { clientId: ctx.connection.clientId, clientHost: ctx.connection.remote };
  };
  return {
    findCoordinator: async (req, ctx) => {
      if ((req.keyType ?? 0) !== 0) {
        return { errorCode: errorNumber('INVALID_REQUEST'), errorMessage: 'only group coordinators (key type 0) exist; transactions are not supported' };
      }
      const key = req.key ?? '';
      if (key === '') return { errorCode: errorNumber('INVALID_GROUP_ID'), errorMessage: 'group id must not be empty' };
      seen(ctx);
      if (voters) {
        const nodeId = coordinatorOf(coordinator.partitionFor(key), voters);
        // Clients connect to a broker by its id from Metadata; host and port are filled for this broker only.
        if (nodeId !== ctx.broker.brokerId) return { errorCode: 0, nodeId, host: '', port: 0 };
      }
      if (!coordinator.isCoordinatorFor(key)) {
        return { errorCode: errorNumber('COORDINATOR_NOT_AVAILABLE'), errorMessage: `the coordinator of group "${key}" is not available yet` };
      }
      const b = ctx.broker;
      return { errorCode: 0, nodeId: b.brokerId, host: b.advertisedHost, port: b.port };
    },
    joinGroup: (req, ctx) => coordinator.joinGroup(req, from(ctx)),
    syncGroup: (req, ctx) => coordinator.syncGroup(req, from(ctx)),
    heartbeat: (req, ctx) => (seen(ctx), coordinator.heartbeat(req)),
    leaveGroup: (req, ctx) => (seen(ctx), coordinator.leaveGroup(req)),
    offsetCommit: (req, ctx) => (seen(ctx), coordinator.offsetCommit(req)),
    offsetFetch: (req, ctx) => (seen(ctx), coordinator.offsetFetch(req)),
    listGroups: (req, ctx) => (seen(ctx), coordinator.listGroups(req)),
    describeGroups: (req, ctx) => (seen(ctx), coordinator.describeGroups(req)),
    deleteGroups: (req, ctx) => (seen(ctx), coordinator.deleteGroups(req)),
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * HTTP: GET /groups, GET /groups/{group} (members, assignment, committed
 * offsets, log end, lag), POST /groups/{group}/offsets (commit from outside
 * the group: `{topic, partition, offset, metadata?}` or `{offsets: [...]}`),
 * DELETE /groups/{group}.
 */
export function registerGroupRoutes(router: Router, _ctx: BrokerContext, coordinator: GroupCoordinator): void {
  router.add('GET', '/groups', async (req) => {
    const states = req.query.getAll('state');
    const r = await coordinator.listGroups({ statesFilter: states });
    return { status: 200, body: r.groups!.map((g) => ({ group: g.groupId, state: g.state, protocol_type: g.protocolType })) };
  });

  router.add('GET', '/groups/{group}', async (req) => {
    const s = coordinator.summarize(req.params.group!);
    return {
      status: 200,
      body: {
        group: s.groupId,
        state: s.state,
        protocol_type: s.protocolType,
        protocol: s.protocol,
        generation: s.generationId,
        leader: s.leader,
        members: s.members.map((m) => ({
          member_id: m.memberId,
          group_instance_id: m.groupInstanceId,
          client_id: m.clientId,
          client_host: m.clientHost,
          assignment: m.assignment,
        })),
        offsets: s.offsets.map((o) => ({
          topic: o.topic,
          partition: o.partition,
          committed_offset: o.committedOffset,
          log_end_offset: o.logEndOffset,
          lag: o.lag,
          metadata: o.metadata,
          owner: o.owner,
        })),
        total_lag: s.offsets.reduce((n, o) => n + (o.lag ?? 0), 0),
      },
    };
  });

  router.add('POST', '/groups/{group}/offsets', async (req) => {
    const group = req.params.group!;
    const body = await req.json();
    if (!isObject(body)) throw new MqError('INVALID_REQUEST', 'the body must be {topic, partition, offset, metadata?} or {offsets: [...]}');
    const list = Array.isArray(body.offsets) ? body.offsets : [body];
    if (list.length === 0) throw new MqError('INVALID_REQUEST', '"offsets" is empty');
    const byTopic = new Map<string, Array<{ partition: number; committedOffset: number; metadata: string; committedLeaderEpoch: number }>>();
    for (const item of list) {
      if (!isObject(item)) throw new MqError('INVALID_REQUEST', 'each offset must be an object {topic, partition, offset, metadata?}');
      const { topic, partition, offset, metadata } = item;
      if (typeof topic !== 'string' || topic === '') throw new MqError('INVALID_REQUEST', '"topic" must be a non-empty string');
      if (typeof partition !== 'number' || !Number.isInteger(partition) || partition < 0) {
        throw new MqError('INVALID_REQUEST', '"partition" must be an integer >= 0');
      }
      if (typeof offset !== 'number' || !Number.isSafeInteger(offset)) throw new MqError('INVALID_REQUEST', '"offset" must be an integer');
      if (metadata !== undefined && typeof metadata !== 'string') throw new MqError('INVALID_REQUEST', '"metadata" must be a string');
      let parts = byTopic.get(topic);
      if (!parts) byTopic.set(topic, (parts = []));
      parts.push({ partition, committedOffset: offset, metadata: metadata ?? '', committedLeaderEpoch: -1 });
    }
    const r = await coordinator.offsetCommit({
      groupId: group,
      generationId: -1,
      memberId: '',
      topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })),
    });
    const results = r.topics!.flatMap((t) =>
      t.partitions!.map((p) => ({ topic: t.name!, partition: p.partition!, errorCode: p.errorCode ?? 0, errorMessage: p.errorMessage ?? '' })),
    );
    const failed = results.find((x) => x.errorCode !== 0);
    if (failed) {
      // One typed error for the whole request (the valid ones in it were stored; the body lists which).
      const code = errorCodeFromNumber(failed.errorCode);
      throw new MqError(code, failed.errorMessage, {
        results: results.map((x) => ({ topic: x.topic, partition: x.partition, error: x.errorCode ? errorCodeFromNumber(x.errorCode) : null })),
      });
    }
    return { status: 200, body: { group, committed: results.map((x) => ({ topic: x.topic, partition: x.partition })) } };
  });

  router.add('DELETE', '/groups/{group}', async (req) => {
    const group = req.params.group!;
    const r = (await coordinator.deleteGroups({ groupIds: [group] })).results![0]!;
    if (r.errorCode) throw new MqError(errorCodeFromNumber(r.errorCode), r.errorMessage ?? '');
    return { status: 200, body: { group, deleted: true } };
  });
}

