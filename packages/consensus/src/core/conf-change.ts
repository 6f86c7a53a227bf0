import { MqError } from '@mq/protocol/errors';
import { ConfChangeOp, type ConfChange, type ConfState } from './types.js';

/** Encoding of a ConfChange entry: op (u8), node id (u64 BE), context bytes. */
export function encodeConfChange(cc: ConfChange): Uint8Array {
  const ctx = cc.context ?? new Uint8Array(0);
  const buf = Buffer.alloc(9 + ctx.length);
  buf.writeUInt8(cc.op, 0);
  buf.writeBigUInt64BE(BigInt(cc.nodeId), 1);
  buf.set(ctx, 9);
  return buf;
}

export function decodeConfChange(data: Uint8Array): ConfChange {
  if (data.length < 9) throw new MqError('CORRUPT_MESSAGE', `conf change entry of ${data.length} bytes is truncated (need 9)`);
  const buf = Buffer.from(data.buffer, data.byteOffset, data.length);
  const op = buf.readUInt8(0);
  if (op !== ConfChangeOp.AddVoter && op !== ConfChangeOp.AddLearner && op !== ConfChangeOp.RemoveNode) {
    throw new MqError('CORRUPT_MESSAGE', `conf change op ${op} is unknown`);
  }
  const nodeId = Number(buf.readBigUInt64BE(1));
  return { op: op as ConfChangeOp, nodeId, context: buf.subarray(9) };
}

/** The membership after applying `cc` (a new object; `cs` is not changed). */
export function applyToConfState(cs: ConfState, cc: ConfChange): ConfState {
  const voters = cs.voters.filter((v) => v !== cc.nodeId);
  const learners = cs.learners.filter((v) => v !== cc.nodeId);
  if (cc.op === ConfChangeOp.AddVoter) voters.push(cc.nodeId);
  else if (cc.op === ConfChangeOp.AddLearner) {
    if (cs.voters.includes(cc.nodeId)) voters.push(cc.nodeId); // no demotion in one step
    else learners.push(cc.nodeId);
  }
  voters.sort((a, b) => a - b);
  learners.sort((a, b) => a - b);
  return { voters, learners };
}
