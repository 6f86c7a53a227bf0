/**
 * A hand-written decoder for the request frame every produce sends
 * (RequestFrame with a ProduceRequest body, mq.proto), the counterpart of the
 * client's hand-written produce encoder: the broker decodes one per produce
 * request, and protobufjs's generic decoder (through the value-counting
 * reader) was the largest single cost of a one-record request on the broker.
 *
 * It takes only what it fully understands: the fields of RequestFrame,
 * ProduceRequest, TopicProduceData and PartitionProduceData with their own
 * wire types, varints that fit 32 bits, lengths within their message.
 * Anything else (another body, an unknown field, a truncated frame, more
 * values than the budget) returns undefined, and decodeRequest decodes the
 * frame with protobufjs as before, which also raises its errors. What it
 * returns is what protobufjs returns for the same bytes: instances of the
 * generated classes with the fields present set (a unit test checks both
 * decoders agree on many frames).
 */
import { Buffer } from '@mq/protocol/platform';
import { mq } from '../gen/mq.js';

/** Wire type 0 (varint) and 2 (length-delimited) tags of the fields read here. */
const T_CORRELATION_ID = 0x08;
const T_API_VERSION = 0x10;
const T_CLIENT_ID = 0x1a;
/** RequestFrame.produce = 20, length-delimited: 162 as a varint. */
const T_PRODUCE = 162;
const T_ACKS = 0x08;
const T_TIMEOUT_MS = 0x10;
const T_TOPICS = 0x1a;
const T_TRANSACTIONAL_ID = 0x22;
const T_PARTIAL_ANSWERS = 0x28;
const T_NAME = 0x0a;
const T_PARTITIONS = 0x12;
const T_PARTITION = 0x08;
const T_RECORDS = 0x12;

/** Thrown inside (and caught by) the decoder: the frame is not one it takes. */
const NOT_MINE = Symbol('not a plain produce frame');

/** Reads varints that fit 32 bits, within `end`. */
class Cursor {
  pos: number;
  values = 0;

  constructor(
    readonly buf: Buffer,
    readonly budget: number,
  ) {
    this.pos = 0;
  }

  /** An unsigned varint of at most 32 bits ending before `end`. */
  uint32(end: number): number {
    const buf = this.buf;
    let v = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (this.pos >= end) throw NOT_MINE;
      const b = buf[this.pos++]!;
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) {
        if (v > 0xffffffff) throw NOT_MINE;
        return v;
      }
    }
    throw NOT_MINE;
  }

  /** A field's tag (counted against the value budget, as decodeRequest's reader counts them). */
  tag(end: number): number {
    if (++this.values > this.budget) throw NOT_MINE;
    return this.uint32(end);
  }

  /** The end of the length-delimited field that starts here (within `end`). */
  delimited(end: number): number {
    const len = this.uint32(end);
    const stop = this.pos + len;
    if (stop > end) throw NOT_MINE;
    return stop;
  }

  /** An ASCII string (anything else, whose UTF-8 protobufjs checks strictly, is left to it). */
  string(end: number): string {
    const stop = this.delimited(end);
    const buf = this.buf;
    for (let i = this.pos; i < stop; i++) if (buf[i]! >= 0x80) throw NOT_MINE;
    const s = buf.toString('utf8', this.pos, stop);
    this.pos = stop;
    return s;
  }
}

/**
 * The frame decoded, when it is a produce request made only of the fields
 * above; undefined otherwise (decode it the generic way). `maxValues`
 * bounds the fields read, as decodeRequest's does.
 */
export function decodeProduceRequestFrame(data: Uint8Array, maxValues = Infinity): mq.RequestFrame | undefined {
  const buf = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const c = new Cursor(buf, maxValues);
  try {
    const frame = new mq.RequestFrame();
    let produce: mq.ProduceRequest | undefined;
    const end = buf.length;
    while (c.pos < end) {
      const tag = c.tag(end);
      // As the generated decoder: a field read as its default is no own property.
      if (tag === T_CORRELATION_ID) set(frame, 'correlationId', c.uint32(end));
      else if (tag === T_API_VERSION) set(frame, 'apiVersion', c.uint32(end));
      else if (tag === T_CLIENT_ID) set(frame, 'clientId', c.string(end));
      else if (tag === T_PRODUCE) produce = produceRequest(c, c.delimited(end), produce);
      else throw NOT_MINE;
    }
    if (!produce) return undefined;
    frame.produce = produce;
    frame.body = 'produce';
    return frame;
  } catch (err) {
    if (err === NOT_MINE) return undefined;
    throw err;
  }
}

/** A ProduceRequest ending at `end`; a repeated one merges into the first, as protobuf's decoding does. */
function produceRequest(c: Cursor, end: number, into: mq.ProduceRequest | undefined): mq.ProduceRequest {
  const req = into ?? new mq.ProduceRequest();
  while (c.pos < end) {
    const tag = c.tag(end);
    if (tag === T_ACKS) {
      const v = c.uint32(end);
      set(req, 'acks', ((v >>> 1) ^ -(v & 1)) | 0);
    } else if (tag === T_TIMEOUT_MS) set(req, 'timeoutMs', c.uint32(end));
    else if (tag === T_TOPICS) req.topics.push(topicData(c, c.delimited(end)));
    else if (tag === T_TRANSACTIONAL_ID) set(req, 'transactionalId', c.string(end));
    else if (tag === T_PARTIAL_ANSWERS) set(req, 'partialAnswers', c.uint32(end) !== 0);
    else throw NOT_MINE;
  }
  return req;
}

/** Sets a field, or (read as its default: 0, "", false, empty) deletes it, as the generated decoders do. */
function set<T extends object, K extends keyof T>(message: T, key: K, value: T[K] | undefined): void {
  if (value) message[key] = value;
  else delete message[key];
}

function topicData(c: Cursor, end: number): mq.TopicProduceData {
  const t = new mq.TopicProduceData();
  while (c.pos < end) {
    const tag = c.tag(end);
    if (tag === T_NAME) set(t, 'name', c.string(end));
    else if (tag === T_PARTITIONS) t.partitions.push(partitionData(c, c.delimited(end)));
    else throw NOT_MINE;
  }
  return t;
}

function partitionData(c: Cursor, end: number): mq.PartitionProduceData {
  const p = new mq.PartitionProduceData();
  while (c.pos < end) {
    const tag = c.tag(end);
    if (tag === T_PARTITION) set(p, 'partition', c.uint32(end));
    else if (tag === T_RECORDS) {
      const stop = c.delimited(end);
      // A view of the frame, as protobufjs's reader gives.
      set(p, 'records', stop === c.pos ? undefined : c.buf.subarray(c.pos, stop));
      c.pos = stop;
    } else throw NOT_MINE;
  }
  return p;
}
