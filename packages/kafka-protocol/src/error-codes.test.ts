import { ERROR_CODES, type ErrorCode } from '@mq/protocol/errors';
import { KAFKA_ERROR_CODES, MQ_TO_KAFKA_ERRORS, kafkaErrorCode, mqErrorCode } from './error-codes.js';

describe('the mq <-> Kafka error table', () => {
  const mqCodes = Object.keys(ERROR_CODES) as ErrorCode[];

  it('gives every mq code a Kafka code', () => {
    for (const c of mqCodes) expect(Object.values(KAFKA_ERROR_CODES)).toContain(kafkaErrorCode(c));
  });

  it('maps every Kafka code it uses back to an mq code that maps to it again (Kafka -> mq -> Kafka is the identity)', () => {
    for (const name of new Set(Object.values(MQ_TO_KAFKA_ERRORS))) {
      const n = KAFKA_ERROR_CODES[name];
      expect(kafkaErrorCode(mqErrorCode(n))).toBe(n);
    }
  });

  it('maps each mq code back to itself unless it shares its Kafka code with an mq code listed before it', () => {
    const first = new Map<number, ErrorCode>();
    for (const c of Object.keys(MQ_TO_KAFKA_ERRORS) as ErrorCode[]) if (!first.has(kafkaErrorCode(c))) first.set(kafkaErrorCode(c), c);
    for (const c of mqCodes) expect(mqErrorCode(kafkaErrorCode(c))).toBe(first.get(kafkaErrorCode(c)));
    expect(mqErrorCode(6)).toBe('NOT_LEADER');
    expect(mqErrorCode(10)).toBe('MESSAGE_TOO_LARGE');
    expect(kafkaErrorCode('RECORD_TOO_LARGE')).toBe(10);
    expect(kafkaErrorCode('NONE')).toBe(0);
  });

  it('maps a Kafka code mq never uses to UNKNOWN', () => {
    expect(mqErrorCode(11)).toBe('UNKNOWN'); // STALE_CONTROLLER_EPOCH
  });
});
