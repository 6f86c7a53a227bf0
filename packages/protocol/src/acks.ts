/**
 * The produce acknowledgement level, declared once for every package: the
 * client, the CLI, the bench, the broker's front doors and the replication
 * layer all read it through {@link parseAcks}.
 */
import { MqError, type ErrorCode } from './errors.js';

/**
 * How many replicas must hold a produced batch before the leader answers, as
 * on the wire: 0 no answer at all, 1 the leader, -1 every in-sync replica
 * ("all").
 */
export type Acks = 0 | 1 | -1;

/** What a user may write: a wire value, 'all', or their string forms (a flag, a query parameter). */
export type AcksInput = Acks | 'all' | '0' | '1' | '-1';

/**
 * Reads acks from code, a command-line flag, a query string or the wire:
 * 0, 1, -1 or 'all' (numbers or strings; -1 is all). Anything else throws an MqError
 * with `code`: INVALID_REQUIRED_ACKS (the wire's answer, the default) or, for
 * a user's configuration, INVALID_ARGUMENT.
 */
export function parseAcks(value: unknown, code: ErrorCode = 'INVALID_REQUIRED_ACKS'): Acks {
  switch (value) {
    case 0:
    case '0':
      return 0;
    case 1:
    case '1':
      return 1;
    case -1:
    case '-1':
    case 'all':
      return -1;
    default:
      throw new MqError(code, `acks must be 0, 1 or all, got ${typeof value === 'string' ? JSON.stringify(value) : String(value)}`);
  }
}
