/** Turning any thrown value into a wire error code and message. */
import { isMqError, MqError, errorNumber, type ErrorCode } from '@mq/protocol/errors';

export interface WireError {
  errorCode: number;
  errorMessage: string;
}

/** An MqError as is; anything else becomes UNKNOWN (and should be logged as a bug). */
export function toMqError(err: unknown): MqError {
  if (isMqError(err)) return err as MqError;
  // An AbortSignal's default reason: the request was abandoned (its client went away), not an internal error.
  // (A DOMException, not always an `instanceof Error` of this realm: recognised by name.)
  if (typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'AbortError') {
    return new MqError('ABORTED', `abandoned: ${String((err as { message?: unknown }).message)}`, { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new MqError('UNKNOWN', `internal error: ${message}`, { cause: err });
}

/**
 * The level a refused request's log line deserves: error for what an
 * operator must look at (an internal error, a failing disk), debug when
 * nobody waits for the answer any more (its connection closed), warn else.
 */
export function refusalLevel(e: MqError): 'error' | 'warn' | 'debug' {
  if (e.code === 'UNKNOWN' || e.code === 'STORAGE_ERROR') return 'error';
  if (e.code === 'CONNECTION_CLOSED' || e.code === 'ABORTED') return 'debug';
  return 'warn';
}

export function wireError(err: unknown): WireError {
  const e = toMqError(err);
  return { errorCode: errorNumber(e.code), errorMessage: e.message };
}

export function codeNumber(code: ErrorCode): number {
  return errorNumber(code);
}
