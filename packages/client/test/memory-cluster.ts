/**
 * A scripted cluster of in-memory brokers for the client's tests, over the
 * client's `connect` seam: each broker answers metadata from the view it was
 * last given, writes produce batches with an idempotent producer's sequence
 * check (as a partition leader does), and can be paused: it then holds every
 * request until `resume()`, and answers them from the view it had, as a
 * SIGSTOPped broker does once it runs again.
 */
import { EventEmitter } from 'node:events';
import { ERROR_CODES } from '@mq/protocol/errors';
import { SUPPORTED_API_VERSIONS, decodeRequest, encodeResponse, type mq } from '@mq/protocol/wire';
import type { ClientSocket, ConnectFn } from '../src/index.js';

type Reply = Omit<mq.ResponseFrame.$Properties, 'correlationId'>;

/** Who leads each partition of the topic, at which leader epoch. */
export interface View {
  topic: string;
  topicId?: string;
  partitions: Array<{ leader: number; leaderEpoch: number }>;
}

export interface MemoryBroker {
  readonly id: number;
  readonly address: string;
  /** The view its metadata answers give (what it knows of the cluster). */
  view: View;
  /** Requests received, by API. */
  readonly received: Record<string, number>;
  /** Takes over `from`'s logs as they are now (what it has replicated of them): their offsets and sequences. */
  replicate(from: MemoryBroker): void;
  /** Holds every request until resume(); answers them then from the view it has at that time. */
  pause(): void;
  resume(): void;
}

class MemorySocket extends EventEmitter implements ClientSocket {
  readyState = 1;
  readonly bufferedAmount = 0;

  constructor(private readonly answer: (frame: mq.RequestFrame) => Promise<Reply>) {
    super();
  }

  send(data: Uint8Array, _options: { binary: boolean }, cb: (err?: Error) => void): void {
    if (this.readyState !== 1) return cb(new Error('socket closed'));
    const frame = decodeRequest(data);
    cb();
    void this.answer(frame).then((reply) => {
      if (this.readyState === 1) this.emit('message', Buffer.from(encodeResponse({ correlationId: frame.correlationId, ...reply })), true);
    });
  }

  close(code = 1000): void {
    if (this.readyState >= 2) return;
    this.readyState = 3;
    queueMicrotask(() => this.emit('close', code, Buffer.alloc(0)));
  }

  terminate(): void {
    this.close(1006);
  }
}

/** Brokers 1..n at addresses `b<id>:1`, every one with `view`; `connect` is the client component dialling them. */
export function memoryCluster(n: number, view: View): { brokers: MemoryBroker[]; connect: ConnectFn } {
  const brokers: MemoryBroker[] = [];
  /** Each broker's way in for a request (held while it is paused). */
  const takers = new Map<string, (frame: mq.RequestFrame) => Promise<Reply>>();
  /** Per broker and partition (brokers do not replicate: each keeps its own log): the next offset and sequence. */
  const nextOffset = new Map<string, number>();
  const nextSeq = new Map<string, number>();
  for (let id = 1; id <= n; id++) {
    let held: Array<() => void> | undefined;
    const received: Record<string, number> = {};
    const b: MemoryBroker = {
      id,
      address: `b${id}:1`,
      view: structuredClone(view),
      received,
      replicate: (from) => {
        for (const state of [nextOffset, nextSeq]) {
          for (const [key, value] of [...state]) if (key.startsWith(`${from.id}/`)) state.set(`${id}/${key.slice(key.indexOf('/') + 1)}`, value);
        }
      },
      pause: () => (held ??= []),
      resume: () => {
        const waiting = held ?? [];
        held = undefined;
        for (const go of waiting) go();
      },
    };
    const answer = (frame: mq.RequestFrame): Reply => {
      switch (frame.body) {
        case 'handshake':
          return { handshake: { brokerId: id, clusterId: 'memory', apiVersions: [...SUPPORTED_API_VERSIONS], maxFrameBytes: 1 << 20 } };
        case 'metadata':
          return {
            metadata: {
              clusterId: 'memory',
              controllerId: 1,
              brokers: brokers.map((x) => ({ id: x.id, host: `b${x.id}`, port: 1 })),
              topics: [
                {
                  name: b.view.topic,
                  topicId: b.view.topicId ?? 'id-1',
                  partitions: b.view.partitions.map((p, partition) => ({ partition, leader: p.leader, leaderEpoch: p.leaderEpoch, replicas: [1, 2, 3], isr: [1, 2, 3] })),
                },
              ],
            },
          };
        case 'initProducerId':
          return { initProducerId: { producerId: 1000, producerEpoch: 0 } };
        case 'produce':
          return { produce: produce(frame.produce!) };
        default:
          return { errorCode: ERROR_CODES.INVALID_REQUEST.code, errorMessage: `memory broker: no ${frame.body}` };
      }
    };
    /** Writes what this broker leads in its own view; a sequence gap is refused as a leader's log refuses it. */
    const produce = (req: mq.ProduceRequest.$Properties): mq.ProduceResponse.$Properties => ({
      topics: (req.topics ?? []).map((t) => ({
        name: t.name,
        partitions: (t.partitions ?? []).map((p) => {
          const partition = p.partition ?? 0;
          if (b.view.partitions[partition]?.leader !== id) return { partition, errorCode: ERROR_CODES.NOT_LEADER.code, baseOffset: -1 };
          const buf = Buffer.from(p.records!.buffer, p.records!.byteOffset, p.records!.byteLength);
          const key = `${id}/${t.name}/${partition}`;
          let base = -1;
          for (let pos = 0; pos < buf.length; pos += buf.readInt32BE(pos + 8) + 12) {
            const seq = buf.readInt32BE(pos + 53);
            const count = buf.readInt32BE(pos + 57);
            const expected = nextSeq.get(key) ?? 0;
            if (seq !== expected) return { partition, errorCode: ERROR_CODES.OUT_OF_ORDER_SEQUENCE_NUMBER.code, errorMessage: `sent ${seq}, expected ${expected}`, baseOffset: -1 };
            nextSeq.set(key, seq + count);
            const offset = nextOffset.get(key) ?? 0;
            nextOffset.set(key, offset + count);
            if (base < 0) base = offset;
          }
          return { partition, errorCode: 0, baseOffset: base };
        }),
      })),
    });
    brokers.push(b);
    takers.set(b.address, (frame) => {
      const name = frame.body ?? '';
      received[name] = (received[name] ?? 0) + 1;
      if (!held || name === 'handshake') return Promise.resolve(answer(frame));
      return new Promise<Reply>((resolve) => held!.push(() => resolve(answer(frame))));
    });
  }
  const connect: ConnectFn = async (options) => {
    const take = takers.get(options.address);
    if (!take) throw new Error(`no memory broker at ${options.address}`);
    return new MemorySocket(take);
  };
  return { brokers, connect };
}
