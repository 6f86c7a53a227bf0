export { runProduce, driveProducers } from './workloads/produce.js';
export { runConsume, prepareTopic } from './workloads/consume.js';
export { runE2e } from './workloads/e2e.js';
export { createMemoryTarget, DEFAULT_MEMORY_MAX_RECORDS } from './targets/memory.js';
export { createMqTarget, DEFAULT_MQ_BOOTSTRAP } from './targets/mq.js';
export { BROKER_HEAP_FLAGS, startLocalBroker } from './local-broker.js';
export { LatencyRecorder, MAX_TRACKABLE_US } from './histogram.js';
export { OpenLoopSchedule } from './rate.js';
export { ProgressReporter, DEFAULT_PROGRESS_INTERVAL_MS } from './progress.js';
export { collectEnvironment } from './env.js';
export { createKeyGenerator, formatKeySpec, parseKeySpec, HOT_COLD_KEYS, HOT_SHARE } from './keys.js';
export { createPayloads, readStamp, stampValue, STAMP_BYTES } from './payload.js';
export { createPartitioner } from './target.js';
export { CURVE_PERCENTILES, MB, formatResultTable, throughput } from './result.js';
export { benchBuilder, buildBenchCommand, runBenchFromArgs, BENCH_TARGETS } from './command.js';
export { compareBuilder, compareResults, formatCompareReport, median, parseMaxDrop, parseResults, runCompareFromArgs, spread, DEFAULT_MAX_DROP } from './compare.js';
export {
  DEFAULT_ACKS,
  DEFAULT_BATCH_BYTES,
  DEFAULT_COMPRESSION,
  DEFAULT_CONSUMERS,
  DEFAULT_E2E_RATE,
  DEFAULT_E2E_SECONDS,
  DEFAULT_E2E_WINDOW,
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_LINGER_MS,
  DEFAULT_PARTITIONS,
  DEFAULT_PRODUCERS,
  DEFAULT_RECORDS,
  DEFAULT_SIZE,
  DEFAULT_WINDOW,
  parseAcks,
  parseCompression,
  parseConsumeOptions,
  parseE2eOptions,
  parseProduceOptions,
} from './options.js';

export type {
  BenchTarget,
  Compression,
  RecordHandler,
  TargetConsumer,
  TargetConsumerOptions,
  TargetProducer,
  TargetProducerOptions,
} from './target.js';
export type { BenchResult, WorkloadKind } from './result.js';
export type { BenchEnvironment } from './env.js';
export type { LatencySummary } from './histogram.js';
export type { KeySpec, KeyGenerator } from './keys.js';
export type { ProgressOptions, ProgressSnapshot } from './progress.js';
export type { WorkloadContext } from './workloads/run-context.js';
export type { MemoryTargetOptions } from './targets/memory.js';
export type { MqTargetOptions } from './targets/mq.js';
export type { LocalBroker, LocalBrokerOptions } from './local-broker.js';
export type { BenchArgs, BenchCommandOptions } from './command.js';
export type { CompareArgs, CompareOptions, CompareReport, MetricComparison, ScenarioComparison } from './compare.js';
export type {
  CommonBenchOptions,
  ConsumeBenchOptions,
  E2eBenchOptions,
  ParsedConsumeOptions,
  ParsedE2eOptions,
  ParsedProduceOptions,
  ProduceBenchOptions,
} from './options.js';
