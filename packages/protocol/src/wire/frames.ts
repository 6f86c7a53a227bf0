/**
 * Encoding and decoding of whole frames, and the map between a frame's body
 * field and its ApiKey. One WebSocket message is one frame.
 */
import { MqError } from '../errors.js';
import $protobuf from 'protobufjs/minimal.js';
import { Buffer } from '@mq/protocol/platform';
import { mq } from '../gen/mq.js';
import { decodeProduceRequestFrame } from './produce-request.js';

export type RequestFrame = mq.IRequestFrame;
export type ResponseFrame = mq.IResponseFrame;
export type RequestBody = NonNullable<mq.RequestFrame['body']>;

/** The body field of a request (or response) frame for each API. */
export const BODY_API: Readonly<Record<RequestBody, mq.ApiKey>> = {
  handshake: mq.ApiKey.HANDSHAKE,
  metadata: mq.ApiKey.METADATA,
  createTopics: mq.ApiKey.CREATE_TOPICS,
  deleteTopics: mq.ApiKey.DELETE_TOPICS,
  createPartitions: mq.ApiKey.CREATE_PARTITIONS,
  describeConfigs: mq.ApiKey.DESCRIBE_CONFIGS,
  incrementalAlterConfigs: mq.ApiKey.INCREMENTAL_ALTER_CONFIGS,
  produce: mq.ApiKey.PRODUCE,
  fetch: mq.ApiKey.FETCH,
  listOffsets: mq.ApiKey.LIST_OFFSETS,
  offsetForLeaderEpoch: mq.ApiKey.OFFSET_FOR_LEADER_EPOCH,
  deleteRecords: mq.ApiKey.DELETE_RECORDS,
  findCoordinator: mq.ApiKey.FIND_COORDINATOR,
  joinGroup: mq.ApiKey.JOIN_GROUP,
  syncGroup: mq.ApiKey.SYNC_GROUP,
  heartbeat: mq.ApiKey.HEARTBEAT,
  leaveGroup: mq.ApiKey.LEAVE_GROUP,
  offsetCommit: mq.ApiKey.OFFSET_COMMIT,
  offsetFetch: mq.ApiKey.OFFSET_FETCH,
  listGroups: mq.ApiKey.LIST_GROUPS,
  describeGroups: mq.ApiKey.DESCRIBE_GROUPS,
  deleteGroups: mq.ApiKey.DELETE_GROUPS,
  initProducerId: mq.ApiKey.INIT_PRODUCER_ID,
  addPartitionsToTxn: mq.ApiKey.ADD_PARTITIONS_TO_TXN,
  addOffsetsToTxn: mq.ApiKey.ADD_OFFSETS_TO_TXN,
  endTxn: mq.ApiKey.END_TXN,
  writeTxnMarkers: mq.ApiKey.WRITE_TXN_MARKERS,
  txnOffsetCommit: mq.ApiKey.TXN_OFFSET_COMMIT,
  controllerForward: mq.ApiKey.CONTROLLER_FORWARD,
  // ---- security
  saslAuthenticate: mq.ApiKey.SASL_AUTHENTICATE,
  alterUserScramCredentials: mq.ApiKey.ALTER_USER_SCRAM_CREDENTIALS,
  describeUserScramCredentials: mq.ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS,
  createAcls: mq.ApiKey.CREATE_ACLS,
  deleteAcls: mq.ApiKey.DELETE_ACLS,
  describeAcls: mq.ApiKey.DESCRIBE_ACLS,
  // ---- quotas
  alterClientQuotas: mq.ApiKey.ALTER_CLIENT_QUOTAS,
  describeClientQuotas: mq.ApiKey.DESCRIBE_CLIENT_QUOTAS,
  describeLogDirs: mq.ApiKey.DESCRIBE_LOG_DIRS,
  clusterAuth: mq.ApiKey.CLUSTER_AUTH,
  // ---- scaleout
  alterPartitionReassignments: mq.ApiKey.ALTER_PARTITION_REASSIGNMENTS,
  listPartitionReassignments: mq.ApiKey.LIST_PARTITION_REASSIGNMENTS,
  electLeaders: mq.ApiKey.ELECT_LEADERS,
  decommissionBroker: mq.ApiKey.DECOMMISSION_BROKER,
  alterReplicationThrottle: mq.ApiKey.ALTER_REPLICATION_THROTTLE,
  // ---- controller quorum membership
  alterRaftVoters: mq.ApiKey.ALTER_RAFT_VOTERS,
  describeQuorum: mq.ApiKey.DESCRIBE_QUORUM,
};

export function encodeRequest(frame: RequestFrame): Uint8Array {
  return mq.RequestFrame.encode(frame).finish();
}

export function encodeResponse(frame: ResponseFrame): Uint8Array {
  return mq.ResponseFrame.encode(frame).finish();
}

/** A reader that stops a decode once it has read more than `budget` values (fields, and items of packed lists). */
class BoundedReader extends $protobuf.BufferReader {
  private values = 0;

  constructor(
    buf: Buffer,
    private readonly budget: number,
  ) {
    super(buf);
  }

  private count(n: number): void {
    this.values += n;
    if (this.values > this.budget) throw new ValueBudgetExceeded(this.budget);
  }

  override tag(): number {
    this.count(1);
    return super.tag();
  }

  /** A packed list, item by item: each item counts (protobufjs's own reads the whole list at once). */
  private packed(readOne: () => number, array: number[] = []): number[] {
    const end = this.uint32() + this.pos;
    const len = this.len;
    if (end > len) throw new RangeError('index out of range');
    // Items end within the list: a varint running past it fails as past the frame's end.
    this.len = end;
    while (this.pos < end) {
      this.count(1);
      array.push(readOne.call(this));
    }
    this.len = len;
    return array;
  }

  override uint32s(array?: number[]): number[] {
    return this.packed(this.uint32, array);
  }

  override int32s(array?: number[]): number[] {
    return this.packed(this.int32, array);
  }

  override sint32s(array?: number[]): number[] {
    return this.packed(this.sint32, array);
  }

  override int64s(array?: number[]): number[] {
    return this.packed(this.int64 as unknown as () => number, array);
  }
}

class ValueBudgetExceeded extends Error {
  constructor(readonly budget: number) {
    super(`the frame holds more than ${budget} values (fields and list items); split the request`);
  }
}

/**
 * Decodes a request frame; throws INVALID_REQUEST when it does not decode.
 * A well-formed frame with an int64 beyond +-(2^53-1) (offsets, producer ids
 * and timestamps are JavaScript numbers) is refused here, once for every API,
 * never rounded: that error carries the frame's `correlationId` so it can be
 * answered on the open connection. With `maxValues`, a frame holding more
 * values than that (fields and list items: what decoding costs, time and
 * memory, grows with) is refused the same way once the decode has read that
 * many, so a 16 MB frame of tiny list items costs no more than the budget.
 */
export function decodeRequest(data: Uint8Array, maxValues?: number): mq.RequestFrame {
  // The produce frame, every produce request's, by hand (produce-request.ts); anything unusual the generic way.
  const produce = decodeProduceRequestFrame(data, maxValues);
  if (produce) return produce;
  try {
    if (maxValues === undefined) return mq.RequestFrame.decode(data);
    const buf = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    return mq.RequestFrame.decode(new BoundedReader(buf, maxValues));
  } catch (cause) {
    if ((cause as { int64OutOfRange?: boolean }).int64OutOfRange || cause instanceof ValueBudgetExceeded) {
      const correlationId = peekCorrelationId(data);
      throw new MqError('INVALID_REQUEST', `request refused: ${(cause as Error).message}`, { cause, correlationId });
    }
    throw new MqError('INVALID_REQUEST', `frame does not decode: ${(cause as Error).message}`, { cause });
  }
}

/** The correlation id (field 1) of a frame whose top level is well formed, read without decoding its body. */
function peekCorrelationId(data: Uint8Array): number | undefined {
  try {
    const reader = $protobuf.Reader.create(data);
    while (reader.pos < reader.len) {
      const tag = reader.uint32();
      if (tag === 0x08) return reader.uint32();
      reader.skipType(tag & 7);
    }
  } catch {
    // Not readable: the caller closes the connection instead.
  }
  return undefined;
}

export function decodeResponse(data: Uint8Array): mq.ResponseFrame {
  try {
    return mq.ResponseFrame.decode(data);
  } catch (cause) {
    throw new MqError('CORRUPT_MESSAGE', `response frame does not decode: ${(cause as Error).message}`, { cause });
  }
}

/** Special timestamps for ListOffsets. */
export const LATEST_TIMESTAMP = -1;
export const EARLIEST_TIMESTAMP = -2;
export const LOG_END_TIMESTAMP = -3;
