/**
 * Turns any failure into the one line a user sees: what went wrong and what
 * to do. Stack traces only with MQ_DEBUG=1.
 */
import { isMqError } from '@mq/protocol/errors';
import { validateTopicName } from '@mq/protocol/topic-name';

/** Exit code of a usage mistake (bad flag or value). */
export const EXIT_USAGE = 2;
/** Exit code of a failed command (broker not running, unknown topic, ...). */
export const EXIT_FAILURE = 1;

/** A mistake in how the command was called (exit code 2). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A command that failed for a reason outside the command line (a port in use, a process that died): exit 1, its message as is. */
export class CommandError extends Error {
  override readonly name = 'CommandError';
}

export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

/**
 * Client option names in client messages, as the CLI flags that set them: a CLI user is told
 * `--max-request-bytes`, not `maxRequestBytes`. Options without a flag are named as the setting.
 */
const CLIENT_OPTION_FLAGS: ReadonlyArray<[RegExp, string]> = [
  [/\braise maxRequestBytes\b/g, 'raise --max-request-bytes'],
  [/\braise bufferMemory\b/g, 'raise --buffer-memory'],
  [/\buse acks: 'all', or idempotent: false\b/g, 'use --acks all, or leave out --idempotent'],
  [/\buse acks: 'all'/g, 'use --acks all'],
];

export function cliWording(message: string): string {
  let m = message;
  for (const [re, flag] of CLIENT_OPTION_FLAGS) m = m.replace(re, flag);
  return m;
}

export function formatError(err: unknown): string {
  if (err instanceof UsageError || err instanceof CommandError) return `mq: ${oneLine(err.message)}`;
  if (isMqError(err)) return `mq: ${oneLine(cliWording(err.message))}`;
  if (err instanceof Error) return `mq: unexpected error: ${oneLine(err.message)} (set MQ_DEBUG=1 for details)`;
  return `mq: unexpected error: ${oneLine(String(err))}`;
}

/**
 * An unknown topic whose name could never exist gets the name rule's reason instead of a
 * "create it with: mq topic create NAME" that would only fail. The rule is the one topic-name
 * rule in @mq/protocol that the broker applies.
 */
export async function refineError(err: unknown): Promise<unknown> {
  if (!isMqError(err, 'UNKNOWN_TOPIC_OR_PARTITION') || typeof err.topic !== 'string') return err;
  try {
    validateTopicName(err.topic);
    return err;
  } catch (invalid) {
    if (!isMqError(invalid)) throw invalid;
    return new UsageError(invalid.message);
  }
}

export function exitCodeOf(err: unknown): number {
  if (err instanceof UsageError) return EXIT_USAGE;
  if (isMqError(err) && err.code === 'INVALID_ARGUMENT') return EXIT_USAGE;
  return EXIT_FAILURE;
}
