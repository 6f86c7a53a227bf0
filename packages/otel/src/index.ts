export { traceProducer, traceEachMessage, INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION } from './tracing.js';
export type { TracedProducer, TracingOptions } from './tracing.js';
export { headerSetter, recordGetter, headerList } from './carrier.js';
