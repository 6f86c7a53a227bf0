/**
 * The HTTP topic backend of a broker in a cluster. It answers exactly as the
 * wire API does, by calling the wire API: topic admin goes through this
 * broker's own cluster handlers (CreateTopics / DeleteTopics, which forward
 * to the active controller); records go to the partition's leader, through
 * this broker's handlers when it leads the partition and otherwise over the
 * inter-broker connection (Produce, Fetch, ListOffsets as any client would
 * send them). So a client can use any broker's HTTP port, acks=all still
 * waits for the ISR on the leader, and reads stop at the leader's high
 * watermark. When the leader moves mid-request (NOT_LEADER,
 * LEADER_NOT_AVAILABLE) the call waits for the metadata to change and tries
 * the new leader, up to `leaderWaitMs`.
 */
import { sleep, systemTimers } from '@mq/protocol/components';
import type { QuotaRecorder } from '../../quota/quota-handlers.js';
import type { RequestBody } from '@mq/protocol/wire';
import { LATEST_TIMESTAMP } from '@mq/protocol/wire';
import { errorCodeFromNumber, isMqError, MqError, type ErrorCode } from '@mq/protocol/errors';
import type { BrokerConfig } from '../../config/broker-config.js';
import { TopicConfig } from '../../config/topic-config.js';
import type { BrokerContext, RequestContext } from '../../context.js';
import type { MetadataState } from '../../controller/metadata-state.js';
import type { PartitionRecord, TopicRecord } from '../../controller/types.js';
import { NO_RESPONSE, type Handler, type HandlerMap, type RequestOf, type ResponseOf } from '../../handlers/types.js';
import { isInternalTopic, validateTopicName } from '@mq/protocol/topic-name';
import type { PartitionView, TopicBackend, TopicView } from './types.js';
import { httpSessions } from '../../security/http-auth.js';

/** Sends a wire request to another broker (the cluster's PeerConnections). */
export interface PeerRequester {
  request<B extends RequestBody>(id: number, body: B, payload: RequestOf<B>, options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<unknown>;
}

export interface ClusterBackendOptions {
  brokerId: number;
  config: BrokerConfig;
  /** How long a record request waits for a partition's leader to appear, move or become reachable. Default: broker.session.timeout.ms + 5 s, at most 30 s. */
  leaderWaitMs?: number;
  /** acks=all produce timeout sent to the leader. Default 30000 (as the wire default). */
  produceTimeoutMs?: number;
  /** How long describe waits for remote leaders' watermarks before leaving them out. Default 2000. */
  describeTimeoutMs?: number;
}

/** Authenticates and authorizes one wire request as the HTTP caller (handlers/authorize.ts); throws its refusal. */
export type RequestAuthorizer = <K extends RequestBody>(body: K, payload: RequestOf<K>, ctx: RequestContext) => void;

export interface ClusterBackendComponents {
  /** Checked before every request, local or sent to a peer (the inter-broker listener does not check again). */
  authorize?: RequestAuthorizer;
  /** Quotas of every request, local or sent to a peer (the inter-broker listener records nothing). */
  quotas?: QuotaRecorder;
  /** Whether the caller may see a topic (GET /topics lists only those). */
  mayDescribe?: (topic: string, ctx: RequestContext) => boolean;
  metadata: MetadataState;
  /** This broker's cluster handlers (CreateTopics, Produce, Fetch, ...). */
  handlers: HandlerMap;
  peers: PeerRequester;
  /** The broker context handed to local handler calls. */
  broker: () => BrokerContext;
  /** Watermarks of partitions this broker leads, without a request. */
  localLeader: (topic: string, partition: number) => { logStartOffset: number; highWatermark: number } | undefined;
  /** Why this broker's replica of a partition is offline (its log failed to open), if it is. */
  localOffline?: (topic: string, partition: number) => MqError | undefined;
}

export const DEFAULT_LEADER_WAIT_MS = 5000;
export const DEFAULT_PRODUCE_TIMEOUT_MS = 30_000;
export const DEFAULT_DESCRIBE_TIMEOUT_MS = 2000;

/**
 * The leader may have moved: wait for the metadata and try again. Usually nothing was written, but a
 * leader that resigns while an acks=all produce waits for its followers answers NOT_LEADER after the
 * append, so a retried produce may be written twice (at-least-once, as when a client retries it).
 */
const MOVED: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['NOT_LEADER', 'LEADER_NOT_AVAILABLE', 'UNKNOWN_LEADER_EPOCH', 'FENCED_LEADER_EPOCH']);
/**
 * The leader could not be reached (it died, a failover is under way): tried again on the leader the
 * metadata names next. A produce whose connection broke after it was sent may then be written twice,
 * exactly as when a client retries it (at-least-once).
 */
const UNREACHABLE: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['CONNECTION_ERROR', 'CONNECTION_CLOSED', 'BROKER_NOT_AVAILABLE']);

function wireFailure(code: number | null | undefined, message: string | null | undefined, what: string): MqError | undefined {
  const c = errorCodeFromNumber(code ?? 0);
  if (c === 'NONE') return undefined;
  return new MqError(c, message || `${what} failed with ${c}`, c === 'UNKNOWN_TOPIC_OR_PARTITION' ? { retriable: false } : {});
}

export function clusterBackend(options: ClusterBackendOptions, c: ClusterBackendComponents): TopicBackend {
  let requestIds = 0;
  const me = options.brokerId;
  const md = c.metadata;
  const leaderWaitMs = options.leaderWaitMs ?? Math.min(30_000, options.config.int('broker.session.timeout.ms') + DEFAULT_LEADER_WAIT_MS);
  const produceTimeoutMs = options.produceTimeoutMs ?? DEFAULT_PRODUCE_TIMEOUT_MS;
  const describeTimeoutMs = options.describeTimeoutMs ?? DEFAULT_DESCRIBE_TIMEOUT_MS;

  function requestContext(signal: AbortSignal): RequestContext {
    const broker = c.broker();
    const id = --requestIds; // negative ids: HTTP requests, never a WebSocket connection's
    const logger = broker.logger.child({ http: true });
    // The HTTP caller's session (security/http-auth.ts), for the authorization of each call.
    const session = httpSessions.getStore();
    return { broker, connection: { id, remote: 'http', clientId: 'http-api', signal, ...(session ? { session } : {}) }, apiVersion: 0, logger };
  }

  /** One wire request to broker `id`: this broker's own handler, or a peer over the inter-broker connection. */
  async function call<K extends RequestBody>(id: number, body: K, payload: RequestOf<K>, o: { timeoutMs: number; signal: AbortSignal }): Promise<ResponseOf<K>> {
    const rctx = requestContext(o.signal);
    c.authorize?.(body, payload, rctx);
    // ---- quotas: recorded here, whichever broker answers (a peer's inter-broker listener records nothing).
    c.quotas?.before(body, payload, rctx);
    let r: ResponseOf<K>;
    if (id === me) {
      const h = c.handlers[body] as Handler<K> | undefined;
      // A controller-only process (process.roles=controller) hosts no partitions and serves no topic admin.
      if (!h) throw new MqError('INVALID_REQUEST', `this process does not serve ${body} (it is not a broker); use a broker's HTTP port`);
      const answer = await h(payload, rctx);
      if (answer === NO_RESPONSE) throw new MqError('UNKNOWN', `the ${body} handler did not answer`);
      r = answer;
    } else {
      r = (await c.peers.request(id, body, payload, o)) as ResponseOf<K>;
    }
    c.quotas?.after(body, r, rctx);
    // An HTTP caller over its quota gets its answer that much later (no connection to mute).
    if (rctx.throttleMs) await sleep(systemTimers, rctx.throttleMs, o.signal).catch(() => undefined);
    return r;
  }

  function topicRecord(name: string): TopicRecord {
    const t = md.topic(name);
    if (!t) {
      validateTopicName(name);
      throw new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${name}" does not exist (create it with: mq topic create ${name})`, { retriable: false });
    }
    return t;
  }

  function partitionRecord(topic: string, partition: number): PartitionRecord {
    const t = topicRecord(topic);
    const p = t.partitions[partition];
    if (!p) throw new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${topic}" has no partition ${partition} (it has ${t.partitions.length})`, { retriable: false });
    return p;
  }

  /** Resolves on the next metadata change, after `ms`, or when `signal` aborts. */
  function metadataChange(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        off();
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      const off = md.onChange(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /**
   * Runs `attempt` against the partition's current leader; when there is none
   * yet, the leader answers that it is not (any more) the leader, or it cannot
   * be reached, waits for the metadata to move and tries again, for up to
   * leaderWaitMs (with a dead leader: until the controller fences it and
   * elects another).
   */
  async function onLeader<T>(topic: string, partition: number, signal: AbortSignal, attempt: (leader: number) => Promise<T>): Promise<T> {
    const clock = c.broker().clock;
    const deadline = clock() + leaderWaitMs;
    for (;;) {
      signal.throwIfAborted();
      const p = partitionRecord(topic, partition);
      let err: MqError;
      if (p.leader < 0) {
        err = new MqError('LEADER_NOT_AVAILABLE', `${topic}-${partition} has no leader: no in-sync replica is alive`);
      } else {
        try {
          return await attempt(p.leader);
        } catch (e) {
          if (!isMqError(e) || !(MOVED.has(e.code) || UNREACHABLE.has(e.code))) throw e;
          err = e;
        }
      }
      const left = deadline - clock();
      if (left <= 0) throw err;
      // A leader named by the metadata may not have taken over yet: poll at least every 100 ms
      // (every 500 ms while it cannot be reached, not to spin on connection attempts).
      await metadataChange(Math.min(left, UNREACHABLE.has(err.code) ? 500 : 100), signal);
    }
  }

  async function remoteWatermarks(leader: number, parts: Array<{ topic: string; partition: number }>, signal: AbortSignal, timeoutMs: number) {
    const byTopic = new Map<string, number[]>();
    for (const p of parts) {
      let l = byTopic.get(p.topic);
      if (!l) byTopic.set(p.topic, (l = []));
      l.push(p.partition);
    }
    const res = await call(
      leader,
      'listOffsets',
      { replicaId: -1, topics: [...byTopic].map(([name, ps]) => ({ name, partitions: ps.map((partition) => ({ partition, timestamp: LATEST_TIMESTAMP, currentLeaderEpoch: -1 })) })) },
      { timeoutMs, signal },
    );
    const out = new Map<string, { low: number; high: number } | MqError>();
    for (const t of res.topics ?? []) {
      for (const p of t.partitions ?? []) {
        const err = wireFailure(p.errorCode, p.errorMessage, 'ListOffsets');
        out.set(`${t.name ?? ''}\u0000${p.partition ?? 0}`, err ?? { low: Number(p.logStartOffset ?? -1), high: Number(p.highWatermark ?? -1) });
      }
    }
    return out;
  }

  /** Describe on a topic (ListOffsets' rule), for the reads that need no wire request here. */
  function describeCheck(topic: string): void {
    c.authorize?.('listOffsets', { topics: [{ name: topic }] }, requestContext(adminSignal()));
  }

  async function watermarks(topic: string, partition: number, signal: AbortSignal): Promise<{ low: number; high: number }> {
    describeCheck(topic);
    return onLeader(topic, partition, signal, async (leader) => {
      if (leader === me) {
        const l = c.localLeader(topic, partition);
        if (!l) throw new MqError('NOT_LEADER', `broker ${me} does not lead ${topic}-${partition} yet`);
        return { low: l.logStartOffset, high: l.highWatermark };
      }
      const r = (await remoteWatermarks(leader, [{ topic, partition }], signal, 10_000)).get(`${topic}\u0000${partition}`);
      if (!r) throw new MqError('UNKNOWN', `broker ${leader} did not answer for ${topic}-${partition}`);
      if (r instanceof MqError) throw r;
      return r;
    });
  }

  async function view(t: TopicRecord, signal: AbortSignal): Promise<TopicView> {
    const partitions: PartitionView[] = t.partitions.map((p, i) => ({
      partition: i,
      leader: p.leader,
      leaderEpoch: p.leaderEpoch,
      replicas: [...p.replicas],
      isr: [...p.isr],
      ...(p.leader < 0 ? { offline: true, error: `${t.name}-${i} has no leader: no in-sync replica is alive` } : {}),
      ...(p.leader === me && c.localOffline?.(t.name, i) ? { offline: true, error: c.localOffline(t.name, i)!.message } : {}),
    }));
    // Watermarks: this broker's own leaderships at once, the others from their leaders (best effort, bounded).
    const remote = new Map<number, Array<{ topic: string; partition: number }>>();
    for (const p of partitions) {
      if (p.leader < 0) continue;
      const local = p.leader === me ? c.localLeader(t.name, p.partition) : undefined;
      if (local) {
        p.low = local.logStartOffset;
        p.high = local.highWatermark;
      } else if (p.leader !== me) {
        let l = remote.get(p.leader);
        if (!l) remote.set(p.leader, (l = []));
        l.push({ topic: t.name, partition: p.partition });
      }
    }
    await Promise.all(
      [...remote].map(async ([leader, parts]) => {
        const marks = await remoteWatermarks(leader, parts, signal, describeTimeoutMs).catch(() => undefined);
        for (const { partition } of parts) {
          const m = marks?.get(`${t.name}\u0000${partition}`);
          if (m && !(m instanceof MqError)) Object.assign(partitions[partition]!, { low: m.low, high: m.high });
        }
      }),
    );
    return {
      name: t.name,
      topicId: t.topicId,
      internal: isInternalTopic(t.name),
      partitionCount: t.partitions.length,
      replicationFactor: t.partitions[0]?.replicas.length ?? 0,
      configs: Object.fromEntries(new TopicConfig(t.configs, options.config).entries().map((e) => [e.name, e.value])),
      partitions,
    };
  }

  const adminSignal = () => AbortSignal.timeout(60_000);

  return {
    mode: 'cluster',
    brokerId: me,
    request: (id, body, payload) => call(id, body, payload, { timeoutMs: 60_000, signal: adminSignal() }),

    async createTopic(input) {
      const res = await call(
        me,
        'createTopics',
        {
          topics: [{ name: input.name, numPartitions: input.numPartitions ?? 0, replicationFactor: input.replicationFactor ?? 0, configs: input.configs as Record<string, string> }],
          validateOnly: false,
        },
        { timeoutMs: 30_000, signal: adminSignal() },
      );
      const r = res.results?.[0];
      const err = wireFailure(r?.errorCode, r?.errorMessage, 'CreateTopics');
      if (err) throw err;
      return { topic: await view(topicRecord(input.name), adminSignal()), ...(r?.warning ? { warning: r.warning } : {}) };
    },

    async listTopics() {
      return md.topics().filter((t) => c.mayDescribe?.(t.name, requestContext(adminSignal())) ?? true).map((t) => ({ name: t.name, internal: isInternalTopic(t.name), partitionCount: t.partitions.length, replicationFactor: t.partitions[0]?.replicas.length ?? 0 }));
    },

    async describeTopic(name) {
      describeCheck(name);
      return view(topicRecord(name), adminSignal());
    },

    async deleteTopic(name) {
      validateTopicName(name);
      const res = await call(me, 'deleteTopics', { topics: [name] }, { timeoutMs: 30_000, signal: adminSignal() });
      const r = res.results?.[0];
      const err = wireFailure(r?.errorCode, r?.errorMessage, 'DeleteTopics');
      if (err) throw err;
      return { name, partitionCount: r?.numPartitions ?? 0 };
    },

    async produceTarget(name) {
      c.authorize?.('produce', { topics: [{ name }] }, requestContext(adminSignal()));
      const t = topicRecord(name);
      return { partitionCount: t.partitions.length, maxMessageBytes: new TopicConfig(t.configs, options.config).maxMessageBytes };
    },

    append(topic, partition, batch, acks, { signal }) {
      return onLeader(topic, partition, signal, async (leader) => {
        const res = await call(
          leader,
          'produce',
          { acks, timeoutMs: produceTimeoutMs, topics: [{ name: topic, partitions: [{ partition, records: batch }] }] },
          { timeoutMs: produceTimeoutMs + 5000, signal },
        );
        const p = res.topics?.[0]?.partitions?.[0];
        if (!p) throw new MqError('UNKNOWN', `broker ${leader} answered the produce to ${topic}-${partition} without that partition`);
        const err = wireFailure(p.errorCode, p.errorMessage, 'Produce');
        if (err) throw err;
        return { baseOffset: Number(p.baseOffset ?? -1) };
      });
    },

    async read(topic, partition, offset, maxBytes, signal, maxWaitMs = 0) {
      const from = offset ?? (await watermarks(topic, partition, signal)).low;
      return onLeader(topic, partition, signal, async (leader) => {
        const res = await call(
          leader,
          'fetch',
          {
            replicaId: -1,
            maxWaitMs,
            minBytes: maxWaitMs > 0 ? 1 : 0,
            maxBytes,
            topics: [{ name: topic, partitions: [{ partition, fetchOffset: from, partitionMaxBytes: maxBytes, currentLeaderEpoch: -1, logStartOffset: -1, lastFetchedEpoch: -1 }] }],
          },
          { timeoutMs: maxWaitMs + 30_000, signal },
        );
        const p = res.topics?.[0]?.partitions?.[0];
        if (!p) throw new MqError('UNKNOWN', `broker ${leader} answered the fetch of ${topic}-${partition} without that partition`);
        const err = wireFailure(p.errorCode, p.errorMessage, 'Fetch');
        if (err) throw err;
        const r = p.records;
        // This broker's own fetch handler answers in pooled read buffers: copy the records out and give the buffer back.
        const records = !r ? Buffer.alloc(0) : leader === me ? Buffer.from(r) : Buffer.isBuffer(r) ? r : Buffer.from(r.buffer, r.byteOffset, r.byteLength);
        if (r && leader === me) c.broker().readBuffers.release(r);
        return { records, offset: from, low: Number(p.logStartOffset ?? -1), high: Number(p.highWatermark ?? -1) };
      });
    },

    watermarks,
  };
}
