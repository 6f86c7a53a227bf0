export { ERROR_CODES, MqError, errorCodeFromNumber, errorNumber, isMqError, isRetriable } from './errors.js';
export type { ErrorCode, MqErrorOptions } from './errors.js';
export * as batch from './batch/index.js';
export * as wire from './wire/index.js';
