/**
 * Turns any failure into the one line a user sees: what went wrong and what
 * to do. Stack traces only with MQ_DEBUG=1.
 */
import { isMqError } from '@mq/protocol/errors';

/** Exit code of a usage mistake (bad flag or value). */
export const EXIT_USAGE = 2;
/** Exit code of a failed command (broker not running, unknown topic, ...). */
export const EXIT_FAILURE = 1;

/** A mistake in how the command was called (exit code 2). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

export function formatError(err: unknown): string {
  if (err instanceof UsageError) return `mq: ${oneLine(err.message)}`;
  if (isMqError(err)) return `mq: ${oneLine(err.message)}`;
  if (err instanceof Error) return `mq: unexpected error: ${oneLine(err.message)} (set MQ_DEBUG=1 for details)`;
  return `mq: unexpected error: ${oneLine(String(err))}`;
}

export function exitCodeOf(err: unknown): number {
  if (err instanceof UsageError) return EXIT_USAGE;
  if (isMqError(err) && (err.code === 'INVALID_ARGUMENT')) return EXIT_USAGE;
  return EXIT_FAILURE;
}
