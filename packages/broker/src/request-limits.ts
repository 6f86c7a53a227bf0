/**
 * Limits on the ids, names and durations a client sends, checked where a request comes
 * in (the WebSocket connection for the frame's client id; the group
 * coordinator, which every door calls, for group, member and instance ids and
 * protocol names), so nothing stored later (the offsets schema's int16-length
 * strings) can fail on them. Topic names have their own rule (topics/topic-name.ts).
 */
import { MqError, type ErrorCode } from '@mq/protocol/errors';

/** A protocol string, as in Kafka (an int16 length) and in the offsets schema: at most 32,767 UTF-8 bytes. */
export const MAX_PROTOCOL_STRING_BYTES = 0x7fff;
/** Bytes a member id adds to the client id it is built from (`-` and a UUID). */
export const MEMBER_ID_SUFFIX_BYTES = 37;
/** A frame's client id becomes part of member ids, which must still be protocol strings. */
export const MAX_CLIENT_ID_BYTES = MAX_PROTOCOL_STRING_BYTES - MEMBER_ID_SUFFIX_BYTES;
/** Kafka's rule for group.instance.id: up to 249 characters of [a-zA-Z0-9._-]. */
export const MAX_GROUP_INSTANCE_ID_LENGTH = 249;
const LEGAL_INSTANCE_ID = /^[a-zA-Z0-9._-]+$/;

/** Characters of a client's id or name quoted in an error message; the rest is elided (messages can repeat per entry). */
export const MAX_QUOTED_CHARS = 80;

/** A client-supplied string as an error message shows it: at most MAX_QUOTED_CHARS characters, then how long it was. */
export function shown(value: string): string {
  return value.length <= MAX_QUOTED_CHARS ? value : `${value.slice(0, MAX_QUOTED_CHARS)}…(${value.length} characters)`;
}

/** What is wrong with a value, as the typed error to answer. */
export interface Problem {
  code: ErrorCode;
  message: string;
}

function tooLong(what: string, value: string, maxBytes: number, code: ErrorCode): Problem | undefined {
  // UTF-8 takes at most 3 bytes per UTF-16 unit: most values need no count.
  if (value.length * 3 <= maxBytes) return undefined;
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes <= maxBytes) return undefined;
  return { code, message: `${what} is ${bytes} UTF-8 bytes; the limit is ${maxBytes}` };
}

export function groupIdProblem(groupId: string): Problem | undefined {
  if (groupId === '') return { code: 'INVALID_GROUP_ID', message: 'group id must not be empty' };
  return tooLong('group id', groupId, MAX_PROTOCOL_STRING_BYTES, 'INVALID_GROUP_ID');
}

export function clientIdProblem(clientId: string): Problem | undefined {
  return tooLong('client id', clientId, MAX_CLIENT_ID_BYTES, 'INVALID_REQUEST');
}

export function memberIdProblem(memberId: string): Problem | undefined {
  return tooLong('member id', memberId, MAX_PROTOCOL_STRING_BYTES, 'UNKNOWN_MEMBER_ID');
}

/** An absent instance id (null or '') is a dynamic member and always valid. */
export function instanceIdProblem(instanceId: string | null | undefined): Problem | undefined {
  if (!instanceId) return undefined;
  if (instanceId.length > MAX_GROUP_INSTANCE_ID_LENGTH) {
    return { code: 'INVALID_REQUEST', message: `group instance id is ${instanceId.length} characters; the limit is ${MAX_GROUP_INSTANCE_ID_LENGTH}` };
  }
  if (!LEGAL_INSTANCE_ID.test(instanceId)) {
    return { code: 'INVALID_REQUEST', message: `group instance id "${instanceId.slice(0, 80)}" has characters other than ASCII letters, digits, '.', '_' and '-'` };
  }
  return undefined;
}

/** A protocol type or protocol name of a group (stored in the offsets schema). */
export function protocolNameProblem(what: string, name: string): Problem | undefined {
  return tooLong(what, name, MAX_PROTOCOL_STRING_BYTES, 'INCONSISTENT_GROUP_PROTOCOL');
}

/** Node timers hold at most 2^31-1 ms (a longer one fires after 1 ms); Kafka's durations are int32 for the same range. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A duration from a request: an integer in [min, max] ms (max at most {@link MAX_TIMER_MS}). */
export function durationProblem(what: string, ms: number, min: number, max: number, code: ErrorCode = 'INVALID_REQUEST'): Problem | undefined {
  const hi = Math.min(max, MAX_TIMER_MS);
  if (Number.isSafeInteger(ms) && ms >= min && ms <= hi) return undefined;
  return { code, message: `${what} ${ms} ms is outside [${min}, ${hi}] ms` };
}

/** How long an admin request (CreateTopics, DeleteTopics, ...) may take when it names no timeout (Kafka's default.api.timeout.ms is 60 s; its request timeout 30 s). */
export const DEFAULT_ADMIN_TIMEOUT_MS = 30_000;

export interface RequestDeadline {
  /** Milliseconds left (at least 1). */
  remaining(): number;
  /** Milliseconds left; throws REQUEST_TIMED_OUT once none are (for an entry not started yet). */
  check(): number;
}

/**
 * The deadline of a request that names `timeoutMs` (0: `fallbackMs`), so
 * that entries not reached in time are answered REQUEST_TIMED_OUT rather
 * than keeping the whole request unanswered. A timeout past 2^31-1 ms is
 * INVALID_REQUEST.
 */
export function requestDeadline(now: () => number, timeoutMs: number, fallbackMs = DEFAULT_ADMIN_TIMEOUT_MS): RequestDeadline {
  refuse(timeoutMs ? durationProblem('request timeout', timeoutMs, 1, MAX_TIMER_MS) : undefined);
  const budget = timeoutMs || fallbackMs;
  const deadline = now() + budget;
  const remaining = () => Math.max(1, deadline - now());
  return {
    remaining,
    check() {
      if (deadline - now() <= 0) throw new MqError('REQUEST_TIMED_OUT', `not reached within the request's timeout of ${budget} ms; send it again`);
      return remaining();
    },
  };
}

/** The first problem of several checks, if any. */
export function firstProblem(...problems: Array<Problem | undefined>): Problem | undefined {
  return problems.find((p) => p !== undefined);
}

/** Throws the problem as an MqError (for doors that answer by throwing, such as HTTP routes). */
export function refuse(problem: Problem | undefined): void {
  if (problem) throw new MqError(problem.code, problem.message);
}
