/**
 * Fetch responses without copying their records. protobufjs would copy every
 * partition's record bytes into one newly allocated frame (for a 1 MiB fetch,
 * a 1 MiB allocation and copy per response, and the external-memory GC
 * pressure that comes with it). Here the small fields are encoded with
 * protobufjs and the `records` fields are written by hand as
 * length-delimited fields around the log's own buffers, so a response is a
 * list of buffers: glue, records, glue, records, ... Field order does not
 * matter to a protobuf decoder, so each partition's records come last in its
 * message. The bytes are exactly a valid `ResponseFrame`.
 *
 * The record buffers are written to the socket later, not copied now, so
 * they must not change until the socket has written them: the fetch handler
 * reads them into buffers of the broker's ReadBufferPool, and the connection
 * releases them only in the write callback of the frame's last part.
 */
import { uvarintSize, writeUvarint } from '@mq/protocol/batch';
import { mq } from '@mq/protocol/wire';

type FetchResponse = mq.FetchResponse.$Properties;

/** Field tags (field number << 3 | wire type 2, length-delimited). */
const TAG_FRAME_FETCH = (21 << 3) | 2;
const TAG_FETCH_TOPICS = (1 << 3) | 2;
const TAG_TOPIC_PARTITIONS = (2 << 3) | 2;
const TAG_PARTITION_RECORDS = (7 << 3) | 2;

const MAX_VARINT_BYTES = 10;

/** Collects small byte pieces and merges them between the large buffers it passes through. */
class PartsWriter {
  readonly parts: Buffer[] = [];
  length = 0;
  /** Varints not yet flushed into glueBuffers: glue[0, gluePos). */
  private readonly glue = Buffer.allocUnsafe(64);
  private gluePos = 0;
  private glueBuffers: Uint8Array[] = [];

  varint(n: number): void {
    if (this.gluePos + MAX_VARINT_BYTES > this.glue.length) this.flushBytes();
    this.gluePos = writeUvarint(this.glue, this.gluePos, n);
  }

  small(bytes: Uint8Array): void {
    this.flushBytes();
    this.glueBuffers.push(bytes);
  }

  large(bytes: Buffer): void {
    this.flush();
    this.parts.push(bytes);
    this.length += bytes.length;
  }

  flush(): void {
    this.flushBytes();
    if (this.glueBuffers.length === 0) return;
    const b = this.glueBuffers.length === 1 ? Buffer.from(this.glueBuffers[0]!.buffer, this.glueBuffers[0]!.byteOffset, this.glueBuffers[0]!.byteLength) : Buffer.concat(this.glueBuffers);
    this.glueBuffers = [];
    this.parts.push(b);
    this.length += b.length;
  }

  private flushBytes(): void {
    if (this.gluePos === 0) return;
    this.glueBuffers.push(new Uint8Array(this.glue.subarray(0, this.gluePos))); // a copy: glue is reused
    this.gluePos = 0;
  }
}

interface EncodedPartition {
  head: Uint8Array;
  records: Buffer | undefined;
  size: number;
}

/**
 * Encodes `{ correlationId, throttleMs, fetch }` as a ResponseFrame, returned as a list
 * of buffers whose concatenation is the frame. Record buffers are used as
 * they are, not copied.
 */
export function encodeFetchResponseFrame(correlationId: number, fetch: FetchResponse, throttleMs = 0): Buffer[] {
  const topics = (fetch.topics ?? []).map((t) => {
    const partitions: EncodedPartition[] = (t.partitions ?? []).map((p) => {
      const records = p.records && p.records.length > 0 ? toBuffer(p.records) : undefined;
      const head = mq.FetchPartitionResponse.encode({ ...p, records: undefined }).finish();
      const size = head.length + (records ? 1 + uvarintSize(records.length) + records.length : 0);
      return { head, records, size };
    });
    const head = mq.FetchTopicResponse.encode({ ...t, partitions: [] }).finish();
    let size = head.length;
    for (const p of partitions) size += 1 + uvarintSize(p.size) + p.size;
    return { head, partitions, size };
  });
  const fetchHead = mq.FetchResponse.encode({ ...fetch, topics: [] }).finish();
  let fetchSize = fetchHead.length;
  for (const t of topics) fetchSize += 1 + uvarintSize(t.size) + t.size;

  const w = new PartsWriter();
  w.small(mq.ResponseFrame.encode(throttleMs > 0 ? { correlationId, throttleMs } : { correlationId }).finish());
  w.varint(TAG_FRAME_FETCH);
  w.varint(fetchSize);
  w.small(fetchHead);
  for (const t of topics) {
    w.varint(TAG_FETCH_TOPICS);
    w.varint(t.size);
    w.small(t.head);
    for (const p of t.partitions) {
      w.varint(TAG_TOPIC_PARTITIONS);
      w.varint(p.size);
      w.small(p.head);
      if (p.records) {
        w.varint(TAG_PARTITION_RECORDS);
        w.varint(p.records.length);
        w.large(p.records);
      }
    }
  }
  w.flush();
  return w.parts;
}

function toBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/** The header of an unmasked (server to client) binary WebSocket frame with FIN set, for a payload of `length` bytes. */
export function wsBinaryFrameHeader(length: number): Buffer {
  if (length < 126) return Buffer.from([0x82, length]);
  if (length < 65536) {
    const h = Buffer.allocUnsafe(4);
    h[0] = 0x82;
    h[1] = 126;
    h.writeUInt16BE(length, 2);
    return h;
  }
  const h = Buffer.allocUnsafe(10);
  h[0] = 0x82;
  h[1] = 127;
  h.writeUInt32BE(Math.floor(length / 2 ** 32), 2);
  h.writeUInt32BE(length >>> 0, 6);
  return h;
}
