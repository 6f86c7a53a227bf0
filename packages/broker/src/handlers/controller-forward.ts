/**
 * ControllerForward (inter-broker listener only): a metadata command from
 * another broker for the active controller, or a broker-only process's
 * MetadataFetch (which is also its heartbeat).
 */
import type { mq } from '@mq/protocol/wire';
import { MqError, errorNumber, isMqError } from '@mq/protocol/errors';
import { decodeCommand, type CommandResult } from '../controller/commands.js';
import type { Controller } from '../controller/controller.js';
import type { RequestContext } from '../context.js';
import { toMqError } from '../errors.js';
import type { HandlerDeps } from './deps.js';
import type { Handler } from './types.js';

const EMPTY = Buffer.alloc(0);

export function controllerForward(d: HandlerDeps): Handler<'controllerForward'> {
  return async (req, ctx) => {
    if (req.metadataFetch) return metadataFetch(d, req.metadataFetch, ctx);
    let result: CommandResult;
    try {
      const cmd = decodeCommand(req.command ?? new Uint8Array());
      result = await d.controller.handleForward(cmd, Math.min(req.timeoutMs || 10_000, 60_000));
    } catch (err) {
      const e = toMqError(err);
      if (!isMqError(err) || (e.code !== 'NOT_LEADER' && e.code !== 'PROPOSAL_DROPPED')) ctx.logger.warn({ from: req.brokerId, code: e.code, err: e.message }, 'controller forward failed');
      result = { ok: false, code: e.code === 'NOT_LEADER' ? 'NOT_CONTROLLER' : e.code, message: e.message };
    }
    if (result.ok) return { errorCode: 0, errorMessage: '', result: Buffer.from(JSON.stringify(result.value ?? null)), controllerId: d.controller.controllerId };
    let code = 0;
    try {
      code = errorNumber(result.code as never);
    } catch {
      code = errorNumber('UNKNOWN');
    }
    return { errorCode: code, errorMessage: result.message, result: EMPTY, controllerId: d.controller.controllerId };
  };
}

/** A broker-only process fetching the metadata log (and so heartbeating) from the active controller. */
async function metadataFetch(d: HandlerDeps, f: mq.IMetadataFetchRequest, ctx: RequestContext): Promise<mq.IControllerForwardResponse> {
  return metadataFetchAnswer(d.controller, f, ctx.connection.signal, (e) => {
    if (e.code !== 'NOT_CONTROLLER') ctx.logger.warn({ from: f.brokerId, code: e.code, err: e.message }, 'metadata fetch failed');
  });
}

/** The ControllerForward answer to a MetadataFetch (errors become error codes, NOT_CONTROLLER with the active controller's id). */
export async function metadataFetchAnswer(controller: Controller, f: mq.IMetadataFetchRequest, signal?: AbortSignal, onError?: (e: MqError) => void): Promise<mq.IControllerForwardResponse> {
  const d = { controller };
  try {
    const r = await d.controller.handleMetadataFetch(
      { brokerId: f.brokerId ?? -1, incarnation: f.incarnation ?? '', fetchIndex: Number(f.fetchIndex ?? 0), maxWaitMs: f.maxWaitMs ?? 0, maxEntries: f.maxEntries || 1000 },
      signal,
    );
    const answer: mq.IMetadataFetchResponse =
      r.kind === 'snapshot'
        ? { entries: [], snapshot: r.data, snapshotIndex: r.index, committedIndex: r.applied }
        : { entries: r.entries.map((e) => ({ index: e.index, data: e.data })), snapshot: EMPTY, snapshotIndex: 0, committedIndex: r.applied };
    return { errorCode: 0, errorMessage: '', result: EMPTY, controllerId: d.controller.controllerId, metadataFetch: answer };
  } catch (err) {
    const e = toMqError(err);
    onError?.(e);
    return { errorCode: errorNumber(e.code), errorMessage: e.message, result: EMPTY, controllerId: d.controller.controllerId };
  }
}
