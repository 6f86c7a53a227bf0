/**
 * Issue 22 against the real broker process: a produce of batches no reader
 * could decode, or of inflated offsets, is refused with a typed error, and
 * the partition keeps serving.
 */
import { HEADER_SIZE, OFF_CRC, OFF_LAST_OFFSET_DELTA, computeBatchCrc, encodeBatch, encodeBatchSync } from '@mq/protocol/batch';
import { errorNumber } from '@mq/protocol/errors';
import { createTopic, startTestBroker, TestClient, topicName } from './helpers.js';

function reseal(buf: Buffer): Buffer {
  buf.writeUInt32BE(computeBatchCrc(buf, 0, buf.length), OFF_CRC);
  return buf;
}

describe('hostile produce batches', () => {
  it('refuses inflated offsets, poison lz4 and a zstd bomb; later produces to the partition still work', async () => {
    const t = await startTestBroker();
    const c = await TestClient.connect(t.url);
    const name = topicName('hostile');
    await createTopic(c, name, 1);
    const produce = async (records: Buffer) => {
      const r = await c.request({ produce: { acks: 1, topics: [{ name, partitions: [{ partition: 0, records }] }] } });
      return r.produce!.topics[0]!.partitions[0]!;
    };
    const inflated = () => {
      const b = encodeBatchSync([{ value: 'x' }]);
      b.writeInt32BE(0x7fff_ffff, OFF_LAST_OFFSET_DELTA);
      return reseal(b);
    };
    expect((await produce(Buffer.concat([inflated(), inflated(), inflated()]))).errorCode).toBe(errorNumber('INVALID_RECORD'));
    const lz4 = encodeBatchSync([{ value: 'y' }]);
    lz4.writeInt16BE(3, 21); // marked lz4; the records stay plain
    expect((await produce(reseal(lz4))).errorCode).toBe(errorNumber('INVALID_RECORD'));
    const bomb = await encodeBatch([{ value: Buffer.alloc(64 * 1024 * 1024) }], { compression: 'zstd' });
    expect(bomb.length - HEADER_SIZE).toBeLessThan(1024 * 1024);
    expect((await produce(bomb)).errorCode).toBe(errorNumber('RECORD_TOO_LARGE'));
    expect(await produce(encodeBatchSync([{ value: 'fine' }]))).toMatchObject({ errorCode: 0, baseOffset: 0 });
    expect(await produce(encodeBatchSync([{ value: 'fine' }]))).toMatchObject({ errorCode: 0, baseOffset: 1 });
  });
});
