/**
 * Transaction markers: control batches (attributes transactional + control)
 * holding one control record, as Kafka writes them. The record's key is
 * int16 version (0) and int16 type (0 abort, 1 commit); its value is int16
 * version (0) and int32 coordinator epoch. Readers skip control batches; a
 * log reads the type of a marker it appends (one small uncompressed record,
 * never a producer's records).
 */
import { Buffer } from '@mq/protocol/platform';
import { MqError } from '../errors.js';
import { ATTR_COMPRESSION_MASK, HEADER_SIZE, isControl, readBatchHeader } from './header.js';
import { encodeBatchSync } from './records.js';
import { RecordSection, RecordView, scanRecord, scanned } from './reader.js';

export type ControlType = 'abort' | 'commit';

export interface MarkerInput {
  producerId: number;
  producerEpoch: number;
  committed: boolean;
  coordinatorEpoch?: number;
  /** The marker's timestamp (ms). */
  now: number;
}

/** One transaction marker batch (base offset 0: the log assigns it). */
export function encodeMarkerBatch(m: MarkerInput): Buffer {
  const key = Buffer.alloc(4);
  key.writeInt16BE(0, 0);
  key.writeInt16BE(m.committed ? 1 : 0, 2);
  const value = Buffer.alloc(6);
  value.writeInt16BE(0, 0);
  value.writeInt32BE(m.coordinatorEpoch ?? 0, 2);
  return encodeBatchSync([{ key, value }], {
    transactional: true,
    control: true,
    producerId: m.producerId,
    producerEpoch: m.producerEpoch,
    baseSequence: -1,
    now: m.now,
  });
}

/** The type of the control batch at `pos` of `buf`; throws INVALID_RECORD when it is not a well-formed marker. */
export function controlTypeOf(buf: Buffer, pos = 0): ControlType {
  const h = readBatchHeader(buf, pos);
  const bad = (why: string) => new MqError('INVALID_RECORD', `control batch at byte ${pos} is not a transaction marker: ${why}`);
  if (!isControl(h)) throw bad('the control bit is not set');
  if ((h.attributes & ATTR_COMPRESSION_MASK) !== 0) throw bad('it is compressed');
  if (h.recordCount !== 1) throw bad(`it holds ${h.recordCount} records`);
  const end = pos + h.batchLength + 12;
  let key: Buffer | null;
  try {
    scanRecord(buf, pos + HEADER_SIZE, end);
    key = new RecordView(new RecordSection(buf, h), scanned.start, 0, scanned.valuePos).key;
  } catch (err) {
    throw bad((err as Error).message);
  }
  if (!key || key.length < 4) throw bad('its key is shorter than 4 bytes');
  const type = markerKeyType(key);
  if (type === undefined) throw bad(`unknown control type ${key.readInt16BE(2)}`);
  return type;
}

/** A control record key's marker type (version int16, type int16: 0 abort, 1 commit); undefined for anything else. */
export function markerKeyType(key: Uint8Array | null | undefined): ControlType | undefined {
  if (!key || key.length < 4) return undefined;
  const type = (key[2]! << 8) | key[3]!;
  return type === 0 ? 'abort' : type === 1 ? 'commit' : undefined;
}
