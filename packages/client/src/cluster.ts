/**
 * What the client knows about the cluster: a metadata cache (brokers, topics,
 * partitions with leader, epoch, replicas and ISR), a pool of connections, one
 * per broker, reopened on demand after a close, and routing of requests to a
 * partition's leader or to any broker.
 */
import { MqError, errorCodeFromNumber, isMqError, type ErrorCode } from '@mq/protocol/errors';
import type { RequestBody } from '@mq/protocol/wire';
import { silentLogger, type Logger } from '@mq/protocol/components';
import { Connection, type ConnectFn, type RequestOptions, type RequestPayload, type ResponseOf } from './connection.js';
import type { ParsedClientOptions } from './options.js';
import { coarseNow } from './coarse-clock.js';
import { abortError, Retrier } from './retrier.js';
import { channels, type RetryMessage } from './diagnostics.js';

export interface BrokerDescription {
  id: number;
  host: string;
  port: number;
  httpPort: number;
  rack: string;
  fenced: boolean;
}

export interface PartitionDescription {
  partition: number;
  /** Broker id of the leader; -1 when there is none. */
  leader: number;
  leaderEpoch: number;
  /** Bumped by every change of the partition's state (ISR, replicas) within a leader epoch too; -1 when unknown. */
  partitionEpoch: number;
  replicas: number[];
  isr: number[];
  offlineReplicas: number[];
  /** NONE, or why the partition is unavailable (e.g. LEADER_NOT_AVAILABLE). */
  error: ErrorCode;
}

export interface TopicDescription {
  name: string;
  topicId: string;
  internal: boolean;
  partitions: PartitionDescription[];
}

/** Errors after which the metadata cache is stale and must be refreshed before a retry. */
const STALE_METADATA: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'NOT_LEADER',
  'LEADER_NOT_AVAILABLE',
  'UNKNOWN_TOPIC_OR_PARTITION',
  'FENCED_LEADER_EPOCH',
  'UNKNOWN_LEADER_EPOCH',
  'NOT_CONTROLLER',
  'BROKER_NOT_AVAILABLE',
  'REPLICA_NOT_AVAILABLE',
  'CONNECTION_ERROR',
  'CONNECTION_CLOSED',
]);

export function invalidatesMetadata(err: unknown): boolean {
  return isMqError(err) && STALE_METADATA.has(err.code);
}

/**
 * How long a producer or consumer in a cluster keeps asking for a topic that
 * a broker says does not exist before failing: long enough for a new topic to
 * reach every broker's metadata (the controller commits it first), far below
 * Kafka's max.block.ms wait, so a mistyped topic still fails within seconds.
 * A single broker's answer is final at once.
 */
export const UNKNOWN_TOPIC_GRACE_MS = 2000;

export function unknownTopicError(topic: string, retriable = false): MqError {
  return new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${topic}" does not exist (create it with: mq topic create ${topic})`, {
    topic,
    retriable,
  });
}

/** Failures after which a broker is asked last for a while (it is unreachable, slow, or knows it is cut off). */
const AVOID_AFTER: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['BROKER_NOT_AVAILABLE', 'REQUEST_TIMED_OUT', 'CONNECTION_ERROR', 'CONNECTION_CLOSED']);
const AVOID_BROKER_MS = 5_000;

/**
 * Metadata requests in flight at once, at most. A refresh joins one in flight unless that one went to a broker now
 * avoided (it may wait on a paused broker until the pause ends); then it asks another broker anew, up to this bound,
 * past which it waits for the first of them to end. Answers may then arrive out of order: applyMetadata keeps each
 * partition at the newest leader epoch it has seen.
 */
export const MAX_METADATA_REFRESHES = 3;

/** One metadata refresh in flight, and the connection its request went to (undefined until it has one). */
interface Refresh {
  done: Promise<void>;
  conn: Connection | undefined;
}

/** The parts a client is built from; each defaults to the real one. */
export interface ClientComponents {
  /** Opens a connection's socket (default: a WebSocket to the broker); tests pass an in-memory one. */
  connect?: ConnectFn;
}

export type Target = { kind: 'any' } | { kind: 'controller' } | { kind: 'broker'; id: number };

export class Cluster {
  readonly retrier: Retrier;
  /** When metadata first came without a topic still asked for (see unknownTopicIsFinal). */
  private readonly unknownSince = new Map<string, number>();
  readonly brokers = new Map<number, BrokerDescription>();
  private readonly topics = new Map<string, TopicDescription>();
  /** Topics the broker refused to describe to this principal (TOPIC_AUTHORIZATION_FAILED), with its error. */
  private readonly refusedTopics = new Map<string, MqError>();
  private readonly topicFetchedAt = new Map<string, number>();
  controllerId = -1;
  clusterId = '';
  /** Smallest frame limit any broker announced in its handshake (Infinity until one did). */
  maxFrameBytes = Infinity;
  private readonly byAddress = new Map<string, Promise<Connection>>();
  private readonly byBrokerId = new Map<number, Connection>();
  private readonly refreshes = new Set<Refresh>();
  private bootstrapIndex = 0;
  /** Brokers that just failed a request (unreachable, timed out, cut off): `anyConnection` asks others first until the time given. */
  private readonly avoidUntil = new Map<string | number, number>();
  private closed = false;

  private readonly connect: ConnectFn | undefined;
  /** The client's logger (ClientOptions.logger): every part of the client logs here. */
  readonly logger: Logger;

  constructor(
    readonly options: ParsedClientOptions,
    components: ClientComponents = {},
  ) {
    this.retrier = new Retrier(options.retry);
    this.connect = components.connect;
    this.logger = options.logger ?? silentLogger;
  }

  // ----------------------------------------------------------- connections

  /**
   * The pooled connection to `address`, opened (and handshaken) if needed. The opening is shared by every caller,
   * so it is bound to no caller's signal (only to connectTimeoutMs): `signal` ends this caller's wait, never the
   * opening others wait for (a leader check's short timeout once failed every send queued behind it with ABORTED).
   */
  connection(address: string, signal?: AbortSignal): Promise<Connection> {
    if (this.closed) return Promise.reject(new MqError('CLOSED', 'the client is closed'));
    return untilAborted(this.pooledConnection(address), signal);
  }

  private pooledConnection(address: string): Promise<Connection> {
    let p = this.byAddress.get(address);
    if (p) return p;
    p = Connection.open(
      {
        address,
        clientId: this.options.clientId,
        connectTimeoutMs: this.options.connectTimeoutMs,
        requestTimeoutMs: this.options.requestTimeoutMs,
        maxResponseBytes: this.options.maxResponseBytes,
        maskFrames: this.options.maskFrames,
        sasl: this.options.sasl,
        tls: this.options.tls,
      },
      undefined,
      this.connect,
    ).then(
      (conn) => {
        if (this.closed) {
          conn.close();
          throw new MqError('CLOSED', 'the client is closed');
        }
        const existing = this.byBrokerId.get(conn.brokerId);
        if (conn.brokerId >= 0 && (!existing || existing.closed)) this.byBrokerId.set(conn.brokerId, conn);
        if (conn.clusterId) this.clusterId = conn.clusterId;
        if (conn.maxFrameBytes > 0) this.maxFrameBytes = Math.min(this.maxFrameBytes, conn.maxFrameBytes);
        conn.onClose((err) => {
          if (!this.closed) this.logger.info({ broker: address, brokerId: conn.brokerId, reason: err.message }, 'connection to broker closed; the next request reconnects');
          if (this.byAddress.get(address) === p) this.byAddress.delete(address);
          if (this.byBrokerId.get(conn.brokerId) === conn) this.byBrokerId.delete(conn.brokerId);
        });
        return conn;
      },
      (err: unknown) => {
        if (this.byAddress.get(address) === p) this.byAddress.delete(address);
        throw err;
      },
    );
    this.byAddress.set(address, p);
    return p;
  }

  /** A connection to the given broker id (from metadata). */
  /** The open connection to a broker, if there is one now (no connecting, no metadata). */
  openConnection(id: number): Connection | undefined {
    const open = this.byBrokerId.get(id);
    return open && !open.closed ? open : undefined;
  }

  async brokerConnection(id: number, signal?: AbortSignal): Promise<Connection> {
    const open = this.byBrokerId.get(id);
    if (open && !open.closed) return open;
    let b = this.brokers.get(id);
    if (!b) {
      await this.refreshMetadata([], signal);
      b = this.brokers.get(id);
    }
    if (!b) throw new MqError('BROKER_NOT_AVAILABLE', `broker ${id} is not in the cluster metadata`, { broker: id });
    return this.connection(`${b.host}:${b.port}`, signal);
  }

  /**
   * Any live connection, else the bootstrap servers and known brokers in
   * turn. Brokers that just failed a request (see `avoid`) come last.
   */
  async anyConnection(signal?: AbortSignal): Promise<Connection> {
    const now = Date.now();
    const avoided = (address: string, id?: number) => this.avoided(address, id, now);
    for (const c of this.byBrokerId.values()) if (!c.closed && !avoided(c.address, c.brokerId)) return c;
    const preferred: string[] = [];
    const lastResort: string[] = [];
    const add = (address: string, id?: number) => {
      if (preferred.includes(address) || lastResort.includes(address)) return;
      (avoided(address, id) ? lastResort : preferred).push(address);
    };
    for (const a of this.options.bootstrap) add(a);
    for (const b of this.brokers.values()) add(`${b.host}:${b.port}`, b.id);
    return this.firstReachable(preferred, lastResort, signal);
  }

  /** Asks `conn`'s broker last for any-broker requests (metadata) for a while: it is unreachable, slow, or cut off. */
  avoid(conn: Connection, forMs = AVOID_BROKER_MS): void {
    const until = Date.now() + forMs;
    this.avoidUntil.set(conn.address, until);
    if (conn.brokerId >= 0) this.avoidUntil.set(conn.brokerId, until);
  }

  /** Whether a broker (by address or id) is asked last for now (see `avoid`). */
  private avoided(address: string, id = -2, now = Date.now()): boolean {
    return (this.avoidUntil.get(address) ?? 0) > now || (this.avoidUntil.get(id) ?? 0) > now;
  }

  /** The first of `preferred` (starting at a rotating index) that connects, else of `lastResort` in order. */
  private async firstReachable(preferred: string[], lastResort: string[], signal?: AbortSignal): Promise<Connection> {
    let last: unknown;
    const candidates = [...preferred.slice(this.bootstrapIndex % Math.max(1, preferred.length)), ...preferred.slice(0, this.bootstrapIndex % Math.max(1, preferred.length)), ...lastResort];
    for (const address of candidates) {
      try {
        return await this.connection(address, signal);
      } catch (err) {
        last = err;
        if (!isMqError(err) || (err.code !== 'CONNECTION_ERROR' && err.code !== 'CONNECTION_CLOSED' && err.code !== 'REQUEST_TIMED_OUT')) {
          throw err;
        }
      }
    }
    this.bootstrapIndex++;
    if (candidates.length > 1) {
      throw new MqError(
        'CONNECTION_ERROR',
        `cannot reach any broker (${candidates.join(', ')}): ${(last as Error).message}`,
        { cause: last },
      );
    }
    throw last;
  }

  async connectionFor(target: Target, signal?: AbortSignal): Promise<Connection> {
    if (target.kind === 'broker') return this.brokerConnection(target.id, signal);
    if (target.kind === 'controller') {
      if (this.controllerId < 0) await this.refreshMetadata([], signal);
      if (this.controllerId >= 0) return this.brokerConnection(this.controllerId, signal);
    }
    return this.anyConnection(signal);
  }

  /**
   * Sends one request with the client's retry policy: retriable failures
   * back off (exponentially, with jitter) and refresh the metadata first when
   * it may be stale. `target` may be a function so that it is re-evaluated
   * after each refresh (e.g. the leader of a partition).
   */
  send<B extends RequestBody>(
    target: Target | (() => Target | Promise<Target>),
    body: B,
    payload: RequestPayload<B> | (() => RequestPayload<B>),
    options: RequestOptions = {},
  ): Promise<ResponseOf<B>> {
    return this.sendVia(target, body, payload, options);
  }

  /** `send`, telling `onConnection` which connection each attempt goes to. */
  private async sendVia<B extends RequestBody>(
    target: Target | (() => Target | Promise<Target>),
    body: B,
    payload: RequestPayload<B> | (() => RequestPayload<B>),
    options: RequestOptions,
    onConnection?: (conn: Connection) => void,
  ): Promise<ResponseOf<B>> {
    return this.retrier.run(
      async () => {
        const t = typeof target === 'function' ? await target() : target;
        const conn = await this.connectionFor(t, options.signal);
        onConnection?.(conn);
        try {
          return await conn.request(body, typeof payload === 'function' ? payload() : payload, options);
        } catch (err) {
          // Ask someone else next time: an unreachable or cut-off broker keeps answering from a stale view.
          if (isMqError(err) && AVOID_AFTER.has(err.code)) this.avoid(conn);
          throw err;
        }
      },
      {
        signal: options.signal,
        onRetry: async (err, attempt, delayMs) => {
          this.logger.debug({ api: body, attempt: attempt + 1, delayMs, err }, 'request failed; retrying');
          if (channels.retry.hasSubscribers) {
            channels.retry.publish({ kind: 'request', api: body, attempt: attempt + 1, delayMs, error: err } satisfies RetryMessage);
          }
          // (A metadata request refreshing metadata before its own retry would wait for itself.)
          if (body !== 'metadata' && invalidatesMetadata(err)) {
            await this.refreshMetadata([], options.signal).catch((e: unknown) => this.logger.debug({ err: e }, 'metadata refresh before a retry failed'));
          }
        },
      },
    );
  }

  // -------------------------------------------------------------- metadata

  /** The cached description of a topic, if fresh enough; never does I/O. */
  cachedTopic(topic: string): TopicDescription | undefined {
    const t = this.topics.get(topic);
    if (!t) return undefined;
    const at = this.topicFetchedAt.get(topic) ?? 0;
    if (coarseNow() - at > this.options.metadataMaxAgeMs) return undefined;
    return t;
  }

  /** The description of a topic, fetched when not cached. UNKNOWN_TOPIC_OR_PARTITION when it does not exist. */
  async topic(topic: string, signal?: AbortSignal): Promise<TopicDescription> {
    const cached = this.cachedTopic(topic);
    if (cached) return cached;
    await this.refreshMetadata([topic], signal);
    const t = this.topics.get(topic);
    if (!t) throw this.missingTopicError(topic);
    return t;
  }

  /** Why a topic is not in the metadata: the broker's authorization refusal, else UNKNOWN_TOPIC_OR_PARTITION. */
  missingTopicError(topic: string, retriable = false): MqError {
    return this.refusedTopics.get(topic) ?? unknownTopicError(topic, retriable);
  }

  /**
   * Whether a topic the latest metadata answer did not have counts as missing
   * now (producers then fail its records, consumers report it): at once when
   * the client knows a single broker, whose answer is final; in a cluster
   * only once answers without it have come for UNKNOWN_TOPIC_GRACE_MS (a
   * new topic reaches each broker a moment after the controller commits it).
   */
  unknownTopicIsFinal(topic: string): boolean {
    if (this.brokers.size <= 1 || this.refusedTopics.has(topic)) return true;
    const now = Date.now();
    const since = this.unknownSince.get(topic);
    if (since === undefined) {
      this.unknownSince.set(topic, now);
      return false;
    }
    if (now - since < UNKNOWN_TOPIC_GRACE_MS) return false;
    this.unknownSince.delete(topic);
    return true;
  }

  /** Marks a topic's metadata as stale so that the next use refreshes it. */
  invalidate(topic?: string): void {
    if (topic === undefined) this.topicFetchedAt.clear();
    else this.topicFetchedAt.delete(topic);
  }

  /** Leader broker id of a partition from the cache (-1 when unknown). */
  leaderOf(topic: string, partition: number): number {
    return this.topics.get(topic)?.partitions[partition]?.leader ?? -1;
  }

  /** Leader epoch of a partition from the cache (-1 when unknown). */
  leaderEpochOf(topic: string, partition: number): number {
    return this.topics.get(topic)?.partitions[partition]?.leaderEpoch ?? -1;
  }

  /**
   * Fetches metadata for `topics` plus every topic already cached (empty and
   * nothing cached: all topics). Concurrent calls share one request when it
   * covers what they need, unless it went to a broker now avoided (one that
   * just failed or left a request unanswered: it may be paused, and the
   * request with it): then this call asks another broker, with at most
   * MAX_METADATA_REFRESHES requests in flight.
   */
  async refreshMetadata(topics: readonly string[], signal?: AbortSignal): Promise<void> {
    const covered = () => topics.every((t) => this.topics.has(t) && this.cachedTopic(t));
    let joined = false;
    for (;;) {
      const live = [...this.refreshes];
      // The newest in flight to a broker not avoided, once: if it did not bring what this call needs, ask anew.
      const join = joined ? undefined : live.filter((r) => !r.conn || !this.avoided(r.conn.address, r.conn.brokerId)).at(-1);
      if (join) {
        await untilAborted(join.done, signal).catch((err: unknown) => {
          if (signal?.aborted) throw err;
        });
        joined = true;
        if (covered()) return;
        continue;
      }
      if (live.length < MAX_METADATA_REFRESHES) break;
      // At the bound: wait for the first to end (some may wait on a paused broker).
      await untilAborted(Promise.race(live.map((r) => r.done)), signal).catch((err: unknown) => {
        if (signal?.aborted) throw err;
      });
      if (joined && covered()) return;
    }
    const wanted = new Set<string>([...this.topics.keys(), ...topics]);
    const refresh: Refresh = { done: Promise.resolve(), conn: undefined };
    const run = this.fetchMetadata([...wanted], signal, (conn) => (refresh.conn = conn));
    refresh.done = run.then(
      () => undefined,
      () => undefined,
    );
    this.refreshes.add(refresh);
    try {
      await run;
    } finally {
      this.refreshes.delete(refresh);
    }
  }

  /** Every topic in the cluster (one metadata request). */
  async listTopics(signal?: AbortSignal): Promise<TopicDescription[]> {
    const resp = await this.send({ kind: 'any' }, 'metadata', { topics: [] }, { signal });
    this.applyMetadata(resp, []);
    return [...(resp.topics ?? [])].filter((t) => !t.errorCode).map(toTopicDescription);
  }

  private async fetchMetadata(topics: string[], signal: AbortSignal | undefined, onConnection: (conn: Connection) => void): Promise<void> {
    const resp = await this.sendVia({ kind: 'any' }, 'metadata', { topics }, { signal }, onConnection);
    this.applyMetadata(resp, topics);
  }

  private applyMetadata(resp: ResponseOf<'metadata'>, asked: string[]): void {
    this.brokers.clear();
    for (const b of resp.brokers ?? []) {
      const id = b.id ?? 0;
      this.brokers.set(id, {
        id,
        host: b.host ?? '',
        port: b.port ?? 0,
        httpPort: b.httpPort ?? 0,
        rack: b.rack ?? '',
        fenced: b.fenced ?? false,
      });
    }
    this.controllerId = resp.controllerId ?? -1;
    if (resp.clusterId) this.clusterId = resp.clusterId;
    const now = Date.now();
    const seen = new Set<string>();
    for (const t of resp.topics ?? []) {
      const name = t.name ?? '';
      seen.add(name);
      const code = errorCodeFromNumber(t.errorCode ?? 0);
      if (code === 'TOPIC_AUTHORIZATION_FAILED') this.refusedTopics.set(name, new MqError(code, t.errorMessage || `not authorized to describe topic "${name}"`, { topic: name, retriable: false }));
      else this.refusedTopics.delete(name);
      if (code === 'UNKNOWN_TOPIC_OR_PARTITION' || code === 'INVALID_TOPIC' || code === 'TOPIC_AUTHORIZATION_FAILED') {
        this.topics.delete(name);
        this.topicFetchedAt.delete(name);
        continue;
      }
      if (code !== 'NONE') continue; // e.g. LEADER_NOT_AVAILABLE while being created: keep the old view
      const fresh = toTopicDescription(t);
      const cached = this.topics.get(name);
      this.topics.set(name, cached ? newestLeaders(cached, fresh, this.logger) : fresh);
      this.unknownSince.delete(name);
      this.topicFetchedAt.set(name, now);
    }
    for (const name of asked) {
      if (!seen.has(name)) {
        this.topics.delete(name);
        this.topicFetchedAt.delete(name);
      }
    }
  }

  close(): void {
    this.closed = true;
    for (const p of this.byAddress.values()) p.then((c) => c.close(), () => {});
    this.byAddress.clear();
    this.byBrokerId.clear();
  }
}

type WireTopic = NonNullable<ResponseOf<'metadata'>['topics']>[number];

function toTopicDescription(t: WireTopic): TopicDescription {
  const partitions = (t.partitions ?? [])
    .map(
      (p): PartitionDescription => ({
        partition: p.partition ?? 0,
        leader: p.leader ?? -1,
        leaderEpoch: p.leaderEpoch ?? -1,
        partitionEpoch: p.partitionEpoch ?? -1,
        replicas: [...(p.replicas ?? [])],
        isr: [...(p.isr ?? [])],
        offlineReplicas: [...(p.offlineReplicas ?? [])],
        error: errorCodeFromNumber(p.errorCode ?? 0),
      }),
    )
    .sort((a, b) => a.partition - b.partition);
  return { name: t.name ?? '', topicId: t.topicId ?? '', internal: t.internal ?? false, partitions };
}

/**
 * A topic's description from a metadata answer, merged with the cached one so
 * that no partition goes back to an older leader epoch (or, within one leader
 * epoch, an older partition epoch): answers from several brokers, or from one
 * that was paused, arrive in any order, and a stale one must not send batches
 * back to a leader that was replaced (Kafka's KIP-320 client rule). A topic
 * with another topic id was deleted and created again: its answer is taken
 * as it is. Partitions only the cached view has (the answer predates their
 * creation) are kept too.
 */
export function newestLeaders(cached: TopicDescription, fresh: TopicDescription, logger?: Logger): TopicDescription {
  if (cached.topicId && fresh.topicId && cached.topicId !== fresh.topicId) return fresh;
  let merged: PartitionDescription[] | undefined;
  const n = Math.max(cached.partitions.length, fresh.partitions.length);
  for (let i = 0; i < n; i++) {
    const old = cached.partitions[i];
    const now = fresh.partitions[i];
    if (!old || (now && !olderThan(now, old))) continue;
    merged ??= fresh.partitions.slice();
    merged[i] = old;
    if (now) logger?.debug({ topic: fresh.name, partition: i, cached: old.leaderEpoch, answered: now.leaderEpoch }, 'metadata answer older than the cache for a partition; kept the cached leader');
  }
  return merged ? { ...fresh, partitions: merged } : fresh;
}

/** Whether `p` describes an older state of its partition than `than` (an unknown epoch, -1, is never older). */
function olderThan(p: PartitionDescription, than: PartitionDescription): boolean {
  if (p.leaderEpoch < 0 || than.leaderEpoch < 0) return false;
  if (p.leaderEpoch !== than.leaderEpoch) return p.leaderEpoch < than.leaderEpoch;
  return p.partitionEpoch >= 0 && than.partitionEpoch >= 0 && p.partitionEpoch < than.partitionEpoch;
}

/** `p`, or this caller's abort error once `signal` aborts first (`p` itself goes on). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
