/** mq's error numbers (in the core's answers) and errors as Kafka error codes, through @mq/kafka-protocol's one table. */
import { kafkaErrorCode } from '@mq/kafka-protocol';
import { errorCodeFromNumber } from '@mq/protocol/errors';
import { toMqError } from '../errors.js';

/** The Kafka error code of an mq error number from a core answer (0 stays 0). */
export function kafkaCode(mqNumber: number | null | undefined): number {
  return mqNumber ? kafkaErrorCode(errorCodeFromNumber(mqNumber)) : 0;
}

/** The Kafka error code of a thrown error. */
export function kafkaCodeOf(err: unknown): number {
  return kafkaErrorCode(toMqError(err).code);
}

/** A core answer's error message, or null when there is none (Kafka's nullable error message). */
export function messageOrNull(message: string | null | undefined): string | null {
  return message ? message : null;
}
