/**
 * Regression tests for hostile produce batches (issue 22): header
 * consistency, records that do not decode, compression bombs, and a refused
 * append that must leave the log exactly as it was.
 */
import { gzipSync } from 'node:zlib';
import {
  ATTR_LOG_APPEND_TIME,
  HEADER_SIZE,
  OFF_ATTRIBUTES,
  OFF_BASE_SEQUENCE,
  OFF_CRC,
  OFF_LAST_OFFSET_DELTA,
  OFF_MAX_TIMESTAMP,
  OFF_PRODUCER_EPOCH,
  OFF_PRODUCER_ID,
  OFF_RECORD_COUNT,
  computeBatchCrc,
  decodeBatchSync,
  encodeBatch,
  encodeBatchSync,
  validateBatch,
  writeInt64,
} from '@mq/protocol/batch';
import { batch, logFixture, values } from '../test/helpers.js';
import type { Log } from './log.js';
import type { LogOptions } from './options.js';

const fx = logFixture();
const openTracked = (options: LogOptions = {}): Promise<Log> => fx.open(options);

/** Recomputes the CRC after a header or body edit, as a sender forging a batch would. */
function reseal(buf: Buffer): Buffer {
  buf.writeUInt32BE(computeBatchCrc(buf, 0, buf.length), OFF_CRC);
  return buf;
}

/** One record whose batch claims `lastOffsetDelta` 2^31-1 (CRC valid): the offset-inflation frame. */
function inflated(tag: string): Buffer {
  const b = batch(tag, 1);
  b.writeInt32BE(0x7fff_ffff, OFF_LAST_OFFSET_DELTA);
  return reseal(b);
}

/** A CRC-valid batch marked `codec` whose records section is `body`. */
function withBody(codec: number, body: Buffer, recordCount = 1): Buffer {
  const head = Buffer.from(batch('x', 1).subarray(0, HEADER_SIZE));
  head.writeInt32BE(HEADER_SIZE + body.length - 12, 8);
  head.writeInt16BE(codec, OFF_ATTRIBUTES);
  head.writeInt32BE(recordCount, OFF_RECORD_COUNT);
  head.writeInt32BE(recordCount - 1, OFF_LAST_OFFSET_DELTA);
  return reseal(Buffer.concat([head, body]));
}

/** The log answers as before the refused append: same end, same records, and it still takes appends. */
async function expectUnchangedAndWritable(log: Log, before: string[]): Promise<void> {
  expect(log.logEndOffset).toBe(before.length);
  const ok = await log.append(batch('after', 1));
  expect(ok.baseOffset).toBe(before.length);
  const read = await log.read(0, 1 << 20);
  expect(values(read.records).map((v) => v.value)).toEqual([...before, 'after:0']);
}

describe('offset inflation', () => {
  test('a batch of one record claiming lastOffsetDelta 2^31-1 is refused with INVALID_RECORD and moves nothing', async () => {
    const log = await openTracked();
    await log.append(batch('a', 2));
    await expect(log.append(inflated('bad'))).rejects.toMatchObject({ code: 'INVALID_RECORD' });
    await expectUnchangedAndWritable(log, ['a:0', 'a:1']);
    // No segment was rolled for the refused frame.
    expect(log.segmentCount).toBe(1);
  });

  test('three inflated batches in one produce leave the log exactly as it was (no "index entry 0@0 is not after the last one")', async () => {
    const log = await openTracked({ indexIntervalBytes: 0 });
    await log.append(batch('a', 1));
    const three = Buffer.concat([inflated('x'), inflated('y'), inflated('z')]);
    await expect(log.append(three)).rejects.toMatchObject({ code: 'INVALID_RECORD' });
    await expectUnchangedAndWritable(log, ['a:0']);
  });

  test('a follower append whose offsets do not fit one segment is refused before any state change', async () => {
    const log = await openTracked({ indexIntervalBytes: 0 });
    await log.append(batch('a', 1));
    // Compacted batches may legitimately span more offsets than records; three such spans do not fit one segment.
    const spans = [1, 2 ** 31, 2 ** 32].map((base) => encodeBatchSync([{ value: 'c' }], { baseOffset: base, lastOffsetDelta: 0x7fff_fffe, now: 1 }));
    await expect(log.append(Buffer.concat(spans), { assignOffsets: false })).rejects.toMatchObject({ code: 'INVALID_RECORD' });
    expect(log.logEndOffset).toBe(1);
    const next = encodeBatchSync([{ value: 'after:0' }], { baseOffset: 1, now: 1 });
    await expect(log.append(next, { assignOffsets: false })).resolves.toMatchObject({ baseOffset: 1, lastOffset: 1 });
    expect(values((await log.read(0, 1 << 20)).records).map((v) => v.value)).toEqual(['a:0', 'after:0']);
  });
});

describe('header consistency of produced batches', () => {
  const cases: Array<[string, (b: Buffer) => void]> = [
    ['no records', (b) => b.writeInt32BE(0, OFF_RECORD_COUNT)],
    ['more records than the bytes can hold', (b) => {
      b.writeInt32BE(1_000_000, OFF_RECORD_COUNT);
      b.writeInt32BE(999_999, OFF_LAST_OFFSET_DELTA);
    }],
    ['a producer id without a base sequence', (b) => {
      writeInt64(b, OFF_PRODUCER_ID, 5);
      b.writeInt16BE(0, OFF_PRODUCER_EPOCH);
    }],
    ['a producer id below -1', (b) => writeInt64(b, OFF_PRODUCER_ID, -7)],
    ['a max timestamp below the base timestamp', (b) => writeInt64(b, OFF_MAX_TIMESTAMP, 5)],
  ];
  test.each(cases)('refuses a batch with %s (INVALID_RECORD)', async (_name, edit) => {
    const log = await openTracked();
    const b = batch('a', 2);
    edit(b);
    await expect(log.append(reseal(b))).rejects.toMatchObject({ code: 'INVALID_RECORD' });
    await expectUnchangedAndWritable(log, []);
  });

  test('a batch without a producer id is stored whatever its epoch and sequence say (as Kafka: kafkajs writes epoch 0, sequence 0)', async () => {
    const log = await openTracked();
    const b = batch('kafkajs', 2);
    b.writeInt16BE(0, OFF_PRODUCER_EPOCH);
    b.writeInt32BE(0, OFF_BASE_SEQUENCE);
    const r = await log.append(reseal(b));
    expect(r.baseOffset).toBe(0);
    await expectUnchangedAndWritable(log, ['kafkajs:0', 'kafkajs:1']);
  });

  test('a control batch or a transactional batch without a producer id or sequence from a producer is refused', async () => {
    const log = await openTracked();
    await expect(log.append(batch('t', 1, { transactional: true }))).rejects.toMatchObject({ code: 'INVALID_RECORD' });
    await expect(log.append(batch('t', 1, { transactional: true, producerId: 1, producerEpoch: 0, baseSequence: -1 }))).rejects.toMatchObject({ code: 'INVALID_RECORD' });
    await expect(log.append(batch('c', 1, { control: true }))).rejects.toMatchObject({ code: 'INVALID_RECORD' });
    await expect(log.append(batch('c', 1, { control: true, transactional: true, producerId: 1, producerEpoch: 0 }))).rejects.toMatchObject({ code: 'INVALID_RECORD' });
    await expectUnchangedAndWritable(log, []);
  });
});

describe('poison batches', () => {
  test('an uncompressed batch whose record framing does not match the header is refused', async () => {
    const log = await openTracked();
    const b = batch('a', 2);
    b[HEADER_SIZE] = 0x7e; // first record's length varint now claims 63 bytes
    await expect(log.append(reseal(b))).rejects.toMatchObject({ code: 'INVALID_RECORD' });
    await expectUnchangedAndWritable(log, []);
  });

  test('a record whose offset delta is not its index is refused', async () => {
    const log = await openTracked();
    const b = encodeBatchSync([{ value: 'a' }, { value: 'b', offsetDelta: 1 }], { now: 1 });
    const forged = encodeBatchSync([{ value: 'a', offsetDelta: 1 }], { now: 1, lastOffsetDelta: 1 });
    forged.writeInt32BE(2, OFF_RECORD_COUNT);
    await expect(log.append(reseal(forged))).rejects.toMatchObject({ code: 'INVALID_RECORD' });
    await log.append(b);
    expect(log.logEndOffset).toBe(2);
  });

  test.each([
    ['gzip', 1],
    ['snappy', 2],
    ['lz4', 3],
    ['zstd', 4],
  ] as const)('a batch marked %s whose records are not compressed records (CRC valid) is refused', async (_name, codec) => {
    const log = await openTracked();
    await expect(log.append(withBody(codec, Buffer.from('these bytes are not compressed records at all')))).rejects.toMatchObject({ code: 'INVALID_RECORD' });
    await expectUnchangedAndWritable(log, []);
  });

  test.each(['gzip', 'snappy', 'lz4', 'zstd'] as const)('a %s batch that decompresses to fewer records than its header says is refused', async (codec) => {
    const log = await openTracked();
    const b = await encodeBatch([{ value: 'a' }, { value: 'b' }], { compression: codec, now: 1 });
    b.writeInt32BE(3, OFF_RECORD_COUNT);
    b.writeInt32BE(2, OFF_LAST_OFFSET_DELTA);
    await expect(log.append(reseal(b))).rejects.toMatchObject({ code: 'INVALID_RECORD' });
    const good = await encodeBatch([{ value: 'c' }], { compression: codec, now: 1 });
    await expect(log.append(good)).resolves.toMatchObject({ baseOffset: 0 });
  });
});

describe('compression bombs', () => {
  const zeros = Buffer.alloc(64 * 1024 * 1024);
  test.each(['gzip', 'zstd', 'lz4', 'snappy'] as const)('one record of 64 MiB of zeros in %s is refused with RECORD_TOO_LARGE against an 8 MiB bound', async (codec) => {
    const log = await openTracked({ maxBatchBytes: 4 * 1024 * 1024, maxDecompressedBytes: 8 * 1024 * 1024 });
    const bomb = await encodeBatch([{ value: zeros }], { compression: codec, now: 1 });
    expect(bomb.length).toBeLessThan(4 * 1024 * 1024);
    await expect(log.append(bomb)).rejects.toMatchObject({ code: 'RECORD_TOO_LARGE' });
    await expectUnchangedAndWritable(log, []);
  });

  test('a gzip member that inflates past the bound is stopped at the bound', async () => {
    const log = await openTracked({ maxDecompressedBytes: 1024 * 1024 });
    const b = withBody(1, gzipSync(zeros));
    await expect(log.append(b)).rejects.toMatchObject({ code: 'RECORD_TOO_LARGE' });
  });
});

describe('the checks the broker made before the log (now made once, here)', () => {
  const a = encodeBatchSync([{ value: 'one' }, { value: 'two' }], { now: 1000 });
  const b = encodeBatchSync([{ key: 'k', value: 'three' }], { now: 2000 });

  test('a flipped bit, a lying length and trailing bytes are CORRUPT_MESSAGE; an oversized batch RECORD_TOO_LARGE', async () => {
    const log = await openTracked({ maxBatchBytes: 4096 });
    const flipped = Buffer.from(a);
    flipped[flipped.length - 1]! ^= 1;
    await expect(log.append(flipped)).rejects.toMatchObject({ code: 'CORRUPT_MESSAGE' });
    const lying = Buffer.from(a);
    lying.writeInt32BE(lying.readInt32BE(8) + 100, 8);
    await expect(log.append(lying)).rejects.toMatchObject({ code: 'CORRUPT_MESSAGE' });
    // Even a length over the size limit is a lie first when the bytes are not there.
    lying.writeInt32BE(10_000_000, 8);
    await expect(log.append(lying)).rejects.toMatchObject({ code: 'CORRUPT_MESSAGE' });
    await expect(log.append(Buffer.concat([a, Buffer.alloc(10)]))).rejects.toMatchObject({ code: 'CORRUPT_MESSAGE' });
    await expect(log.append(Buffer.from(a), { maxBatchBytes: a.length - 1 })).rejects.toMatchObject({ code: 'RECORD_TOO_LARGE' });
    await expectUnchangedAndWritable(log, []);
  });

  test('logAppendTime marks and stamps every batch with the log clock and keeps the CRC valid', async () => {
    const log = await fx.open({}, { clock: () => 123456789 });
    const res = await log.append(Buffer.concat([a, b]), { logAppendTime: true });
    expect(res.logAppendTime).toBe(123456789);
    const read = await log.read(0, 1 << 20);
    const decoded = decodeBatchSync(read.records, 0);
    expect(decoded.header.attributes & ATTR_LOG_APPEND_TIME).toBe(ATTR_LOG_APPEND_TIME);
    expect(decoded.records.map((r) => [r.value?.toString(), r.timestamp])).toEqual([
      ['one', 123456789],
      ['two', 123456789],
    ]);
    expect(validateBatch(read.records, a.length).maxTimestamp).toBe(123456789);
  });
});

describe('the cleaner and a batch no reader can decode', () => {
  test('compaction keeps an unreadable batch as it is, says so once, and still cleans the rest', async () => {
    const log = await openTracked();
    for (let i = 0; i < 3; i++) await log.append(encodeBatchSync([{ key: 'k', value: `v${i}` }], { now: 1 }));
    // Stored before produce verified records (validate: false): marked lz4, not lz4.
    await log.append(withBody(3, Buffer.from('not lz4 at all')), { validate: false });
    await log.roll();
    const result = await log.compact({ now: 1 });
    expect(result).toMatchObject({ unreadableBatches: 2, removedRecords: 2 }); // once in the key map, once when cleaning
    const read = await log.read(0, 1 << 20);
    expect(read.nextOffset).toBe(4);
    // The next pass is not stopped by it either.
    expect(await log.compact({ now: 1 })).toMatchObject({ unreadableBatches: 2, removedRecords: 0 });
  });
});
