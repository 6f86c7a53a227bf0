export { mq } from '../gen/mq.js';
export { ApiKey, SUPPORTED_API_VERSIONS, negotiateVersion } from './api-versions.js';
export {
  BODY_API,
  EARLIEST_TIMESTAMP,
  LATEST_TIMESTAMP,
  LOG_END_TIMESTAMP,
  decodeRequest,
  decodeResponse,
  encodeRequest,
  encodeResponse,
} from './frames.js';
export type { ApiVersionRange } from './api-versions.js';
export type { RequestBody, RequestFrame, ResponseFrame } from './frames.js';
