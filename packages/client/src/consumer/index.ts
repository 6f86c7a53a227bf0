export { Consumer } from './consumer.js';
export { parseConsumerOptions } from './options.js';
export type { ConsumerPending, PollOptions } from './consumer.js';
export type { AutoOffsetReset, ConsumerOptions, IsolationLevel, ParsedConsumerOptions } from './options.js';
export type { ConsumerRecord, RecordHeader } from './record-decoder.js';
export type { TopicPartition, TopicPartitionOffset } from './fetcher.js';
