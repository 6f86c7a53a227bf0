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
  readInt64,
  setBaseOffset,
  setPartitionLeaderEpoch,
  timestampTypeOf,
  validateBatch,
  writeInt64,
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
export { VarintReader, uvarintSize, varintAt, varintEnd, varintSize, writeUvarint, writeVarint } from './varint.js';

export type { BatchHeader, BatchSpan, TimestampType, ValidateOptions } from './header.js';
export type {
  Bytes,
  DecodeOptions,
  DecodedBatch,
  DecodedRecord,
  EncodeBatchOptions,
  RecordHeader,
  RecordHeaderInput,
  RecordInput,
} from './records.js';
export type { CompressionCodec } from './compression.js';
