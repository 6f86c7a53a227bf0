/**
 * Encoding and decoding of whole frames, and the map between a frame's body
 * field and its ApiKey. One WebSocket message is one frame.
 */
import { MqError } from '../errors.js';
import { mq } from '../gen/mq.js';

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
  produce: mq.ApiKey.PRODUCE,
  fetch: mq.ApiKey.FETCH,
  listOffsets: mq.ApiKey.LIST_OFFSETS,
  offsetForLeaderEpoch: mq.ApiKey.OFFSET_FOR_LEADER_EPOCH,
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
  controllerForward: mq.ApiKey.CONTROLLER_FORWARD,
};

export function encodeRequest(frame: RequestFrame): Uint8Array {
  return mq.RequestFrame.encode(frame).finish();
}

export function encodeResponse(frame: ResponseFrame): Uint8Array {
  return mq.ResponseFrame.encode(frame).finish();
}

/** Decodes a request frame; throws INVALID_REQUEST (with no correlation id known) when it does not decode. */
export function decodeRequest(data: Uint8Array): mq.RequestFrame {
  try {
    return mq.RequestFrame.decode(data);
  } catch (cause) {
    throw new MqError('INVALID_REQUEST', `frame does not decode: ${(cause as Error).message}`, { cause });
  }
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
