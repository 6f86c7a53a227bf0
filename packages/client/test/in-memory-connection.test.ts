/**
 * The client's connection-factory seam: an MqClient built with a `connect`
 * component runs over an in-memory socket, with no network at all. The
 * "broker" here is a function from a decoded request frame to a response.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from '@jest/globals';
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
