/**
 * The records of the internal `__consumer_offsets` topic: a small versioned
 * binary schema for keys and values, carried in ordinary record batches.
 *
 * Key    := int16 keyType, string group, [string topic, int32 partition]
 *           keyType 1 = committed offset of (group, topic, partition)
 *           keyType 2 = group metadata of (group)
 * Value  := int16 version (1), then the fields below; a null value is a
 *           tombstone (the key is deleted; compaction may drop it).
 *           An offset value of version 2 ends with the topic id the topic
 *           had when the offset was committed (string), so a coordinator that
 *           loads it can tell an offset of a deleted incarnation (issue 22).
 * Strings are int16 length + UTF-8 (-1 for null), bytes int32 length + data,
 * int64 are big-endian signed and stay below 2^53.
 */
import { readInt64, writeInt64 } from '@mq/protocol/batch';
import { MqError } from '@mq/protocol/errors';

export const OFFSET_KEY_TYPE = 1;
export const GROUP_KEY_TYPE = 2;
export const VALUE_VERSION = 1;
/** Offset values that carry the committed topic's id. */
export const OFFSET_VALUE_VERSION_TOPIC_ID = 2;

export type OffsetsKey =
  | { type: 'offset'; group: string; topic: string; partition: number }
  | { type: 'group'; group: string };

export interface OffsetValue {
  offset: number;
  leaderEpoch: number;
  metadata: string;
  commitTimestamp: number;
  /** The topic's id when the offset was committed; absent in version 1 values. */
  topicId?: string;
}

export interface StoredMember {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  rebalanceTimeoutMs: number;
  sessionTimeoutMs: number;
  /** Metadata of the selected protocol (the consumer's subscription). */
  subscription: Buffer;
  assignment: Buffer;
}

export interface GroupValue {
  protocolType: string | null;
  generationId: number;
  protocolName: string | null;
  leaderId: string | null;
  /** When the group entered its current state (ms), for offsets expiry. */
  stateTimestamp: number;
  members: StoredMember[];
}

class Writer {
  private parts: Buffer[] = [];
  int16(v: number) {
    const b = Buffer.allocUnsafe(2);
    b.writeInt16BE(v);
    this.parts.push(b);
    return this;
  }
  int32(v: number) {
    const b = Buffer.allocUnsafe(4);
    b.writeInt32BE(v);
    this.parts.push(b);
    return this;
  }
  int64(v: number) {
    const b = Buffer.allocUnsafe(8);
    writeInt64(b, 0, v);
    this.parts.push(b);
    return this;
  }
  string(v: string | null) {
    if (v === null) return this.int16(-1);
    const b = Buffer.from(v, 'utf8');
    if (b.length > 0x7fff) throw new MqError('INVALID_REQUEST', `string of ${b.length} bytes is too long for the offsets schema`);
    this.int16(b.length);
    this.parts.push(b);
    return this;
  }
  bytes(v: Buffer) {
    this.int32(v.length);
    this.parts.push(v);
    return this;
  }
  done(): Buffer {
    return Buffer.concat(this.parts);
  }
}

class Reader {
  private pos = 0;
  constructor(private readonly buf: Buffer) {}
  private need(n: number) {
    if (this.pos + n > this.buf.length) {
      throw new MqError('CORRUPT_MESSAGE', `offsets record truncated: need ${n} bytes at ${this.pos} of ${this.buf.length}`);
    }
  }
  int16() {
    this.need(2);
    const v = this.buf.readInt16BE(this.pos);
    this.pos += 2;
    return v;
  }
  int32() {
    this.need(4);
    const v = this.buf.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }
  int64() {
    this.need(8);
    const v = readInt64(this.buf, this.pos);
    this.pos += 8;
    return v;
  }
  string(): string | null {
    const len = this.int16();
    if (len === -1) return null;
    if (len < 0) throw new MqError('CORRUPT_MESSAGE', `negative string length ${len} in offsets record`);
    this.need(len);
    const v = this.buf.toString('utf8', this.pos, this.pos + len);
    this.pos += len;
    return v;
  }
  requiredString(): string {
    const v = this.string();
    if (v === null) throw new MqError('CORRUPT_MESSAGE', 'unexpected null string in offsets record');
    return v;
  }
  bytes(): Buffer {
    const len = this.int32();
    if (len < 0) throw new MqError('CORRUPT_MESSAGE', `negative bytes length ${len} in offsets record`);
    this.need(len);
    const v = Buffer.from(this.buf.subarray(this.pos, this.pos + len));
    this.pos += len;
    return v;
  }
  end() {
    if (this.pos !== this.buf.length) {
      throw new MqError('CORRUPT_MESSAGE', `offsets record has ${this.buf.length - this.pos} trailing bytes`);
    }
  }
}

export function encodeKey(key: OffsetsKey): Buffer {
  const w = new Writer();
  if (key.type === 'offset') return w.int16(OFFSET_KEY_TYPE).string(key.group).string(key.topic).int32(key.partition).done();
  return w.int16(GROUP_KEY_TYPE).string(key.group).done();
}

/** Decodes a key; returns null for a key type this version does not know (skipped by the loader). */
export function decodeKey(buf: Buffer): OffsetsKey | null {
  const r = new Reader(buf);
  const type = r.int16();
  if (type === OFFSET_KEY_TYPE) {
    const key: OffsetsKey = { type: 'offset', group: r.requiredString(), topic: r.requiredString(), partition: r.int32() };
    r.end();
    return key;
  }
  if (type === GROUP_KEY_TYPE) {
    const key: OffsetsKey = { type: 'group', group: r.requiredString() };
    r.end();
    return key;
  }
  return null;
}

export function encodeOffsetValue(v: OffsetValue): Buffer {
  const w = new Writer()
    .int16(v.topicId ? OFFSET_VALUE_VERSION_TOPIC_ID : VALUE_VERSION)
    .int64(v.offset)
    .int32(v.leaderEpoch)
    .string(v.metadata)
    .int64(v.commitTimestamp);
  if (v.topicId) w.string(v.topicId);
  return w.done();
}

export function decodeOffsetValue(buf: Buffer): OffsetValue {
  const r = new Reader(buf);
  const version = r.int16();
  if (version !== VALUE_VERSION && version !== OFFSET_VALUE_VERSION_TOPIC_ID) throw new MqError('CORRUPT_MESSAGE', `unknown offset value version ${version}`);
  const v: OffsetValue = { offset: r.int64(), leaderEpoch: r.int32(), metadata: r.string() ?? '', commitTimestamp: r.int64() };
  if (version === OFFSET_VALUE_VERSION_TOPIC_ID) {
    const topicId = r.string();
    if (topicId) v.topicId = topicId;
  }
  r.end();
  return v;
}

export function encodeGroupValue(v: GroupValue): Buffer {
  const w = new Writer()
    .int16(VALUE_VERSION)
    .string(v.protocolType)
    .int32(v.generationId)
    .string(v.protocolName)
    .string(v.leaderId)
    .int64(v.stateTimestamp)
    .int32(v.members.length);
  for (const m of v.members) {
    w.string(m.memberId)
      .string(m.groupInstanceId)
      .string(m.clientId)
      .string(m.clientHost)
      .int32(m.rebalanceTimeoutMs)
      .int32(m.sessionTimeoutMs)
      .bytes(m.subscription)
      .bytes(m.assignment);
  }
  return w.done();
}

export function decodeGroupValue(buf: Buffer): GroupValue {
  const r = new Reader(buf);
  const version = r.int16();
  if (version !== VALUE_VERSION) throw new MqError('CORRUPT_MESSAGE', `unknown group value version ${version}`);
  const protocolType = r.string();
  const generationId = r.int32();
  const protocolName = r.string();
  const leaderId = r.string();
  const stateTimestamp = r.int64();
  const count = r.int32();
  if (count < 0 || count > buf.length) throw new MqError('CORRUPT_MESSAGE', `invalid member count ${count}`);
  const members: StoredMember[] = [];
  for (let i = 0; i < count; i++) {
    members.push({
      memberId: r.requiredString(),
      groupInstanceId: r.string(),
      clientId: r.string() ?? '',
      clientHost: r.string() ?? '',
      rebalanceTimeoutMs: r.int32(),
      sessionTimeoutMs: r.int32(),
      subscription: r.bytes(),
      assignment: r.bytes(),
    });
  }
  r.end();
  return { protocolType, generationId, protocolName, leaderId, stateTimestamp, members };
}

/**
 * The `__consumer_offsets` partition of a group: Java's String.hashCode of
 * the group id, made non-negative, modulo the partition count (the same
 * mapping Kafka uses, so it is stable across versions and restarts).
 * `31 * h + c` is exact in a double (|h| < 2^31), so `| 0` keeps the same low
 * 32 bits as Math.imul would, without a global lookup per character: under a
 * vm context (jest's) each `Math` read is an interceptor call, and 20,000
 * ids of 410 characters took 5 s in a test broker (issue 22).
 */
export function partitionForGroup(groupId: string, partitionCount: number): number {
  let h = 0;
  for (let i = 0; i < groupId.length; i++) h = (31 * h + groupId.charCodeAt(i)) | 0;
  return (h & 0x7fffffff) % partitionCount;
}
