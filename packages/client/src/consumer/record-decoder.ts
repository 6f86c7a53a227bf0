/**
 * Lazy decoding of fetched batches (the consume hot path): a fetch response
 * stays raw bytes until poll() asks for records, and then only as many
 * records as asked are decoded, straight into ConsumerRecord objects whose
 * keys and values are views into the fetched bytes (no copies).
 */
import {
  ATTR_COMPRESSION_MASK,
  ATTR_CONTROL,
  ATTR_LOG_APPEND_TIME,
  COMPRESSION_CODECS,
  HEADER_SIZE,
  LOG_OVERHEAD,
  VarintReader,
  decompress,
  readBatchHeader,
  validateBatch,
  type BatchHeader,
} from '@mq/protocol/batch';
import { MqError } from '@mq/protocol/errors';

export interface RecordHeader {
  key: string;
  value: Buffer | null;
}

export interface ConsumerRecord {
  topic: string;
  partition: number;
  offset: number;
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

const NO_HEADERS: RecordHeader[] = Object.freeze([]) as unknown as RecordHeader[];

/**
 * A fetched record. Key and value are views into the fetched bytes, made on
 * first access (most consumers read the value and never the key): decoding
 * a record allocates one object.
 */
class FetchedRecord implements ConsumerRecord {
  private k: Buffer | null | undefined;
  private v: Buffer | null | undefined;
  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly offset: number,
    readonly timestamp: number,
    readonly headers: RecordHeader[],
    private readonly section: Buffer,
    private readonly keyStart: number,
    private readonly keyLen: number,
    private readonly valueStart: number,
    private readonly valueLen: number,
  ) {}

  get key(): Buffer | null {
    if (this.k === undefined) this.k = this.keyLen < 0 ? null : this.section.subarray(this.keyStart, this.keyStart + this.keyLen);
    return this.k;
  }

  get value(): Buffer | null {
    if (this.v === undefined) {
      this.v = this.valueLen < 0 ? null : this.section.subarray(this.valueStart, this.valueStart + this.valueLen);
    }
    return this.v;
  }

  toJSON(): Record<string, unknown> {
    const { topic, partition, offset, timestamp, key, value, headers } = this;
    return { topic, partition, offset, timestamp, key, value, headers };
  }
}

/** Skips `len` bytes (a length-prefixed field); returns the start, or -1 for null. */
function skipBytes(r: VarintReader, len: number): number {
  if (len < 0) {
    if (len === -1) return -1;
    throw new MqError('CORRUPT_MESSAGE', `negative length ${len}`);
  }
  const start = r.pos;
  if (start + len > r.end) throw new MqError('CORRUPT_MESSAGE', `length ${len} runs past the end of the batch`);
  r.pos = start + len;
  return start;
}

/** The raw records of one partition from one fetch response, consumed in order. */
export class CompletedFetch {
  private pos = 0;
  /** Reader over the records section of the current batch (decompressed when needed). */
  private reader: VarintReader | undefined;
  private header: BatchHeader | undefined;
  private left = 0;
  /** Offset after the last batch consumed: where the position goes when a batch is done. */
  nextOffset: number;

  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly records: Buffer,
    /** The partition's seek epoch when the fetch was sent: stale data is dropped. */
    readonly epoch: number,
    /** Records before this offset are skipped (the batch holding the fetch offset starts earlier). */
    readonly fetchOffset: number,
    private readonly checkCrcs: boolean,
  ) {
    this.nextOffset = fetchOffset;
  }

  get bytes(): number {
    return this.records.length;
  }

  get done(): boolean {
    return this.left === 0 && this.records.length - this.pos < HEADER_SIZE;
  }

  /**
   * Decodes up to `max` records with offset >= `minOffset` into `out`.
   * Returns how many were added. Async only for compressed batches.
   */
  async drain(out: ConsumerRecord[], max: number, minOffset: number): Promise<number> {
    let added = 0;
    while (added < max) {
      if (this.left === 0 && !(await this.nextBatch())) break;
      const h = this.header!;
      const r = this.reader!;
      const logAppend = (h.attributes & ATTR_LOG_APPEND_TIME) !== 0;
      while (this.left > 0 && added < max) {
        this.left--;
        const len = r.varint();
        const end = r.pos + len;
        if (len < 0 || end > r.end) throw corrupt(this, `record length ${len} does not fit the batch`);
        r.pos++; // attributes
        const tsDelta = r.varint();
        const offset = h.baseOffset + r.varint();
        const keyLen = r.varint();
        const keyStart = skipBytes(r, keyLen);
        const valueLen = r.varint();
        const valueStart = skipBytes(r, valueLen);
        const hc = r.varint();
        let headers = NO_HEADERS;
        if (hc !== 0) {
          if (hc < 0 || hc > len) throw corrupt(this, `invalid header count ${hc}`);
          headers = new Array<RecordHeader>(hc);
          for (let j = 0; j < hc; j++) {
            const hk = r.bytes(r.varint());
            if (hk === null) throw corrupt(this, 'null header key');
            headers[j] = { key: hk.toString('utf8'), value: r.bytes(r.varint()) };
          }
        }
        if (r.pos !== end) throw corrupt(this, 'record length does not match its fields');
        if (offset < minOffset) continue;
        out.push(
          new FetchedRecord(
            this.topic,
            this.partition,
            offset,
            logAppend ? h.maxTimestamp : h.baseTimestamp + tsDelta,
            headers,
            r.buf,
            keyStart,
            keyLen,
            valueStart,
            valueLen,
          ),
        );
        added++;
      }
    }
    return added;
  }

  /** Positions on the next data batch that holds records at or after the fetch offset. */
  private async nextBatch(): Promise<boolean> {
    const buf = this.records;
    while (buf.length - this.pos >= HEADER_SIZE) {
      const h = this.checkCrcs ? validateBatch(buf, this.pos) : readBatchHeader(buf, this.pos);
      const size = h.batchLength + LOG_OVERHEAD;
      if (this.pos + size > buf.length) {
        this.pos = buf.length; // a trailing partial batch: fetched again next time
        return false;
      }
      const start = this.pos;
      this.pos += size;
      const last = h.baseOffset + h.lastOffsetDelta;
      if (last < this.fetchOffset) continue;
      this.nextOffset = last + 1;
      if ((h.attributes & ATTR_CONTROL) !== 0 || h.recordCount === 0) continue;
      const codec = COMPRESSION_CODECS[h.attributes & ATTR_COMPRESSION_MASK] ?? 'none';
      let section = buf.subarray(start + HEADER_SIZE, start + size);
      if (codec !== 'none') section = await decompress(codec, section);
      this.header = h;
      this.reader = new VarintReader(section, 0, section.length);
      this.left = h.recordCount;
      return true;
    }
    this.pos = buf.length;
    return false;
  }
}

function corrupt(f: CompletedFetch, what: string): MqError {
  return new MqError('CORRUPT_MESSAGE', `fetched data of ${f.topic}/${f.partition} is corrupt: ${what}`, {
    topic: f.topic,
    partition: f.partition,
  });
}

/** The offset after the last whole batch in fetched bytes, or undefined when there is none. */
export function endOfWholeBatches(records: Buffer): number | undefined {
  let pos = 0;
  let next: number | undefined;
  while (records.length - pos >= HEADER_SIZE) {
    const h = readBatchHeader(records, pos);
    const size = h.batchLength + LOG_OVERHEAD;
    if (h.batchLength < HEADER_SIZE - LOG_OVERHEAD) throw new MqError('CORRUPT_MESSAGE', `batch length ${h.batchLength} is too short`);
    if (pos + size > records.length) break;
    next = h.baseOffset + h.lastOffsetDelta + 1;
    pos += size;
  }
  return next;
}
