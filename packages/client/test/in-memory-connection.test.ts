/**
 * The client's connection-factory seam: an MqClient built with a `connect`
 * component runs over an in-memory socket, with no network at all. The
 * "broker" here is a function from a decoded request frame to a response.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from '@jest/globals';
import { decodeBatchSync } from '@mq/protocol/batch';
import { ERROR_CODES } from '@mq/protocol/errors';
import { SUPPORTED_API_VERSIONS, decodeRequest, encodeResponse, type mq } from '@mq/protocol/wire';
import { MqClient, type ClientSocket, type ConnectFn } from '../src/index.js';

type Reply = Omit<mq.ResponseFrame.$Properties, 'correlationId'>;
/** One answer frame, or several (an answer in parts: ResponseFrame.partial). */
type Answer = (frame: mq.RequestFrame) => Reply | Reply[];

/** The client's end of an in-memory socket; `answer` plays the broker. */
class MemorySocket extends EventEmitter implements ClientSocket {
  readyState = 1;
  readonly bufferedAmount = 0;
  readonly sent: string[] = [];

  constructor(private readonly answer: Answer) {
    super();
  }

  send(data: Uint8Array, _options: { binary: boolean }, cb: (err?: Error) => void): void {
    if (this.readyState !== 1) return cb(new Error('socket closed'));
    const frame = decodeRequest(data);
    this.sent.push(frame.body!);
    const answer = this.answer(frame);
    const replies = (Array.isArray(answer) ? answer : [answer]).map((a) => encodeResponse({ correlationId: frame.correlationId, ...a }));
    cb();
    queueMicrotask(() => {
      for (const reply of replies) this.emit('message', Buffer.from(reply), true);
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

const broker: Answer = (frame) => {
  switch (frame.body) {
    case 'handshake':
      return { handshake: { brokerId: 7, clusterId: 'memory', apiVersions: [...SUPPORTED_API_VERSIONS], maxFrameBytes: 1 << 20 } };
    case 'metadata':
      return {
        metadata: {
          clusterId: 'memory',
          controllerId: 7,
          brokers: [{ id: 7, host: 'memory', port: 1 }],
          topics: [{ name: 'orders', partitions: [0, 1].map((partition) => ({ partition, leader: 7, leaderEpoch: 0, replicas: [7], isr: [7] })) }],
        },
      };
    default:
      return { errorCode: ERROR_CODES.INVALID_REQUEST.code, errorMessage: `in-memory broker: no ${frame.body}` };
  }
};

describe('connect component (connection factory)', () => {
  it('runs the client over an in-memory socket: handshake, metadata, admin, close', async () => {
    const sockets: MemorySocket[] = [];
    const dialed: string[] = [];
    const connect: ConnectFn = async (options) => {
      dialed.push(options.address);
      const s = new MemorySocket(broker);
      sockets.push(s);
      return s;
    };
    const client = new MqClient({ bootstrap: 'memory:1', clientId: 'in-memory' }, { connect });
    try {
      await client.connect();
      expect(await client.admin().listTopics()).toEqual(['orders']);
      const [orders] = await client.admin().describeTopics(['orders']);
      expect(orders).toMatchObject({ name: 'orders', partitions: [{ partition: 0, leader: 7 }, { partition: 1, leader: 7 }] });
    } finally {
      await client.close();
    }
    expect(dialed[0]).toBe('memory:1');
    expect(sockets[0]!.sent.slice(0, 2)).toEqual(['handshake', 'metadata']);
    expect(sockets.every((s) => s.readyState === 3)).toBe(true);
  });

  it('a produce of several partitions asks for its answer in parts and settles each partition from its own part', async () => {
    const asked: boolean[] = [];
    const parts: Answer = (frame) => {
      if (frame.body !== 'produce') return broker(frame);
      asked.push(frame.produce!.partialAnswers === true);
      const entry = (partition: number, baseOffset: number) => ({ name: 'orders', partitions: [{ partition, errorCode: 0, baseOffset, logAppendTime: -1, logStartOffset: 0 }] });
      // Partition 1 first, in a part; partition 0 in the last frame.
      return [{ partial: true, produce: { topics: [entry(1, 40)] } }, { produce: { topics: [entry(0, 9)] } }];
    };
    const client = new MqClient({ bootstrap: 'memory:1' }, { connect: async () => new MemorySocket(parts) });
    const producer = client.producer({ acks: 'all', lingerMs: 0 });
    try {
      const [a, b] = await Promise.all([producer.send('orders', { value: 'a', partition: 0 }), producer.send('orders', { value: 'b', partition: 1 })]);
      expect([a.offset, b.offset]).toEqual([9, 40]);
      expect(asked).toEqual([true]);
    } finally {
      await producer.close();
      await client.close();
    }
  });

  it('a part arriving after its request was abandoned for a new leader settles nothing: the record is acknowledged once, by the new leader', async () => {
    // Broker 7 leads both partitions, takes the produce and says nothing; a leader check then finds both
    // moved to broker 8 (epoch 1) and the request is abandoned and resent there. Broker 7's late part for
    // partition 1 arrives while the resent request is at broker 8: it must be ignored (it once acknowledged
    // the record with the old leader's offset and freed the batch's memory while the batch was still queued).
    let moved = false;
    let stale: { socket: MemorySocket; correlationId: number } | undefined;
    const resent: Array<{ partition: number; values: string[] }> = [];
    const metadata = () => ({
      metadata: {
        clusterId: 'memory',
        controllerId: 7,
        brokers: [
          { id: 7, host: 'seven', port: 1 },
          { id: 8, host: 'eight', port: 1 },
        ],
        topics: [{ name: 'orders', partitions: [0, 1].map((partition) => ({ partition, leader: moved ? 8 : 7, leaderEpoch: moved ? 1 : 0, replicas: [7, 8], isr: [7, 8] })) }],
      },
    });
    const answer = (partition: number, baseOffset: number) => ({ partition, errorCode: 0, baseOffset, logAppendTime: -1, logStartOffset: 0 });
    const sockets = new Map<string, MemorySocket>();
    const connect: ConnectFn = async ({ address }) => {
      const socket: MemorySocket = new MemorySocket((frame) => {
        if (frame.body === 'metadata') return metadata();
        if (frame.body !== 'produce') return broker(frame);
        if (address.startsWith('seven')) {
          moved = true;
          stale = { socket, correlationId: frame.correlationId };
          return [];
        }
        const partitions = frame.produce!.topics![0]!.partitions!;
        for (const p of partitions) {
          const values = decodeBatchSync(Buffer.from(p.records!)).records.map((r) => Buffer.from(r.value!).toString());
          resent.push({ partition: p.partition ?? 0, values });
        }
        // The old leader's part comes now, before the new leader's answer.
        const { socket: old, correlationId } = stale!;
        old.emit('message', Buffer.from(encodeResponse({ correlationId, partial: true, produce: { topics: [{ name: 'orders', partitions: [answer(1, 40)] }] } })), true);
        return { produce: { topics: [{ name: 'orders', partitions: partitions.map((p) => answer(p.partition ?? 0, 100 * ((p.partition ?? 0) + 1))) }] } };
      });
      sockets.set(address, socket);
      return socket;
    };
    const client = new MqClient({ bootstrap: 'seven:1' }, { connect });
    const producer = client.producer({ acks: 'all', lingerMs: 0, leaderCheckMs: 20 });
    try {
      const [a, b] = await Promise.all([producer.send('orders', { value: 'a', partition: 0 }), producer.send('orders', { value: 'b', partition: 1 })]);
      // Resent once each (in one request or two: the order of the retries is not the point).
      expect(resent.sort((x, y) => x.partition - y.partition)).toEqual([
        { partition: 0, values: ['a'] },
        { partition: 1, values: ['b'] },
      ]);
      expect([a.offset, b.offset]).toEqual([100, 200]);
    } finally {
      await producer.close();
      await client.close();
    }
  });

  it('a part of an answer nobody asked for in parts is a protocol error: the connection fails, nothing is settled from it', async () => {
    const unasked: Answer = (frame) => (frame.body === 'describeQuorum' ? [{ partial: true, describeQuorum: {} }] : broker(frame));
    const client = new MqClient({ bootstrap: 'memory:1', retry: { retries: 0 } }, { connect: async () => new MemorySocket(unasked) });
    try {
      await client.connect();
      await expect(client.admin().describeQuorum()).rejects.toMatchObject({ code: 'CORRUPT_MESSAGE' });
    } finally {
      await client.close();
    }
  });
});
