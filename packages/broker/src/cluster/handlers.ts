/**
 * The request handlers of a broker in a cluster. They replace the
 * single-broker ones for the APIs whose answer depends on the cluster:
 * Metadata from the metadata log; Produce, Fetch, ListOffsets and
 * OffsetForLeaderEpoch on the partitions this broker leads (NOT_LEADER
 * otherwise, so the client refreshes metadata and goes to the leader);
 * topic admin through the controller; ControllerForward for other brokers.
 */
import { requestDeadline, type RequestDeadline } from '../request-limits.js';
import { randomBytes } from 'node:crypto';
import type { mq } from '@mq/protocol/wire';
import { LATEST_TIMESTAMP } from '@mq/protocol/wire';
import { MqError, errorNumber, isMqError } from '@mq/protocol/errors';
import { handleFetch, handleOffsetForLeaderEpoch, type FetchRequest } from '@mq/replication';
import type { Timers } from '@mq/protocol/components';
import { validateTopicConfigs, TopicConfig } from '../config/topic-config.js';
import { checkCommand, commandLimitsOf } from '../controller/command-limits.js';
import { decodeCommand, type CommandResult } from '../controller/commands.js';
import type { Controller } from '../controller/controller.js';
import type { TopicRecord } from '../controller/types.js';
import { refusalLevel, toMqError, wireError } from '../errors.js';
import { fetchResponseMaxBytes } from '../handlers/fetch.js';
import { lookupOffset } from '../handlers/list-offsets.js';
import { produceHandler, type PartitionAppended } from '../handlers/produce.js';
import { type HandlerMap } from '../handlers/types.js';
import { isInternalTopic, refuseInternal, validateTopicName } from '../topics/topic-name.js';
import type { BrokerConfig } from '../config/broker-config.js';
import type { RequestContext } from '../context.js';
import type { ReplicaManager } from './replica-manager.js';

export interface ClusterHandlerDeps {
  controller: Controller;
  replicas: ReplicaManager;
  config: BrokerConfig;
  /** The long-poll timers of fetches. */
  timers: Timers;
}

const EMPTY = Buffer.alloc(0);

export function notLeader(d: ClusterHandlerDeps, topic: string, partition: number): MqError {
  const offline = d.replicas.offlineError(topic, partition);
  if (offline) return offline;
  const t = d.controller.metadata.topic(topic);
  const p = t?.partitions[partition];
  if (!t) {
    validateTopicName(topic);
    return new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${topic}" does not exist (create it with: mq topic create ${topic})`);
  }
  if (!p) return new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${topic}" has no partition ${partition} (it has ${t.partitions.length})`, { retriable: false });
  if (p.leader < 0) return new MqError('LEADER_NOT_AVAILABLE', `${topic}-${partition} has no leader: no in-sync replica is alive`);
  return new MqError('NOT_LEADER', `broker ${d.controller.options.brokerId} is not the leader of ${topic}-${partition} (broker ${p.leader} is); refresh metadata`, { leader: p.leader });
}

/** notLeader's error without throwing (an invalid topic name is its INVALID_TOPIC error). */
function whyNotLed(d: ClusterHandlerDeps, topic: string, partition: number): MqError {
  try {
    return notLeader(d, topic, partition);
  } catch (err) {
    return toMqError(err);
  }
}

function describeTopic(t: TopicRecord, fenced: (id: number) => boolean): mq.TopicMetadata.$Properties {
  return {
    errorCode: 0,
    name: t.name,
    internal: isInternalTopic(t.name),
    topicId: t.topicId,
    partitions: t.partitions.map((p, i) => ({
      errorCode: p.leader < 0 ? errorNumber('LEADER_NOT_AVAILABLE') : 0,
      partition: i,
      leader: p.leader,
      leaderEpoch: p.leaderEpoch,
      replicas: [...p.replicas],
      isr: [...p.isr],
      offlineReplicas: p.replicas.filter(fenced),
      partitionEpoch: p.partitionEpoch,
    })),
  };
}

export function clusterHandlers(d: ClusterHandlerDeps): HandlerMap {
  const md = d.controller.metadata;
  const limits = commandLimitsOf(d.config);

  /** Resolves once this broker's metadata satisfies `ready` (a change committed elsewhere has been applied here), or after `timeoutMs`. */
  function applied(ready: () => boolean, timeoutMs = 5000): Promise<void> {
    if (ready()) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      const off = md.onChange(() => {
        if (ready()) done();
      });
      function done() {
        clearTimeout(timer);
        off();
        resolve();
      }
    });
  }

  async function createTopic(name: string, numPartitions: number, replicationFactor: number, configs: Record<string, unknown>, validateOnly: boolean, deadline?: RequestDeadline) {
    validateTopicName(name);
    refuseInternal(name, 'create');
    const cfg = d.config;
    const n = numPartitions > 0 ? numPartitions : cfg.int('num.partitions');
    const rf = replicationFactor > 0 ? replicationFactor : cfg.int('default.replication.factor');
    const own = validateTopicConfigs(configs, cfg.int('max.frame.bytes'));
    const topicConfig = new TopicConfig(own, cfg);
    if (topicConfig.minInsyncReplicas > rf) {
      throw new MqError('INVALID_CONFIG', `min.insync.replicas ${topicConfig.minInsyncReplicas} is more than the replication factor ${rf}: acks=all could never succeed`);
    }
    const live = md.brokers().filter((b) => !b.fenced).length;
    if (rf > live) throw new MqError('INVALID_REPLICATION_FACTOR', `replication factor ${rf} is larger than the number of live brokers (${live})`);
    if (md.topic(name)) throw new MqError('TOPIC_ALREADY_EXISTS', `topic "${name}" already exists`);
    // The controller's own checks, on this broker's view (so validate_only answers what a real request would).
    const command = checkCommand({ type: 'createTopic', name, topicId: randomBytes(16).toString('base64url'), numPartitions: n, replicationFactor: rf, configs: own }, md, limits);
    const result = { name, errorCode: 0, numPartitions: n, replicationFactor: rf, configs: own, warning: '' };
    if (validateOnly) return result;
    await d.controller.submit(command, deadline?.check());
    await applied(() => md.topic(name)?.topicId === command.topicId, Math.min(5000, deadline?.remaining() ?? 5000));
    // The partitions this broker hosts are opened (or closed) before the answer: a client's next request finds them.
    await d.replicas.settled();
    return result;
  }

  const fenced = (id: number) => md.broker(id)?.fenced !== false;
  const handlers: HandlerMap = {
    metadata: async (req, ctx) => {
      const b = ctx.broker;
      // A broker cut off from the controller for longer than its session has resigned its leaderships and
      // its view may be stale (it may still name itself leader): send the client to another broker.
      if (d.replicas.cutOff) {
        throw new MqError(
          'BROKER_NOT_AVAILABLE',
          `broker ${d.controller.options.brokerId} has not reached the active controller for ${d.controller.leaderlessMs} ms; its metadata may be stale — ask another broker`,
        );
      }
      const names = req.topics ?? [];
      const topics: mq.TopicMetadata.$Properties[] = [];
      if (names.length === 0) {
        for (const t of md.topics()) topics.push(describeTopic(t, fenced));
      } else {
        for (const name of names) {
          try {
            validateTopicName(name);
            let t = md.topic(name);
            if (!t && b.config.bool('auto.create.topics.enable')) {
              await createTopic(name, 0, 0, {}, false).catch((err: { code?: string }) => {
                if (err.code !== 'TOPIC_ALREADY_EXISTS') throw err;
              });
              t = md.topic(name);
            }
            if (!t) throw new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${name}" does not exist (create it with: mq topic create ${name})`, { retriable: false });
            topics.push(describeTopic(t, fenced));
          } catch (err) {
            const e = wireError(err);
            topics.push({ name, errorCode: e.errorCode, errorMessage: e.errorMessage, partitions: [] });
          }
        }
      }
      const brokers = md.brokers().map((r) => ({ id: r.id, host: r.host, port: r.port, httpPort: r.httpPort, rack: r.rack, fenced: r.fenced }));
      return { clusterId: b.clusterId, controllerId: clientControllerId(d), brokers, topics };
    },

    produce: produceHandler(
      (name, index, batches, acks, request, ctx) => {
        const leader = d.replicas.leaderOf(name, index);
        const hosted = d.replicas.hostedPartition(name, index);
        if (!leader || !hosted) throw notLeader(d, name, index);
        // append() hands the batches to the log, which validates them (once) and stamps log-append time, before it returns: arrival order is kept.
        const options = {
          acks,
          timeoutMs: request.timeoutMs,
          signal: ctx.connection.signal,
          logAppendTime: hosted.config.logAppendTime,
          maxBatchBytes: hosted.config.maxMessageBytes,
        };
        return leader.append(batches, options).then((r) => {
          const out: PartitionAppended = { baseOffset: r.baseOffset, logAppendTime: r.logAppendTime, logStartOffset: r.logStartOffset };
          if (r.batchBaseOffsets) out.batchBaseOffsets = r.batchBaseOffsets;
          return out;
        });
      },
      { defaultTimeoutMs: 30_000, logRefusal: (ctx, topic, partition, err) => logRefusal(ctx, 'produce', topic, partition, err) },
    ),

    fetch: async (req, ctx) => {
      const b = ctx.broker;
      const cfg = b.config;
      const replicaId = req.replicaId ?? -1;
      const request: FetchRequest = {
        replicaId: replicaId > 0 ? replicaId : -1,
        replicaEpoch: Number(req.replicaEpoch ?? -1),
        maxWaitMs: Math.min(req.maxWaitMs ?? 0, cfg.int('fetch.max.wait.ms')),
        minBytes: req.minBytes ?? 0,
        maxBytes: fetchResponseMaxBytes(req.maxBytes, cfg, b.maxFrameBytes),
        partitions: (req.topics ?? []).flatMap((t) =>
          (t.partitions ?? []).map((p) => ({
            topic: t.name ?? '',
            partition: p.partition ?? 0,
            fetchOffset: Number(p.fetchOffset ?? 0),
            partitionMaxBytes: p.partitionMaxBytes || cfg.int('max.partition.fetch.bytes'),
            currentLeaderEpoch: p.currentLeaderEpoch ?? -1,
            logStartOffset: Number(p.logStartOffset ?? -1),
            lastFetchedEpoch: replicaId > 0 ? (p.lastFetchedEpoch ?? -1) : -1,
          })),
        ),
      };
      const signal = AbortSignal.any([ctx.connection.signal, b.shutdownSignal]);
      const res = await handleFetch(
        request,
        // Records are read into the broker's pooled buffers; the connection gives them back once the response is written.
        { timers: d.timers, leaders: (t, p) => d.replicas.leaderOf(t, p), hosts: (t, p) => d.replicas.hosts(t, p), pool: b.readBuffers },
        signal,
      );
      const out = new Map<string, mq.FetchPartitionResponse.$Properties[]>();
      for (const p of res.partitions) {
        let list = out.get(p.topic);
        if (!list) out.set(p.topic, (list = []));
        // Not led here: say why, from the metadata (deleted topic, no leader, another leader, an offline replica here).
        const why = p.errorCode === 'NOT_LEADER' || p.errorCode === 'UNKNOWN_TOPIC_OR_PARTITION' ? whyNotLed(d, p.topic, p.partition) : undefined;
        const code = why?.code ?? p.errorCode;
        const message = why?.message ?? p.errorMessage ?? '';
        if (code !== 'NONE' && code !== 'NOT_LEADER' && code !== 'LEADER_NOT_AVAILABLE' && code !== 'OFFSET_OUT_OF_RANGE') {
          ctx.logger.warn({ conn: ctx.connection.id, replicaId: request.replicaId, topic: p.topic, partition: p.partition, code, err: message }, 'fetch refused');
        }
        list.push({
          partition: p.partition,
          errorCode: errorNumber(code),
          errorMessage: message,
          highWatermark: p.highWatermark,
          lastStableOffset: p.highWatermark,
          logStartOffset: p.logStartOffset,
          logEndOffset: p.logEndOffset,
          records: p.records,
          divergingEpoch: p.divergingEpoch ? { epoch: p.divergingEpoch.epoch, endOffset: p.divergingEpoch.endOffset } : null,
          currentLeaderId: p.currentLeaderId,
          currentLeaderEpoch: p.currentLeaderEpoch,
        });
      }
      return { topics: [...out].map(([name, partitions]) => ({ name, partitions })) };
    },

    listOffsets: async (req, ctx) => {
      const topics: mq.ListOffsetsTopicResponse.$Properties[] = [];
      for (const t of req.topics ?? []) {
        const name = t.name ?? '';
        const partitions: mq.ListOffsetsPartitionResponse.$Properties[] = [];
        for (const lp of t.partitions ?? []) {
          const index = lp.partition ?? 0;
          try {
            const leader = d.replicas.leaderOf(name, index);
            const hosted = d.replicas.hostedPartition(name, index);
            if (!leader || !hosted) throw notLeader(d, name, index);
            const asked = lp.currentLeaderEpoch ?? -1;
            if (asked >= 0 && asked < leader.leaderEpoch) throw new MqError('FENCED_LEADER_EPOCH', `leader epoch ${asked} is older than ${leader.leaderEpoch} for ${name}-${index}`);
            if (asked > leader.leaderEpoch) throw new MqError('UNKNOWN_LEADER_EPOCH', `leader epoch ${asked} is newer than ${leader.leaderEpoch} for ${name}-${index}`);
            const hw = leader.highWatermark;
            const found = await lookupOffset({ logStartOffset: leader.logStartOffset, highWatermark: hw, logEndOffset: leader.logEndOffset }, hosted.log, Number(lp.timestamp ?? LATEST_TIMESTAMP));
            partitions.push({ partition: index, errorCode: 0, timestamp: found.timestamp, offset: found.offset, leaderEpoch: leader.leaderEpoch, logStartOffset: leader.logStartOffset, highWatermark: hw });
          } catch (err) {
            logRefusal(ctx, 'list offsets', name, index, err);
            partitions.push({ partition: index, ...wireError(err), timestamp: -1, offset: -1, leaderEpoch: -1, logStartOffset: -1, highWatermark: -1 });
          }
        }
        topics.push({ name, partitions });
      }
      return { topics };
    },

    offsetForLeaderEpoch: async (req) => {
      const res = handleOffsetForLeaderEpoch(
        {
          replicaId: req.replicaId ?? -1,
          partitions: (req.topics ?? []).flatMap((t) =>
            (t.partitions ?? []).map((p) => ({ topic: t.name ?? '', partition: p.partition ?? 0, currentLeaderEpoch: p.currentLeaderEpoch ?? -1, leaderEpoch: p.leaderEpoch ?? 0 })),
          ),
        },
        { leaders: (t, p) => d.replicas.leaderOf(t, p), hosts: (t, p) => d.replicas.hosts(t, p) },
      );
      const out = new Map<string, mq.OffsetForLeaderEpochPartitionResponse.$Properties[]>();
      for (const p of res.partitions) {
        let list = out.get(p.topic);
        if (!list) out.set(p.topic, (list = []));
        const why = p.errorCode === 'NOT_LEADER' || p.errorCode === 'UNKNOWN_TOPIC_OR_PARTITION' ? whyNotLed(d, p.topic, p.partition) : undefined;
        list.push({ partition: p.partition, errorCode: errorNumber(why?.code ?? p.errorCode), leaderEpoch: p.leaderEpoch, endOffset: p.endOffset });
      }
      return { topics: [...out].map(([name, partitions]) => ({ name, partitions })) };
    },

    createTopics: async (req, ctx) => {
      const results: mq.TopicResult.$Properties[] = [];
      const deadline = requestDeadline(Date.now, req.timeoutMs ?? 0);
      const seen = new Map<string, number>();
      for (const t of req.topics ?? []) seen.set(t.name ?? '', (seen.get(t.name ?? '') ?? 0) + 1);
      for (const t of req.topics ?? []) {
        const name = t.name ?? '';
        try {
          if (seen.get(name)! > 1) throw new MqError('INVALID_REQUEST', `topic "${name}" appears more than once in the request`);
          deadline.check();
          results.push(await createTopic(name, t.numPartitions ?? 0, t.replicationFactor ?? 0, t.configs ?? {}, req.validateOnly ?? false, deadline));
          if (!req.validateOnly) ctx.logger.info({ topic: name }, 'topic created through the controller');
        } catch (err) {
          logRefusal(ctx, 'create topic', name, -1, err);
          results.push({ name, ...wireError(err) });
        }
      }
      return { results };
    },

    deleteTopics: async (req, ctx) => {
      const results: mq.TopicResult.$Properties[] = [];
      const deadline = requestDeadline(Date.now, req.timeoutMs ?? 0);
      for (const name of req.topics ?? []) {
        try {
          if (!d.config.bool('delete.topic.enable')) throw new MqError('TOPIC_DELETION_DISABLED', 'topic deletion is disabled (delete.topic.enable=false)');
          validateTopicName(name);
          refuseInternal(name, 'delete');
          // A name this broker's metadata does not have costs no metadata-log commit (hundreds of them kept a request unanswered for 40 s).
          if (!md.topic(name)) throw new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${name}" does not exist`);
          const v = (await d.controller.submit({ type: 'deleteTopic', name }, deadline.check())) as { partitions: number; replicationFactor: number; configs: Record<string, string> };
          await applied(() => md.topic(name) === undefined, Math.min(5000, deadline.remaining()));
          // The partitions this broker hosts are opened (or closed) before the answer: a client's next request finds them.
          await d.replicas.settled();
          results.push({ name, errorCode: 0, numPartitions: v.partitions, replicationFactor: v.replicationFactor, configs: v.configs, warning: '' });
        } catch (err) {
          logRefusal(ctx, 'delete topic', name, -1, err);
          results.push({ name, ...wireError(err) });
        }
      }
      return { results };
    },

    createPartitions: async (req, ctx) => {
      const results: mq.TopicResult.$Properties[] = [];
      const deadline = requestDeadline(Date.now, req.timeoutMs ?? 0);
      for (const t of req.topics ?? []) {
        const name = t.topic ?? '';
        try {
          deadline.check();
          refuseInternal(name, 'add partitions to');
          const existing = md.topic(name);
          if (!existing) throw new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${name}" does not exist (create it with: mq topic create ${name})`, { retriable: false });
          const count = t.count ?? 0;
          if (count <= existing.partitions.length) throw new MqError('INVALID_PARTITIONS', `topic "${name}" has ${existing.partitions.length} partitions; the new count ${count} must be larger (partitions can only be added)`);
          const rf = existing.partitions[0]?.replicas.length ?? 1;
          const warning = 'records with a key may now map to a different partition than before (murmur2(key) % partitions changed), so per-key ordering across the change is not kept';
          const command = checkCommand({ type: 'createPartitions', name, count }, md, limits);
          if (!req.validateOnly) {
            await d.controller.submit(command, deadline.check());
            await applied(() => (md.topic(name)?.partitions.length ?? 0) >= count, Math.min(5000, deadline.remaining()));
            // The partitions this broker hosts are opened (or closed) before the answer: a client's next request finds them.
            await d.replicas.settled();
          }
          results.push({ name, errorCode: 0, numPartitions: count, replicationFactor: rf, configs: { ...existing.configs }, warning });
        } catch (err) {
          logRefusal(ctx, 'create partitions', name, -1, err);
          results.push({ name, ...wireError(err) });
        }
      }
      return { results };
    },

    describeConfigs: async (req) => {
      const results: mq.ConfigResult.$Properties[] = [];
      for (const name of req.topics ?? []) {
        try {
          const t = md.topic(name);
          if (!t) {
            validateTopicName(name);
            throw new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${name}" does not exist (create it with: mq topic create ${name})`, { retriable: false });
          }
          results.push({ resource: name, errorCode: 0, entries: new TopicConfig(t.configs, d.config).entries() });
        } catch (err) {
          results.push({ resource: name, ...wireError(err), entries: [] });
        }
      }
      if (req.includeBroker) results.push({ resource: '', errorCode: 0, entries: d.config.entries() });
      return { results };
    },

    controllerForward: async (req, ctx) => {
      if (req.metadataFetch) return metadataFetch(d, req.metadataFetch, ctx);
      let result: CommandResult;
      try {
        const cmd = decodeCommand(req.command ?? new Uint8Array());
        result = await d.controller.handleForward(cmd, Math.min(req.timeoutMs || 10_000, 60_000));
      } catch (err) {
        const e = toMqError(err);
        if (!isMqError(err) || (e.code !== 'NOT_LEADER' && e.code !== 'PROPOSAL_DROPPED')) ctx.logger.warn({ from: req.brokerId, code: e.code, err: e.message }, 'controller forward failed');
        result = { ok: false, code: e.code === 'NOT_LEADER' ? 'NOT_CONTROLLER' : e.code, message: e.message };
      }
      if (result.ok) return { errorCode: 0, errorMessage: '', result: Buffer.from(JSON.stringify(result.value ?? null)), controllerId: d.controller.controllerId };
      let code = 0;
      try {
        code = errorNumber(result.code as never);
      } catch {
        code = errorNumber('UNKNOWN');
      }
      return { errorCode: code, errorMessage: result.message, result: EMPTY, controllerId: d.controller.controllerId };
    },
  };
  return handlers;
}

/**
 * The "controller" a client sends admin requests to. With dedicated
 * controllers the active one is not a broker clients can reach, so (as
 * Kafka's KRaft brokers do) a broker names itself, or a live broker, and
 * forwards admin commands to the controller.
 */
function clientControllerId(d: ClusterHandlerDeps): number {
  const md = d.controller.metadata;
  const active = d.controller.controllerId;
  if (active < 0 || md.broker(active)) return active;
  const self = d.controller.options.brokerId;
  if (md.broker(self)) return self;
  return md.brokers().find((b) => !b.fenced)?.id ?? -1;
}

/** A broker-only process fetching the metadata log (and so heartbeating) from the active controller. */
async function metadataFetch(d: ClusterHandlerDeps, f: mq.IMetadataFetchRequest, ctx: RequestContext): Promise<mq.IControllerForwardResponse> {
  return metadataFetchAnswer(d.controller, f, ctx.connection.signal, (e) => {
    if (e.code !== 'NOT_CONTROLLER') ctx.logger.warn({ from: f.brokerId, code: e.code, err: e.message }, 'metadata fetch failed');
  });
}

/** The ControllerForward answer to a MetadataFetch (errors become error codes, NOT_CONTROLLER with the active controller's id). */
export async function metadataFetchAnswer(controller: Controller, f: mq.IMetadataFetchRequest, signal?: AbortSignal, onError?: (e: MqError) => void): Promise<mq.IControllerForwardResponse> {
  const d = { controller };
  try {
    const r = await d.controller.handleMetadataFetch(
      { brokerId: f.brokerId ?? -1, incarnation: f.incarnation ?? '', fetchIndex: Number(f.fetchIndex ?? 0), maxWaitMs: f.maxWaitMs ?? 0, maxEntries: f.maxEntries || 1000 },
      signal,
    );
    const answer: mq.IMetadataFetchResponse =
      r.kind === 'snapshot'
        ? { entries: [], snapshot: r.data, snapshotIndex: r.index, committedIndex: r.applied }
        : { entries: r.entries.map((e) => ({ index: e.index, data: e.data })), snapshot: EMPTY, snapshotIndex: 0, committedIndex: r.applied };
    return { errorCode: 0, errorMessage: '', result: EMPTY, controllerId: d.controller.controllerId, metadataFetch: answer };
  } catch (err) {
    const e = toMqError(err);
    onError?.(e);
    return { errorCode: errorNumber(e.code), errorMessage: e.message, result: EMPTY, controllerId: d.controller.controllerId };
  }
}

function logRefusal(ctx: RequestContext, what: string, topic: string, partition: number, err: unknown): void {
  const e = toMqError(err);
  const fields = { conn: ctx.connection.id, remote: ctx.connection.remote, topic, partition, code: e.code, err: e.message };
  const level = refusalLevel(e);
  if (level === 'error') ctx.logger.error({ ...fields, stack: (err as Error).stack }, `${what} failed`);
  else if (level === 'debug') ctx.logger.debug(fields, `${what} abandoned`);
  else if (e.code !== 'NOT_LEADER') ctx.logger.warn(fields, `${what} refused`);
}
