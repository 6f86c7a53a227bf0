import { encodeBatchSync } from '@mq/protocol/batch';
import { decodeRequest, encodeRequest } from '@mq/protocol/wire';
import { encodeProduceFrame } from './produce-frame.js';

describe('encodeProduceFrame', () => {
  it('is byte for byte what protobufjs writes, and decodes to the same request', () => {
    const b1 = encodeBatchSync([{ key: 'k', value: 'v'.repeat(300) }]);
    const b2 = encodeBatchSync([{ value: 'x' }, { value: 'y' }]);
    for (const [acks, correlationId] of [[-1, 1], [0, 300], [1, 0xffffffff]] as const) {
      const frame = {
        correlationId,
        apiVersion: 0,
        clientId: 'client-ü',
        acks,
        timeoutMs: 30_000,
        topics: [
          { name: 'orders', partitions: [{ partition: 0, records: b1 }, { partition: 200, records: [b1, b2] }] },
          { name: 'ünïcode-topic', partitions: [{ partition: 3, records: b2 }] },
        ],
      };
      const ours = encodeProduceFrame(frame);
      const viaProtobufjs = encodeRequest({
        correlationId,
        apiVersion: 0,
        clientId: 'client-ü',
        produce: {
          acks,
          timeoutMs: 30_000,
          topics: frame.topics.map((t) => ({
            name: t.name,
            partitions: t.partitions.map((p) => ({ partition: p.partition, records: Array.isArray(p.records) ? Buffer.concat(p.records) : p.records })),
          })),
        },
      });
      expect(Buffer.from(ours).equals(Buffer.from(viaProtobufjs))).toBe(true);
      const decoded = decodeRequest(ours);
      expect(decoded.correlationId).toBe(correlationId);
      expect(decoded.produce!.acks).toBe(acks);
      expect(Buffer.from(decoded.produce!.topics![1]!.partitions![0]!.records!)).toEqual(b2);
    }
  });

  it("carries a transactional producer's id, as protobufjs writes it", () => {
    const b = encodeBatchSync([{ value: 'v' }]);
    const topics = [{ name: 't', partitions: [{ partition: 1, records: b }] }];
    const ours = encodeProduceFrame({ correlationId: 7, apiVersion: 0, clientId: 'c', acks: -1, timeoutMs: 1000, topics, transactionalId: 'payments-tx-ü' });
    const viaProtobufjs = encodeRequest({ correlationId: 7, apiVersion: 0, clientId: 'c', produce: { acks: -1, timeoutMs: 1000, topics, transactionalId: 'payments-tx-ü' } });
    expect(Buffer.from(ours).equals(Buffer.from(viaProtobufjs))).toBe(true);
    expect(decodeRequest(ours).produce!.transactionalId).toBe('payments-tx-ü');
  });

  it('asks for partial answers, as protobufjs writes it', () => {
    const b = encodeBatchSync([{ value: 'v' }]);
    const topics = [{ name: 't', partitions: [{ partition: 1, records: b }, { partition: 2, records: b }] }];
    const ours = encodeProduceFrame({ correlationId: 9, apiVersion: 1, clientId: 'c', acks: -1, timeoutMs: 1000, topics, transactionalId: 'x', partialAnswers: true });
    const viaProtobufjs = encodeRequest({ correlationId: 9, apiVersion: 1, clientId: 'c', produce: { acks: -1, timeoutMs: 1000, topics, transactionalId: 'x', partialAnswers: true } });
    expect(Buffer.from(ours).equals(Buffer.from(viaProtobufjs))).toBe(true);
    expect(decodeRequest(ours).produce!.partialAnswers).toBe(true);
  });
});
