/**
 * Hand-written protobuf encoding of a produce request frame (RequestFrame
 * with a ProduceRequest body, mq.proto). Produce is the hot path: this
 * writes the frame into one buffer of exactly the right size and copies each
 * batch once, where the generic protobufjs writer buffers every field and
 * copies the batches twice. A unit test checks that protobufjs decodes it to
 * the same request.
 */
import { Buffer } from '@mq/protocol/platform';
import { uvarintSize, writeUvarint } from '@mq/protocol/batch';

export interface ProducePartitionData {
  partition: number;
  /** One or more record batches, concatenated (or a list of them, written back to back). */
  records: Buffer | readonly Buffer[];
}

export interface ProduceTopicData {
  name: string;
  partitions: readonly ProducePartitionData[];
}

export interface ProduceFrame {
  correlationId: number;
  apiVersion: number;
  clientId: string;
  acks: number;
  timeoutMs: number;
  topics: readonly ProduceTopicData[];
  /** A transactional producer's id (the broker accepts transactional batches only with it); absent: none. */
  transactionalId?: string;
  /** The answer may come in parts, each partition as it completes (ProduceRequest.partial_answers). */
  partialAnswers?: boolean;
}

const lenField = (tagBytes: number, len: number) => tagBytes + uvarintSize(len) + len;
/** proto3 leaves scalar fields at their default (0, "") out, as protobufjs does. */
const scalarField = (v: number) => (v === 0 ? 0 : 1 + uvarintSize(v));
const stringField = (len: number) => (len === 0 ? 0 : lenField(1, len));

/** A varint field at `pos` (left out when 0, as proto3 does); returns the position after it. */
function writeScalar(buf: Buffer, pos: number, tag: number, v: number): number {
  if (v === 0) return pos;
  buf[pos++] = tag;
  return writeUvarint(buf, pos, v);
}

/** A string field of `len` UTF-8 bytes at `pos` (left out when empty); returns the position after it. */
function writeString(buf: Buffer, pos: number, tag: number, s: string, len: number): number {
  if (len === 0) return pos;
  buf[pos++] = tag;
  pos = writeUvarint(buf, pos, len);
  return pos + buf.write(s, pos, 'utf8');
}

function recordsLength(r: Buffer | readonly Buffer[]): number {
  if (Buffer.isBuffer(r)) return r.length;
  let n = 0;
  for (const b of r as readonly Buffer[]) n += b.length;
  return n;
}

/**
 * Encodes the frame into memory from `alloc` (at least the size asked for:
 * the frame is its first bytes), or a fresh buffer without it.
 */
export function encodeProduceFrame(f: ProduceFrame, alloc?: (size: number) => Buffer): Buffer {
  const acksZigzag = ((f.acks << 1) ^ (f.acks >> 31)) >>> 0;
  const clientIdLen = Buffer.byteLength(f.clientId, 'utf8');
  // Sizes, innermost first.
  const topicSizes: number[] = [];
  const partSizes: number[][] = [];
  const nameLens: number[] = [];
  let produceSize = scalarField(acksZigzag) + scalarField(f.timeoutMs);
  for (const t of f.topics) {
    const nameLen = Buffer.byteLength(t.name, 'utf8');
    nameLens.push(nameLen);
    let topicSize = stringField(nameLen);
    const ps: number[] = [];
    for (const p of t.partitions) {
      const len = recordsLength(p.records);
      const size = scalarField(p.partition) + (len === 0 ? 0 : lenField(1, len));
      ps.push(size);
      topicSize += lenField(1, size);
    }
    partSizes.push(ps);
    topicSizes.push(topicSize);
    produceSize += lenField(1, topicSize);
  }
  const txnIdLen = f.transactionalId ? Buffer.byteLength(f.transactionalId, 'utf8') : 0;
  produceSize += stringField(txnIdLen);
  if (f.partialAnswers) produceSize += 2;
  const total = scalarField(f.correlationId) + scalarField(f.apiVersion) + stringField(clientIdLen) + lenField(2, produceSize);
  const mem = alloc ? alloc(total) : Buffer.allocUnsafe(total);
  const buf = mem.length === total ? mem : mem.subarray(0, total);
  let pos = 0;
  pos = writeScalar(buf, pos, 0x08, f.correlationId); // correlation_id = 1
  pos = writeScalar(buf, pos, 0x10, f.apiVersion); // api_version = 2
  pos = writeString(buf, pos, 0x1a, f.clientId, clientIdLen); // client_id = 3
  buf[pos++] = 0xa2; // produce = 20 (length-delimited): tag 162 as a two-byte varint
  buf[pos++] = 0x01;
  pos = writeUvarint(buf, pos, produceSize);
  pos = writeScalar(buf, pos, 0x08, acksZigzag); // acks = 1 (sint32)
  pos = writeScalar(buf, pos, 0x10, f.timeoutMs); // timeout_ms = 2
  for (let ti = 0; ti < f.topics.length; ti++) {
    const t = f.topics[ti]!;
    buf[pos++] = 0x1a; // topics = 3
    pos = writeUvarint(buf, pos, topicSizes[ti]!);
    pos = writeString(buf, pos, 0x0a, t.name, nameLens[ti]!); // name = 1
    for (let pi = 0; pi < t.partitions.length; pi++) {
      const p = t.partitions[pi]!;
      buf[pos++] = 0x12; // partitions = 2
      pos = writeUvarint(buf, pos, partSizes[ti]![pi]!);
      pos = writeScalar(buf, pos, 0x08, p.partition); // partition = 1
      const len = recordsLength(p.records);
      if (len === 0) continue;
      buf[pos++] = 0x12; // records = 2
      pos = writeUvarint(buf, pos, len);
      if (Buffer.isBuffer(p.records)) {
        p.records.copy(buf, pos);
        pos += p.records.length;
      } else {
        for (const b of p.records as readonly Buffer[]) {
          b.copy(buf, pos);
          pos += b.length;
        }
      }
    }
  }
  pos = writeString(buf, pos, 0x22, f.transactionalId ?? '', txnIdLen); // transactional_id = 4
  if (f.partialAnswers) {
    buf[pos++] = 0x28; // partial_answers = 5 (varint)
    buf[pos++] = 0x01;
  }
  if (pos !== total) throw new Error(`produce frame size mismatch: wrote ${pos} of ${total}`);
  return buf;
}
