export {
  ATTR_COMPRESSION_MASK,
  ATTR_CONTROL,
  ATTR_LOG_APPEND_TIME,
  ATTR_TRANSACTIONAL,
  HEADER_SIZE,
  LOG_OVERHEAD,
  MAGIC,
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
export { COMPRESSION_CODECS, compress, decompress } from './compression.js';
export { VarintReader, varintSize, writeVarint } from './varint.js';

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
