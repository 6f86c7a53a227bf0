export { Producer } from './producer.js';
export { parseProducerOptions, parseCompression } from './options.js';
export type { FlushOptions, ProducerStats } from './producer.js';
export type { ParsedProducerOptions, ProducerOptions } from './options.js';
export type { ProducerRecord, HeadersInput, Bytes } from './batch-builder.js';
export type { RecordMetadata } from './record-sink.js';
export type { ConsumerGroupMetadata, TransactionOffset, TransactionState } from './transactions.js';
