/**
 * Wires the group coordinator into the broker: `__consumer_offsets` is a
 * replicated cluster topic (a one-node cluster's too), coordinated
 * partition by partition by its leaders (see cluster-groups.ts) and
 * compacted by the cluster's cleaner. Plus the request handlers and HTTP
 * routes.
 */
import { MqError, errorCodeFromNumber, errorNumber, type ErrorCode } from '@mq/protocol/errors';
import type { Logger } from 'pino';
import type { BrokerConfig } from '../config/broker-config.js';
import { validateTopicConfigs } from '../config/topic-config.js';
import type { BrokerContext } from '../context.js';
import type { HandlerMap, ResponseOf } from '../handlers/types.js';
import { component } from '../http/route-spec.js';
import type { Router } from '../http/router.js';
import { groupParam, TopicName } from '../http/schemas.js';
import type { ClusterNode } from '../cluster/cluster-node.js';
import { internalTopicClusterOf } from '../cluster/internal-topic.js';
import { ClusterGroups, type FindCoordinatorAnswer, type GroupsCluster } from './cluster-groups.js';
import type { GroupCoordinator } from './group-coordinator.js';
import { groupOptionsFromConfig, parseGroupCoordinatorOptions } from './options.js';
import type { TopicView } from './types.js';
import { groupIdProblem, refuse } from '../request-limits.js';
import { isInternalTopic } from '@mq/protocol/topic-name';

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
  'group.max.groups',
  'group.create.limit',
  'group.empty.retention.ms',
  'group.create.rate.per.connection',
  'group.create.burst.per.connection',
] as const;

export interface BrokerGroupsDeps {
  config: BrokerConfig;
  logger: Logger;
  clock: () => number;
  /** New member ids (default: client id and a random UUID); the simulator passes a seeded one. */
  newMemberId?: (clientId: string) => string;
}

export interface BrokerGroups {
  /** The coordinator, once the cluster is joined and `__consumer_offsets` exists. */
  readonly coordinator: GroupCoordinator | undefined;
  readonly handlers: HandlerMap;
  /**
   * Coordinate the groups of the `__consumer_offsets`
   * partitions this broker leads, and see the cluster's topics. Until it is
   * called, group requests are answered NOT_COORDINATOR /
   * COORDINATOR_NOT_AVAILABLE.
   */
  useCluster(node: Pick<ClusterNode, 'controller' | 'replicas' | 'topicView' | 'peers'>): void;
  registerRoutes(router: Router, ctx: BrokerContext): void;
  /** Creates `__consumer_offsets` if needed and waits (up to `timeoutMs`) until the partitions led here are loaded. */
  ready(timeoutMs: number): Promise<void>;
  close(): void;
}

/** `__consumer_offsets` and `__transaction_state` (the one list in @mq/protocol/topic-name). */
export { isInternalTopic };

/** Topic configs of `__consumer_offsets`: compacted, never deleted by time or size. */
function offsetsTopicConfigs(config: BrokerConfig): Record<string, string> {
  return { 'cleanup.policy': 'compact', 'retention.ms': '-1', 'retention.bytes': '-1', 'segment.bytes': config.get('offsets.topic.segment.bytes') };
}

/** The cluster as the groups see it, from the broker's cluster node. */
export function groupsClusterOf(node: Pick<ClusterNode, 'controller' | 'replicas' | 'topicView'>): GroupsCluster {
  const md = node.controller.metadata;
  return {
    ...internalTopicClusterOf(node),
    topic: (name) => md.topic(name),
    broker: (id) => md.broker(id),
    onMetadataChange: (fn) => md.onChange(() => fn()),
    onTopicsDeleted: (fn) =>
      md.onChange((delta) => {
        if (delta.deletedTopics.length > 0) fn(delta.deletedTopics.map((t) => t.name));
      }),
    leaderOf: (topic, partition) => node.replicas.leaderOf(topic, partition),
    localLog: (topic, partition) => node.replicas.hostedPartition(topic, partition)?.log,
    onLeadershipChange: (fn) => node.replicas.onLeadershipChange(fn),
    topics: node.topicView(),
  };
}

export async function startGroups(deps: BrokerGroupsDeps): Promise<BrokerGroups> {
  const { config, logger } = deps;
  const raw: Record<string, string> = {};
  for (const key of GROUP_CONFIG_KEYS) raw[key] = config.get(key);
  const options = parseGroupCoordinatorOptions(groupOptionsFromConfig(raw));
  const groupLogger = logger.child({ component: 'group-coordinator' });
  const internalHidden = (view: TopicView): TopicView => ({
    partitionCount: (t) => (isInternalTopic(t) ? undefined : view.partitionCount(t)),
    logEndOffset: (t, p) => view.logEndOffset(t, p),
    topicId: (t) => (isInternalTopic(t) ? undefined : view.topicId?.(t)),
  });

  // The coordinator starts with the cluster (useCluster).
  let cluster: ClusterGroups | undefined;
  let clusterNode: Pick<ClusterNode, 'controller' | 'peers'> | undefined;
  let closed = false;
  const source: GroupHandlerSource = {
    coordinator: () => cluster?.coordinator,
    findCoordinator: (groupId) =>
      cluster?.findCoordinator(groupId) ?? { errorCode: errorNumber('COORDINATOR_NOT_AVAILABLE'), errorMessage: 'this broker has not joined the cluster yet; retry' },
    close: () => {
      closed = true;
      cluster?.close();
    },
  };
  return {
    get coordinator() {
      return cluster?.coordinator;
    },
    handlers: groupHandlers(source),
    useCluster(node) {
      if (cluster || closed) return;
      clusterNode = node;
      const view = node.topicView();
      const replicationFactor = config.int('offsets.topic.replication.factor');
      cluster = new ClusterGroups(
        { ...groupsClusterOf(node), topics: internalHidden(view) },
        {
          coordinator: options,
          offsetsTopicPartitions: options.offsetsTopicPartitions,
          offsetsTopicReplicationFactor: replicationFactor,
          offsetsTopicConfigs: validateTopicConfigs(offsetsTopicConfigs(config), config.int('max.frame.bytes')),
          commitTimeoutMs: config.int('offsets.commit.timeout.ms'),
        },
        { clock: deps.clock, logger: groupLogger, ...(deps.newMemberId ? { newMemberId: deps.newMemberId } : {}) },
      );
      logger.info({ partitions: options.offsetsTopicPartitions, replicationFactor }, 'group coordinator follows the leaders of __consumer_offsets');
    },
    registerRoutes: (router, ctx) =>
      registerGroupRoutes(router, ctx, () => cluster?.coordinator, {
        locate: (group) => cluster?.coordinatorHint(group) ?? 'this broker has not joined the cluster yet',
        listEverywhere: (states) => listGroupsOfCluster(clusterNode, cluster?.coordinator, ctx.brokerId, states),
      }),
    ready: async (timeoutMs) => {
      await cluster?.ready(timeoutMs);
    },
    close: () => source.close!(),
  };
}

/** Where the handlers find the coordinator (it may come and go in cluster mode). */
export interface GroupHandlerSource {
  /** The coordinator, or undefined while there is none (cluster mode before `__consumer_offsets` exists). */
  coordinator(): GroupCoordinator | undefined;
  /** Cluster mode: FindCoordinator from the metadata (the leader of the group's offsets partition). */
  findCoordinator?(groupId: string): FindCoordinatorAnswer;
  /** Called once when the broker starts shutting down: waiting joins and syncs are answered at once. */
  close?(): void;
}

const NOT_HERE: ErrorCode = 'NOT_COORDINATOR';

export function groupHandlers(source: GroupHandlerSource): HandlerMap {
  // On shutdown, joins and syncs waiting for a rebalance are answered at once
  // (COORDINATOR_NOT_AVAILABLE: the client retries elsewhere) instead of holding the close.
  let hooked = false;
  const hook = (ctx: { broker: { shutdownSignal: AbortSignal } }) => {
    if (hooked) return;
    hooked = true;
    const close = () => (source.close ? source.close() : source.coordinator()?.close());
    const signal = ctx.broker.shutdownSignal;
    if (signal.aborted) close();
    else signal.addEventListener('abort', close, { once: true });
  };
  const from = (ctx: { connection: { id: number; clientId: string; remote: string }; broker: { shutdownSignal: AbortSignal } }) => {
    hook(ctx);
    return { clientId: ctx.connection.clientId, clientHost: ctx.connection.remote, connectionId: ctx.connection.id };
  };
  const none = (groupId: string) => ({ errorCode: errorNumber(NOT_HERE), errorMessage: `this broker does not coordinate group "${groupId}" (ask FindCoordinator)` });
  return {
    findCoordinator: async (req, ctx) => {
      if ((req.keyType ?? 0) !== 0) {
        return { errorCode: errorNumber('INVALID_REQUEST'), errorMessage: `key type ${req.keyType} is not a group's (0); transaction coordinators are found with key type 1` };
      }
      const key = req.key ?? '';
      if (key === '') return { errorCode: errorNumber('INVALID_GROUP_ID'), errorMessage: 'group id must not be empty' };
      hook(ctx);
      if (source.findCoordinator) return source.findCoordinator(key);
      const coordinator = source.coordinator();
      if (!coordinator?.isCoordinatorFor(key)) {
        return { errorCode: errorNumber('COORDINATOR_NOT_AVAILABLE'), errorMessage: `the coordinator of group "${key}" is not available yet` };
      }
      const b = ctx.broker;
      return { errorCode: 0, nodeId: b.brokerId, host: b.advertisedHost, port: b.port };
    },
    joinGroup: async (req, ctx) => {
      const c = source.coordinator();
      return c ? c.joinGroup(req, from(ctx)) : { ...none(req.groupId ?? ''), memberId: req.memberId ?? '', generationId: -1 };
    },
    syncGroup: async (req, ctx) => source.coordinator()?.syncGroup(req, from(ctx)) ?? none(req.groupId ?? ''),
    heartbeat: async (req, ctx) => (hook(ctx), source.coordinator()?.heartbeat(req) ?? none(req.groupId ?? '')),
    leaveGroup: async (req, ctx) => (hook(ctx), source.coordinator()?.leaveGroup(req) ?? none(req.groupId ?? '')),
    txnOffsetCommit: async (req, ctx) => {
      const c = source.coordinator();
      const context = from(ctx);
      const producerId = Number(req.producerId ?? -1);
      const producerEpoch = req.producerEpoch ?? -1;
      const commit = { groupId: req.groupId ?? '', generationId: req.generationId ?? -1, memberId: req.memberId ?? '', groupInstanceId: req.groupInstanceId ?? '', topics: req.topics ?? [] };
      const all = (e: { errorCode: number; errorMessage: string }) => ({
        topics: (req.topics ?? []).map((t) => ({ name: t.name ?? '', partitions: (t.partitions ?? []).map((p) => ({ partition: p.partition ?? 0, ...e })) })),
      });
      if (producerId < 0 || producerEpoch < 0 || !req.transactionalId) {
        return all({ errorCode: errorNumber('INVALID_REQUEST'), errorMessage: 'TxnOffsetCommit needs the transactional id, producer id and epoch (InitProducerId first)' });
      }
      if (c) return c.offsetCommit(commit, context, { producerId, producerEpoch });
      return all(none(req.groupId ?? ''));
    },
    offsetCommit: async (req, ctx) => {
      const c = source.coordinator();
      const context = from(ctx);
      if (c) return c.offsetCommit(req, context);
      const e = none(req.groupId ?? '');
      return { topics: (req.topics ?? []).map((t) => ({ name: t.name ?? '', partitions: (t.partitions ?? []).map((p) => ({ partition: p.partition ?? 0, ...e })) })) };
    },
    offsetFetch: async (req, ctx) => (hook(ctx), source.coordinator()?.offsetFetch(req) ?? none(req.groupId ?? '')),
    listGroups: async (req, ctx) => (hook(ctx), source.coordinator()?.listGroups(req) ?? { errorCode: 0, groups: [] }),
    describeGroups: async (req, ctx) => {
      hook(ctx);
      const c = source.coordinator();
      return c ? c.describeGroups(req) : { groups: (req.groupIds ?? []).map((groupId) => ({ groupId, state: 'Dead', ...none(groupId) })) };
    },
    deleteGroups: async (req, ctx) => {
      hook(ctx);
      const c = source.coordinator();
      return c ? c.deleteGroups(req) : { results: (req.groupIds ?? []).map((groupId) => ({ groupId, ...none(groupId) })) };
    },
  };
}

/**
 * HTTP: GET /groups, GET /groups/{group} (members, assignment, committed
 * offsets, log end, lag), POST /groups/{group}/offsets (commit from outside
 * the group: `{topic, partition, offset, metadata?}` or `{offsets: [...]}`),
 * DELETE /groups/{group}. In cluster mode a broker answers for the groups it
 * coordinates (GET /groups lists those); for another group the error
 * (NOT_COORDINATOR, 503) names the broker to ask.
 */
/** A group as GET /groups lists it. */
interface ListedGroupRow {
  group: string;
  state: string;
  protocol_type: string;
}

/** Time each broker gets to answer a cluster-wide GET /groups. */
const LIST_GROUPS_TIMEOUT_MS = 5000;

/**
 * Every group of the cluster, as Kafka's admin client lists them: ListGroups
 * to each live (unfenced) broker, this one answered locally. A broker that
 * does not answer makes the listing fail (BROKER_NOT_AVAILABLE, retriable)
 * rather than come back silently short; once it is fenced it is not asked.
 */
async function listGroupsOfCluster(
  node: Pick<ClusterNode, 'controller' | 'peers'> | undefined,
  local: GroupCoordinator | undefined,
  me: number,
  states: string[],
): Promise<ListedGroupRow[]> {
  if (!node) throw new MqError('COORDINATOR_NOT_AVAILABLE', 'this broker has not joined the cluster yet; retry');
  const ids = node.controller.metadata
    .brokers()
    .filter((b) => !b.fenced)
    .map((b) => b.id);
  const answers = await Promise.allSettled(
    ids.map(async (id) => {
      const r: ResponseOf<'listGroups'> =
        id === me
          ? await (local?.listGroups({ statesFilter: states }) ?? { errorCode: 0, groups: [] })
          : ((await node.peers.request(id, 'listGroups', { statesFilter: states }, { timeoutMs: LIST_GROUPS_TIMEOUT_MS })) as ResponseOf<'listGroups'>);
      const code = errorCodeFromNumber(r.errorCode ?? 0);
      if (code !== 'NONE') throw new MqError(code, `ListGroups answered ${code}`);
      return r.groups ?? [];
    }),
  );
  const failed = answers.flatMap((a, i) => (a.status === 'rejected' ? [`broker ${ids[i]}: ${(a.reason as Error).message}`] : []));
  if (failed.length > 0) {
    throw new MqError('BROKER_NOT_AVAILABLE', `could not list every broker's groups (${failed.join('; ')}); retry`, { retriable: true });
  }
  // A group whose coordinator just moved can be listed by both brokers: once is enough.
  const rows = new Map<string, ListedGroupRow>();
  for (const a of answers) {
    if (a.status !== 'fulfilled') continue;
    for (const g of a.value) if (!rows.has(g.groupId!)) rows.set(g.groupId!, { group: g.groupId!, state: g.state!, protocol_type: g.protocolType! });
  }
  return [...rows.values()].sort((x, y) => (x.group < y.group ? -1 : x.group > y.group ? 1 : 0));
}

/** HTTP: one committed offset of POST /groups/{group}/offsets. */
const GroupOffset = component('GroupOffset', {
  type: 'object',
  required: ['topic', 'partition', 'offset'],
  additionalProperties: false,
  properties: { topic: TopicName, partition: { type: 'integer', minimum: 0 }, offset: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'The next record to read' }, metadata: { type: 'string' } },
});

const groupDetail = {
  type: 'object',
  required: ['group', 'state', 'members', 'offsets', 'total_lag'],
  properties: {
    group: { type: 'string' },
    state: { type: 'string' },
    protocol_type: { type: 'string' },
    protocol: { type: 'string' },
    generation: { type: 'integer' },
    leader: { type: 'string' },
    members: {
      type: 'array',
      items: {
        type: 'object',
        properties: { member_id: { type: 'string' }, group_instance_id: { type: ['string', 'null'] }, client_id: { type: 'string' }, client_host: { type: 'string' }, assignment: { type: 'array' } },
      },
    },
    offsets: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          topic: { type: 'string' },
          partition: { type: 'integer' },
          committed_offset: { type: 'integer' },
          log_end_offset: { type: ['integer', 'null'] },
          lag: { type: ['integer', 'null'] },
          metadata: { type: 'string' },
          owner: { type: ['string', 'null'] },
        },
      },
    },
    total_lag: { type: 'integer' },
  },
};

export interface GroupRouteOptions {
  /** Cluster mode: where a group is coordinated, for the error of a broker that does not. */
  locate?: (group: string) => string;
  /** Cluster mode: every group of the cluster for GET /groups (otherwise this broker's own). */
  listEverywhere?: (states: string[]) => Promise<ListedGroupRow[]>;
}

export function registerGroupRoutes(
  router: Router,
  _ctx: BrokerContext,
  current: () => GroupCoordinator | undefined,
  { locate, listEverywhere }: GroupRouteOptions = {},
): void {
  const need = (group: string): GroupCoordinator => {
    refuse(groupIdProblem(group));
    const c = current();
    if (!c || (locate && !c.isCoordinatorFor(group))) {
      throw new MqError(NOT_HERE, `this broker does not coordinate group "${group}"${locate ? ` (${locate(group)})` : ''}`);
    }
    return c;
  };
  router.add(
    'GET',
    '/groups',
    {
      operationId: 'listGroups',
      summary: 'List the consumer groups of the cluster (every broker is asked for the groups it coordinates)',
      query: { state: { schema: { type: 'array', items: { type: 'string' } }, description: 'Only groups in these states (repeatable, any case)' } },
      responses: {
        200: {
          description: 'The groups',
          schema: { type: 'array', items: { type: 'object', required: ['group', 'state'], properties: { group: { type: 'string' }, state: { type: 'string' }, protocol_type: { type: 'string' } } } },
        },
      },
    },
    async (req) => {
      const states = (req.input.query.state as string[] | undefined) ?? [];
      if (listEverywhere) return { status: 200, body: await listEverywhere(states) };
      const c = current();
      if (!c) return { status: 200, body: [] };
      const r = await c.listGroups({ statesFilter: states });
      return { status: 200, body: r.groups!.map((g) => ({ group: g.groupId, state: g.state, protocol_type: g.protocolType })) };
    },
  );

  router.add(
    'GET',
    '/groups/{group}',
    {
      operationId: 'describeGroup',
      summary: 'Describe a group coordinated by this broker: members, assignments, committed offsets and lag',
      params: { group: groupParam },
      responses: { 200: { description: 'The group', schema: groupDetail } },
      errors: [404, 503],
    },
    async (req) => {
      const s = need(req.params.group!).summarize(req.params.group!);
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
    },
  );

  router.add(
    'POST',
    '/groups/{group}/offsets',
    {
      operationId: 'commitGroupOffsets',
      summary: 'Commit offsets for a group from outside it (the group must be empty)',
      params: { group: groupParam },
      body: { required: true, schema: { oneOf: [GroupOffset, { type: 'object', required: ['offsets'], additionalProperties: false, properties: { offsets: { type: 'array', minItems: 1, items: GroupOffset } } }] } },
      responses: {
        200: {
          description: 'Committed',
          schema: {
            type: 'object',
            required: ['group', 'committed'],
            properties: { group: { type: 'string' }, committed: { type: 'array', items: { type: 'object', properties: { topic: { type: 'string' }, partition: { type: 'integer' } } } } },
          },
        },
      },
      errors: [404, 409, 503],
    },
    async (req) => {
      const group = req.params.group!;
      type Offset = { topic: string; partition: number; offset: number; metadata?: string };
      const body = req.input.body as Offset | { offsets: Offset[] };
      const list = 'offsets' in body ? body.offsets : [body];
      const byTopic = new Map<string, Array<{ partition: number; committedOffset: number; metadata: string; committedLeaderEpoch: number }>>();
      for (const { topic, partition, offset, metadata } of list) {
        let parts = byTopic.get(topic);
        if (!parts) byTopic.set(topic, (parts = []));
        parts.push({ partition, committedOffset: offset, metadata: metadata ?? '', committedLeaderEpoch: -1 });
      }
      const r = await need(group).offsetCommit({
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
        // As on every other route, a topic or partition that does not exist is not worth retrying.
        throw new MqError(code, failed.errorMessage, {
          ...(code === 'UNKNOWN_TOPIC_OR_PARTITION' ? { retriable: false } : {}),
          results: results.map((x) => ({ topic: x.topic, partition: x.partition, error: x.errorCode ? errorCodeFromNumber(x.errorCode) : null })),
        });
      }
      return { status: 200, body: { group, committed: results.map((x) => ({ topic: x.topic, partition: x.partition })) } };
    },
  );

  router.add(
    'DELETE',
    '/groups/{group}',
    {
      operationId: 'deleteGroup',
      summary: 'Delete an empty group and its committed offsets',
      params: { group: groupParam },
      responses: { 200: { description: 'Deleted', schema: { type: 'object', required: ['group', 'deleted'], properties: { group: { type: 'string' }, deleted: { const: true } } } } },
      errors: [404, 409, 503],
    },
    async (req) => {
      const group = req.params.group!;
      const r = (await need(group).deleteGroups({ groupIds: [group] })).results![0]!;
      if (r.errorCode) throw new MqError(errorCodeFromNumber(r.errorCode), r.errorMessage ?? '');
      return { status: 200, body: { group, deleted: true } };
    },
  );
}

