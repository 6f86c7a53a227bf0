/**
 * The retry loop of `Controller.submit`, shared by voters and observers:
 * send the command to wherever the active controller is, retry (with
 * backoff) while there is none or it moved, and turn a refusal into the
 * MqError it carries.
 */
import { MqError, isMqError, type ErrorCode } from '@mq/protocol/errors';
import { sleep, type Clock, type Timers } from '@mq/protocol/components';
import type { CommandResult, MetadataCommand } from './commands.js';

/** Answers and errors that mean "try again, maybe elsewhere". */
export const RETRIABLE_FORWARD: ReadonlySet<string> = new Set([
  'NOT_CONTROLLER',
  'NOT_LEADER',
  'PROPOSAL_DROPPED',
  'CONNECTION_ERROR',
  'CONNECTION_CLOSED',
  'REQUEST_TIMED_OUT',
  'BROKER_NOT_AVAILABLE',
  'BUFFER_FULL',
]);

export interface SubmitOptions {
  timeoutMs: number;
  clock: Clock;
  timers: Timers;
  closed: () => boolean;
}

/** Sends `command` with `send(msLeft)` until it is answered; a retriable error or answer is retried until the deadline. */
export async function submitWithRetry(command: MetadataCommand, send: (leftMs: number) => Promise<CommandResult> | CommandResult, o: SubmitOptions): Promise<unknown> {
  const deadline = o.clock() + o.timeoutMs;
  let delay = 50;
  let last: unknown;
  while (!o.closed()) {
    const left = deadline - o.clock();
    if (left <= 0) break;
    let result: CommandResult | undefined;
    try {
      result = await send(left);
    } catch (err) {
      last = err;
      if (!isMqError(err) || !RETRIABLE_FORWARD.has(err.code)) throw err;
    }
    if (result) {
      if (result.ok) return result.value;
      if (!RETRIABLE_FORWARD.has(result.code)) throw new MqError(result.code as ErrorCode, result.message);
      last = new MqError(result.code as ErrorCode, result.message);
    }
    const wait = Math.min(delay, Math.max(1, deadline - o.clock()));
    await sleep(o.timers, wait);
    delay = Math.min(delay * 2, 1000);
  }
  if (o.closed()) throw new MqError('CLOSED', 'the controller is closed');
  throw new MqError('REQUEST_TIMED_OUT', `the controller did not commit ${command.type} within ${o.timeoutMs} ms: ${(last as Error)?.message ?? ''}`, { cause: last });
}
