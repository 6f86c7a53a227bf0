/** mq.proto loaded by reflection, so mutations can walk any request's fields by type. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const PROTO = path.join(REPO_ROOT, 'packages', 'protocol', 'proto', 'mq.proto');

const root = protobuf.loadSync(PROTO);
root.resolveAll();
export const RequestFrame = root.lookupType('mq.RequestFrame');

/** Decodes a recorded frame into a plain object whose int64s are {low, high} pairs (exact at any value). */
export function decodeFrame(bytes) {
  return RequestFrame.decode(bytes);
}

export function encodeFrame(message) {
  return Buffer.from(RequestFrame.encode(message).finish());
}

/** The name of the oneof body a frame carries (`produce`, `fetch`, ...). */
export function bodyOf(message) {
  return RequestFrame.oneofs.body.oneof.find((f) => message[f] != null);
}
