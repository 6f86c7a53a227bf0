export {
  ATTR_COMPRESSION_MASK,
  ATTR_CONTROL,
  ATTR_LOG_APPEND_TIME,
  ATTR_TRANSACTIONAL,
  HEADER_SIZE,
  LOG_OVERHEAD,
  MAGIC,
  OFF_ATTRIBUTES,
  OFF_BASE_SEQUENCE,
  OFF_BASE_TIMESTAMP,
  OFF_BATCH_LENGTH,
  OFF_CRC,
  OFF_LAST_OFFSET_DELTA,
  OFF_LEADER_EPOCH,
  OFF_MAGIC,
  OFF_MAX_TIMESTAMP,
  OFF_PRODUCER_EPOCH,
  OFF_PRODUCER_ID,
  OFF_RECORD_COUNT,
  batchSize,
  compressionOf,
  computeBatchCrc,
  isControl,
  isTransactional,
  iterateBatches,
  lastOffset,
  readBatchHeader,
  setBaseOffset,
  setPartitionLeaderEpoch,
  timestampTypeOf,
  validateBatch,
} from './header.js';
export { decodeBatch, decodeBatchSync, encodeBatch, encodeBatchSync } from './records.js';
export { controlTypeOf, encodeMarkerBatch, markerKeyType } from './control.js';
export type { ControlType, MarkerInput } from './control.js';
export { COMPRESSION_CODECS, DEFAULT_MAX_DECOMPRESSED_BYTES, compress, decompress, decompressSync } from './compression.js';
export {
  MIN_RECORD_BYTES,
  checkProducedHeader,
  checkRecordsFraming,
  isCompressed,
  verifyCompressedRecords,
  verifyUncompressedRecords,
} from './verify.js';
export { readInt64, uvarintAt, uvarintSize, varintAt, varintEnd, varintSize, writeInt64, writeUvarint, writeVarint } from './varint.js';
export { RecordBatchBuilder, measureRecord, measuredSize } from './builder.js';
export { RecordSection, RecordView, recordsSection, recordsSectionSync, scanRecord, scanned } from './reader.js';

export type { BatchHeader, BatchSpan, TimestampType, ValidateOptions } from './header.js';
export type { DecodeOptions, DecodedBatch, DecodedRecord, EncodeBatchOptions, RecordInput } from './records.js';
export type { Bytes, HeadersInput, RecordFields, RecordHeaderInput } from './builder.js';
export type { RecordHeader } from './reader.js';
export type { CompressionCodec } from './compression.js';
