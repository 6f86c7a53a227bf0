/** Kafka's topic-name rules: [a-zA-Z0-9._-], 1 to 249 characters, not "." or "..". */
import { MqError } from './errors.js';

export const MAX_TOPIC_NAME_LENGTH = 249;
const LEGAL = /^[a-zA-Z0-9._-]+$/;

export function validateTopicName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new MqError('INVALID_TOPIC', 'topic name is empty');
  }
  if (name === '.' || name === '..') {
    throw new MqError('INVALID_TOPIC', `topic name "${name}" is not allowed`);
  }
  if (name.length > MAX_TOPIC_NAME_LENGTH) {
    throw new MqError('INVALID_TOPIC', `topic name is ${name.length} characters, the limit is ${MAX_TOPIC_NAME_LENGTH}`);
  }
  if (!LEGAL.test(name)) {
    throw new MqError(
      'INVALID_TOPIC',
      `topic name "${name.slice(0, 80)}" has characters other than ASCII letters, digits, '.', '_' and '-'`,
    );
  }
  return name;
}

/** '.' and '_' collide in metric names (as in Kafka): "a.b" and "a_b" map to the same one. */
export function collisionKey(name: string): string {
  return name.replace(/\./g, '_');
}

/** Topics the broker itself writes (consumer group offsets, transactions). */
export const INTERNAL_TOPICS: ReadonlySet<string> = new Set(['__consumer_offsets', '__transaction_state']);

export function isInternalTopic(name: string): boolean {
  return INTERNAL_TOPICS.has(name);
}

/** Clients may read internal topics but not create, write, delete or resize them. */
export function refuseInternal(name: string, action: string): void {
  if (INTERNAL_TOPICS.has(name)) {
    throw new MqError('INVALID_TOPIC', `topic "${name}" is internal to the broker: clients cannot ${action} it`);
  }
}
