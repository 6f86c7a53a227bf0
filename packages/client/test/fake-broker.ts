/**
 * An in-memory broker speaking the real wire protocol over a real WebSocket,
 * for the client's tests: handshake, metadata, create/delete topics, produce
 * (validates batches and assigns offsets like the broker), fetch with long
 * polling, list offsets. Tests can hold or fail requests to exercise
 * backpressure, retries and leader changes.
 */
import { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { LOG_OVERHEAD, iterateBatches, setBaseOffset, validateBatch } from '@mq/protocol/batch';
import { ERROR_CODES, MqError, isMqError, type ErrorCode } from '@mq/protocol/errors';
import { SUPPORTED_API_VERSIONS, decodeRequest, encodeResponse, mq, type RequestBody } from '@mq/protocol/wire';

interface Partition {
  batches: Buffer[];
  next: number;
  start: number;
  /** Idempotent batches written, by "producerId:epoch:baseSequence": a retry answers their offsets and writes nothing. */
  written: Map<string, { base: number; last: number }>;
}

export interface FakeBroker {
  readonly address: string;
  readonly port: number;
  readonly topics: Map<string, Partition[]>;
  /** Requests seen, by API. */
  readonly seen: Record<string, number>;
  /** Batches per partition in each produce request, in arrival order. */
  readonly batchesPerPartitionRequest: number[];
  /**
   * Fail the next `times` requests of an API, per partition, with `code`. With
   * `afterAppend` a produce is written first and only its answer is the error
   * (as when an acks=all wait times out or the leader fails before answering).
   */
  failNext(api: 'produce' | 'fetch' | 'metadata' | 'listOffsets', code: ErrorCode, times?: number, options?: { afterAppend?: boolean }): void;
  /** Writes batches to a partition as another producer would (offsets assigned). */
  appendBatches(topic: string, partition: number, batches: Buffer): void;
  /** Hold produce requests until release() (to fill the client's buffer). */
  holdProduce(): void;
  release(): void;
  /** Closes every client connection (the client must reconnect). */
  dropConnections(): void;
  createTopic(name: string, partitions: number): void;
  records(topic: string, partition: number): Buffer[];
  close(): Promise<void>;
}

export async function startFakeBroker(
  options: {
    topics?: Record<string, number>;
    brokerId?: number;
    /** More broker ids to name in metadata (at this broker's address), so the client sees a cluster. */
    peerIds?: number[];
  } = {},
): Promise<FakeBroker> {
  const brokerId = options.brokerId ?? 1;
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const port = (wss.address() as AddressInfo).port;
  const topics = new Map<string, Partition[]>();
  const seen: Record<string, number> = {};
  const batchesPerPartitionRequest: number[] = [];
  const failures = new Map<string, { code: ErrorCode; times: number; afterAppend: boolean }>();
  let held: Array<() => void> | undefined;
  const sockets = new Set<WebSocket>();
  const longPolls = new Set<() => void>();

  const createTopic = (name: string, n: number) => {
    topics.set(name, Array.from({ length: n }, () => ({ batches: [], next: 0, start: 0, written: new Map() })));
  };
  for (const [name, n] of Object.entries(options.topics ?? {})) createTopic(name, n);

  const takeFailure = (api: string, afterAppend = false): ErrorCode | undefined => {
    const f = failures.get(api);
    if (!f || f.times <= 0 || f.afterAppend !== afterAppend) return undefined;
    f.times--;
    return f.code;
  };
  const num = (code: ErrorCode) => ERROR_CODES[code].code;

  const metadata = (req: mq.MetadataRequest): mq.MetadataResponse.$Properties => {
    const names = req.topics.length > 0 ? req.topics : [...topics.keys()];
    return {
      clusterId: 'fake',
      controllerId: brokerId,
      brokers: [brokerId, ...(options.peerIds ?? [])].map((id) => ({ id, host: '127.0.0.1', port })),
      topics: names.map((name) => {
        const t = topics.get(name);
        if (!t) return { name, errorCode: num('UNKNOWN_TOPIC_OR_PARTITION') };
        return {
          name,
          partitions: t.map((_, i) => ({ partition: i, leader: brokerId, leaderEpoch: 0, replicas: [brokerId], isr: [brokerId] })),
        };
      }),
    };
  };

  /**
   * Writes a partition's batches like the broker's log: an idempotent batch
   * already written is left out and keeps its offsets. Answers each batch's
   * base offset when they do not lie back to back (produce v1), and refuses a
   * v0 request that would need that list.
   */
  const appendTo = (log: Partition, buf: Buffer, version: number): { baseOffset: number; batchBaseOffsets?: number[] } => {
    const ranges: Array<{ base: number; last: number }> = [];
    let pos = 0;
    while (pos < buf.length) {
      const h = validateBatch(buf, pos);
      const size = h.batchLength + LOG_OVERHEAD;
      const key = `${h.producerId}:${h.producerEpoch}:${h.baseSequence}`;
      const repeated = h.producerId >= 0 ? log.written.get(key) : undefined;
      if (repeated) {
        ranges.push(repeated);
      } else {
        const copy = Buffer.from(buf.subarray(pos, pos + size));
        setBaseOffset(copy, 0, log.next);
        log.batches.push(copy);
        const range = { base: log.next, last: log.next + h.lastOffsetDelta };
        if (h.producerId >= 0) log.written.set(key, range);
        ranges.push(range);
        log.next += h.lastOffsetDelta + 1;
      }
      pos += size;
    }
    const backToBack = ranges.every((r, i) => i === 0 || r.base === ranges[i - 1]!.last + 1);
    if (backToBack) return { baseOffset: ranges[0]?.base ?? log.next };
    if (version < 1) throw new MqError('UNSUPPORTED_VERSION', 'produce v0 cannot answer batches that are not back to back');
    return { baseOffset: ranges[0]!.base, batchBaseOffsets: ranges.map((r) => r.base) };
  };

  const produce = (req: mq.ProduceRequest, version: number): mq.ProduceResponse.$Properties => {
    const failure = takeFailure('produce');
    const failureAfterAppend = failure ? undefined : takeFailure('produce', true);
    return {
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: (t.partitions ?? []).map((p) => {
          const partition = p.partition ?? 0;
          if (failure) return { partition, errorCode: num(failure), errorMessage: `fake ${failure}` };
          const log = topics.get(t.name ?? '')?.[partition];
          if (!log) return { partition, errorCode: num('UNKNOWN_TOPIC_OR_PARTITION') };
          const buf = Buffer.from(p.records ?? new Uint8Array());
          batchesPerPartitionRequest.push([...iterateBatches(buf)].length);
          try {
            const answer = appendTo(log, buf, version);
            for (const w of [...longPolls]) w();
            if (failureAfterAppend) return { partition, errorCode: num(failureAfterAppend), errorMessage: `fake ${failureAfterAppend} after the append` };
            return { partition, ...answer };
          } catch (err) {
            const code = isMqError(err) ? err.code : 'CORRUPT_MESSAGE';
            return { partition, errorCode: num(code), errorMessage: (err as Error).message };
          }
        }),
      })),
    };
  };

  const fetchNow = (req: mq.FetchRequest): { body: mq.FetchResponse.$Properties; bytes: number; errors: boolean } => {
    let bytes = 0;
    let errors = false;
    const failure = takeFailure('fetch');
    const body = {
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: (t.partitions ?? []).map((p) => {
          const partition = p.partition ?? 0;
          if (failure) return { partition, errorCode: num(failure) };
          const log = topics.get(t.name ?? '')?.[partition];
          if (!log) return { partition, errorCode: num('UNKNOWN_TOPIC_OR_PARTITION') };
          const offset = Number(p.fetchOffset ?? 0);
          if (offset < log.start || offset > log.next) {
            return { partition, errorCode: num('OFFSET_OUT_OF_RANGE'), highWatermark: log.next, logStartOffset: log.start };
          }
          const out: Buffer[] = [];
          let size = 0;
          for (const b of log.batches) {
            const h = [...iterateBatches(b)][0]!.header;
            if (h.baseOffset + h.lastOffsetDelta < offset) continue;
            if (size > 0 && size + b.length > (p.partitionMaxBytes ?? 1 << 20)) break;
            out.push(b);
            size += b.length;
          }
          bytes += size;
          return { partition, records: Buffer.concat(out), highWatermark: log.next, logStartOffset: log.start };
        }),
      })),
    };
    errors = body.topics.some((t) => t.partitions.some((p) => 'errorCode' in p && p.errorCode));
    return { body, bytes, errors };
  };

  const listOffsets = (req: mq.ListOffsetsRequest): mq.ListOffsetsResponse.$Properties => {
    const failure = takeFailure('listOffsets');
    return {
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: (t.partitions ?? []).map((p) => {
          const partition = p.partition ?? 0;
          if (failure) return { partition, errorCode: num(failure) };
          const log = topics.get(t.name ?? '')?.[partition];
          if (!log) return { partition, errorCode: num('UNKNOWN_TOPIC_OR_PARTITION') };
          const ts = Number(p.timestamp ?? -1);
          const offset = ts === -2 ? log.start : log.next;
          return { partition, offset, timestamp: -1, logStartOffset: log.start, highWatermark: log.next };
        }),
      })),
    };
  };

  wss.on('connection', (ws) => {
    sockets.add(ws);
    ws.on('close', () => sockets.delete(ws));
    ws.on('message', (data: Buffer) => {
      const frame = decodeRequest(data);
      const body = frame.body as RequestBody;
      seen[body] = (seen[body] ?? 0) + 1;
      const reply = (payload: object) => {
        if (ws.readyState === ws.OPEN) ws.send(encodeResponse({ correlationId: frame.correlationId, [body]: payload }));
      };
      switch (body) {
        case 'handshake':
          return reply({ brokerId, clusterId: 'fake', apiVersions: SUPPORTED_API_VERSIONS, maxFrameBytes: 8 << 20 });
        case 'metadata': {
          const f = takeFailure('metadata');
          if (f) return ws.send(encodeResponse({ correlationId: frame.correlationId, errorCode: num(f), errorMessage: 'fake' }));
          return reply(metadata(frame.metadata!));
        }
        case 'initProducerId':
          return reply({ producerId: 42, producerEpoch: 0 });
        case 'createTopics':
          return reply({
            results: frame.createTopics!.topics.map((t) => {
              if (topics.has(t.name ?? '')) return { name: t.name, errorCode: num('TOPIC_ALREADY_EXISTS') };
              createTopic(t.name ?? '', t.numPartitions ?? 1);
              return { name: t.name, numPartitions: t.numPartitions, replicationFactor: t.replicationFactor };
            }),
          });
        case 'deleteTopics':
          return reply({
            results: frame.deleteTopics!.topics.map((name) => {
              if (!topics.delete(name)) return { name, errorCode: num('UNKNOWN_TOPIC_OR_PARTITION') };
              return { name };
            }),
          });
        case 'produce': {
          const run = () => {
            const resp = produce(frame.produce!, frame.apiVersion ?? 0);
            if (frame.produce!.acks !== 0) reply(resp);
          };
          if (held) held.push(run);
          else run();
          return;
        }
        case 'fetch': {
          const req = frame.fetch!;
          const first = fetchNow(req);
          if (first.bytes > 0 || first.errors || req.maxWaitMs === 0) return reply(first.body);
          let done = false;
          const finish = () => {
            if (done) return;
            done = true;
            longPolls.delete(finish);
            clearTimeout(timer);
            reply(fetchNow(req).body);
          };
          const timer = setTimeout(finish, req.maxWaitMs);
          longPolls.add(finish);
          return;
        }
        case 'listOffsets':
          return reply(listOffsets(frame.listOffsets!));
        default:
          return ws.send(
            encodeResponse({ correlationId: frame.correlationId, errorCode: num('INVALID_REQUEST'), errorMessage: `fake broker: no ${body}` }),
          );
      }
    });
  });

  return {
    address: `127.0.0.1:${port}`,
    port,
    topics,
    seen,
    batchesPerPartitionRequest,
    failNext(api, code, times = 1, options = {}) {
      failures.set(api, { code, times, afterAppend: options.afterAppend ?? false });
    },
    appendBatches(topic, partition, batches) {
      const log = topics.get(topic)?.[partition];
      if (!log) throw new Error(`fake broker: no ${topic}/${partition}`);
      appendTo(log, batches, 1);
    },
    holdProduce() {
      held ??= [];
    },
    release() {
      const h = held ?? [];
      held = undefined;
      for (const run of h) run();
    },
    dropConnections() {
      for (const s of sockets) s.terminate();
    },
    createTopic,
    records(topic, partition) {
      return topics.get(topic)?.[partition]?.batches ?? [];
    },
    async close() {
      for (const w of [...longPolls]) w();
      for (const s of sockets) s.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
