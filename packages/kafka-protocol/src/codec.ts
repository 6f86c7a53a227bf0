/**
 * Requests and responses as whole frames: the request header (v1, or v2
 * with tagged fields for a flexible API version), the response header (v0,
 * or v1 for a flexible version; ApiVersions always answers with v0 so that
 * any client can read its answer) and the body, through the generated codec.
 */
import { APIS, ApiVersionsApi, type ApiDef, type Input } from './gen/messages.js';
import { MalformedKafkaError, Reader } from './reader.js';
import { Writer } from './writer.js';

export const API_BY_KEY: ReadonlyMap<number, ApiDef<unknown, unknown>> = new Map(APIS.map((a) => [a.key, a]));

/** Whether `version` of `api` uses flexible encoding (compact types, tagged fields). */
export function isFlexible(api: ApiDef<unknown, unknown>, version: number): boolean {
  return version >= api.flexibleFrom;
}

function responseHeaderFlexible(api: ApiDef<unknown, unknown>, version: number): boolean {
  return api.key !== ApiVersionsApi.key && isFlexible(api, version);
}

export interface RequestHeader {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
}

/** The fixed start of a request header (key, version, correlation id, client id), same in v1 and v2. */
export function readRequestHeader(r: Reader): RequestHeader {
  const apiKey = r.int16();
  const apiVersion = r.int16();
  const correlationId = r.int32();
  const clientId = r.nullableString(false);
  return { apiKey, apiVersion, correlationId, clientId };
}

export interface DecodedRequest<Req = unknown> {
  header: RequestHeader;
  api: ApiDef<Req, unknown>;
  body: Req;
}

/**
 * A request frame of an API and version mq serves. The header is read first;
 * `unsupported(header)` is called (and undefined returned) for an unknown
 * API key or a version outside the served range. A body that does not
 * decode, or bytes left over after it, throw MalformedKafkaError.
 */
export function decodeRequest(frame: Buffer, unsupported: (header: RequestHeader) => void): DecodedRequest | undefined {
  const r = new Reader(frame);
  const header = readRequestHeader(r);
  const api = API_BY_KEY.get(header.apiKey);
  if (!api || header.apiVersion < api.minVersion || header.apiVersion > api.maxVersion) {
    unsupported(header);
    return undefined;
  }
  if (isFlexible(api, header.apiVersion)) r.taggedFields(() => false);
  const body = api.readRequest(r, header.apiVersion);
  if (r.remaining !== 0) throw new MalformedKafkaError(`${api.name} v${header.apiVersion} request has ${r.remaining} bytes after its body`);
  return { header, api, body };
}

/** A request frame with its size prefix, as a client writes it. */
export function encodeRequest<Req>(api: ApiDef<Req, unknown>, version: number, correlationId: number, clientId: string | null, body: Input<Req>): Buffer {
  const w = new Writer();
  w.int32(0);
  w.int16(api.key);
  w.int16(version);
  w.int32(correlationId);
  w.nullableString(clientId, false);
  if (isFlexible(api as ApiDef<unknown, unknown>, version)) w.uvarint(0);
  api.writeRequest(w, version, body);
  return sized(w.finish());
}

/** A response frame with its size prefix, as a list of buffers (record batches by reference, not copied). */
export function encodeResponse<Res>(api: ApiDef<unknown, Res>, version: number, correlationId: number, body: Input<Res>): Buffer[] {
  const w = new Writer();
  w.int32(0);
  w.int32(correlationId);
  if (responseHeaderFlexible(api as ApiDef<unknown, unknown>, version)) w.uvarint(0);
  api.writeResponse(w, version, body);
  const parts = w.finish();
  let total = 0;
  for (const p of parts) total += p.length;
  parts[0]!.writeInt32BE(total - 4, 0);
  return parts;
}

/** A response frame (without its size prefix), as a client reads it. */
export function decodeResponse<Res>(api: ApiDef<unknown, Res>, version: number, frame: Buffer): { correlationId: number; body: Res } {
  const r = new Reader(frame);
  const correlationId = r.int32();
  if (responseHeaderFlexible(api as ApiDef<unknown, unknown>, version)) r.taggedFields(() => false);
  const body = api.readResponse(r, version);
  return { correlationId, body };
}

function sized(parts: Buffer[]): Buffer {
  const out = Buffer.concat(parts);
  out.writeInt32BE(out.length - 4, 0);
  return out;
}
