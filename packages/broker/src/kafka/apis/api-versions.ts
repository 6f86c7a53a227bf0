/** ApiVersions: the APIs and versions this listener serves (an unsupported ApiVersions version is answered in v0 by the connection). */
import { ApiVersionsApi, type ApiVersionsRequest, type ApiVersionsResponse } from '@mq/kafka-protocol/messages';
import type { KafkaApi } from '../types.js';

export const apiVersions: KafkaApi<ApiVersionsRequest, ApiVersionsResponse> = {
  api: ApiVersionsApi,
  needs: [],
  handle: async (_req, call) => ({ errorCode: 0, apiKeys: call.door.apiVersions, throttleTimeMs: 0 }),
  refused: (_req, code) => ({ errorCode: code, apiKeys: [] }),
};
