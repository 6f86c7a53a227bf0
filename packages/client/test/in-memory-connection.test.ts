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

type Answer = (frame: mq.RequestFrame) => Omit<mq.ResponseFrame.$Properties, 'correlationId'>;

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
    const reply = encodeResponse({ correlationId: frame.correlationId, ...this.answer(frame) });
    cb();
    queueMicrotask(() => this.emit('message', Buffer.from(reply), true));
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
          topics: [{ name: 'orders', partitions: [{ partition: 0, leader: 7, leaderEpoch: 0, replicas: [7], isr: [7] }] }],
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
      expect(orders).toMatchObject({ name: 'orders', partitions: [{ partition: 0, leader: 7 }] });
    } finally {
      await client.close();
    }
    expect(dialed[0]).toBe('memory:1');
    expect(sockets[0]!.sent.slice(0, 2)).toEqual(['handshake', 'metadata']);
    expect(sockets.every((s) => s.readyState === 3)).toBe(true);
  });
});
