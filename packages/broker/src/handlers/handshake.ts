/** Handshake: the broker's identity, the API versions it serves and its frame limit. */
import type { Handler } from './types.js';

export const handshake: Handler<'handshake'> = async (_req, ctx) => {
  const b = ctx.broker;
  return {
    brokerId: b.brokerId,
    clusterId: b.clusterId,
    apiVersions: b.apiVersions.map((r) => ({ api: r.api, minVersion: r.minVersion, maxVersion: r.maxVersion })),
    maxFrameBytes: b.maxFrameBytes,
    brokerSoftwareVersion: b.softwareVersion,
  };
};
