/**
 * SaslHandshake: the client names its mechanism; the answer lists those this
 * connection may use (the enabled SCRAM ones, and PLAIN only over TLS, as
 * Kafka's sasl.enabled.mechanisms per listener). An unknown or refused one is
 * UNSUPPORTED_SASL_MECHANISM with one log line saying why (the answer has no
 * message field). The chosen mechanism is what SaslAuthenticate then runs
 * (v1), or the bare tokens that follow a v0 handshake (kafka-connection.ts).
 */
import { MqError } from '@mq/protocol/errors';
import { SaslHandshakeApi, type SaslHandshakeRequest, type SaslHandshakeResponse } from '@mq/kafka-protocol/messages';
import { kafkaErrorCode } from '@mq/kafka-protocol';
import { PLAIN } from '../../security/security.js';
import type { KafkaApi } from '../types.js';

const UNSUPPORTED_SASL_MECHANISM = kafkaErrorCode('UNSUPPORTED_SASL_MECHANISM');

export const saslHandshake: KafkaApi<SaslHandshakeRequest, SaslHandshakeResponse> = {
  api: SaslHandshakeApi,
  needs: ['saslAuthenticate'],
  async handle(req, call) {
    const session = call.ctx.connection.session;
    const encrypted = session?.encrypted ?? false;
    const enabled = [...call.door.sasl.mechanisms(encrypted)];
    if (!session || session.saslEnded) {
      throw new MqError('ILLEGAL_SASL_STATE', session?.principal ? `this connection already authenticated as ${session.principal}` : 'a failed login ended SASL on this connection: open a new connection to try again');
    }
    if (call.sasl.mechanism !== undefined) throw new MqError('ILLEGAL_SASL_STATE', `SaslHandshake already chose ${call.sasl.mechanism} on this connection`);
    const mechanism = req.mechanism;
    if (!enabled.includes(mechanism)) {
      const why =
        mechanism === PLAIN && call.door.sasl.mechanisms(true).includes(PLAIN)
          ? 'SASL PLAIN sends the password itself: accepted only over TLS (connect with TLS, or use SCRAM-SHA-256/SCRAM-SHA-512 here)'
          : `SASL mechanism "${mechanism.slice(0, 40)}" is not enabled on this ${encrypted ? 'TLS' : 'plaintext'} connection (sasl.enabled.mechanisms)`;
      call.ctx.logger.warn({ conn: call.ctx.connection.id, remote: call.ctx.connection.remote, mechanism: mechanism.slice(0, 40), enabled, code: 'UNSUPPORTED_SASL_MECHANISM' }, `kafka SaslHandshake refused: ${why}`);
      call.ctx.broker.metrics.refusal('UNSUPPORTED_SASL_MECHANISM');
      return { errorCode: UNSUPPORTED_SASL_MECHANISM, mechanisms: enabled };
    }
    call.sasl.mechanism = mechanism;
    // v0: the client sends its tokens bare next (no SaslAuthenticate), as before KIP-152.
    if (call.version === 0) call.sasl.rawTokens = true;
    return { errorCode: 0, mechanisms: enabled };
  },
  refused: (_req, code) => ({ errorCode: code, mechanisms: [] }),
};
