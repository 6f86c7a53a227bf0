/**
 * SaslAuthenticate (KIP-152 framing): one step of the login SaslHandshake
 * chose, run by the core's saslAuthenticate handler (the one login of every
 * door: SCRAM through @mq/protocol/scram, PLAIN over TLS). A success makes
 * the user this connection's principal for the one authorizer; a failure is
 * SASL_AUTHENTICATION_FAILED with the same message whether or not the user
 * exists, one audit line, and the connection is closed once the answer is
 * written (as Kafka does).
 */
import { MqError } from '@mq/protocol/errors';
import { SaslAuthenticateApi, type SaslAuthenticateRequest, type SaslAuthenticateResponse } from '@mq/kafka-protocol/messages';
import type { KafkaApi } from '../types.js';
import { askCore } from './call-core.js';

const EMPTY = Buffer.alloc(0);

export const saslAuthenticate: KafkaApi<SaslAuthenticateRequest, SaslAuthenticateResponse> = {
  api: SaslAuthenticateApi,
  needs: ['saslAuthenticate'],
  async handle(req, call) {
    const mechanism = call.sasl.mechanism;
    if (mechanism === undefined) throw new MqError('ILLEGAL_SASL_STATE', 'SaslAuthenticate before SaslHandshake: name the mechanism with SaslHandshake first');
    const r = await askCore(call, 'saslAuthenticate', { mechanism, authBytes: req.authBytes });
    const bytes = r.authBytes ? Buffer.from(r.authBytes.buffer, r.authBytes.byteOffset, r.authBytes.byteLength) : EMPTY;
    // 0: the session does not expire (no re-authentication, KIP-368).
    return { errorCode: 0, errorMessage: null, authBytes: bytes, sessionLifetimeMs: 0 };
  },
  refused: (_req, code, message) => ({ errorCode: code, errorMessage: message, authBytes: EMPTY, sessionLifetimeMs: 0 }),
};
