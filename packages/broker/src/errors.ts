/** Turning any thrown value into a wire error code and message. */
import { isMqError, MqError, errorNumber, type ErrorCode } from '@mq/protocol/errors';

export interface WireError {
  errorCode: number;
  errorMessage: string;
}

/** An MqError as is; anything else becomes UNKNOWN (and should be logged as a bug). */
export function toMqError(err: unknown): MqError {
  if (isMqError(err)) return err as MqError;
  const message = err instanceof Error ? err.message : String(err);
  return new MqError('UNKNOWN', `internal error: ${message}`, { cause: err });
}

export function wireError(err: unknown): WireError {
  const e = toMqError(err);
  return { errorCode: errorNumber(e.code), errorMessage: e.message };
}

export function codeNumber(code: ErrorCode): number {
  return errorNumber(code);
}
