/**
 * SaslAuthenticate: one step of a SCRAM exchange on this connection (first:
 * client-first → server-first; then client-final → server-final and the
 * principal). The exchange state lives on the connection's session, so a
 * connection authenticates once; a failure ends SASL on the connection (the
 * client reconnects), and a replayed client-final fails against this
 * exchange's fresh server nonce. An unknown user fails exactly as a wrong
 * password does (same step, message and work: ScramServer's stand-in).
 */
import { MqError, isMqError } from '@mq/protocol/errors';
import { ScramServer, isScramMechanism } from '@mq/protocol/scram';
import type { Security } from '../security/security.js';
import type { Handler } from './types.js';

export function saslAuthenticate(sec: Security): Handler<'saslAuthenticate'> {
  return async (req, ctx) => {
    const session = ctx.connection.session;
    if (!session) throw new MqError('ILLEGAL_SASL_STATE', 'this front door does not authenticate with SaslAuthenticate');
    if (session.saslEnded) {
      throw new MqError('ILLEGAL_SASL_STATE', session.principal ? `this connection already authenticated as ${session.principal}` : 'a failed login ended SASL on this connection: open a new connection to try again');
    }
    const mechanism = req.mechanism ?? '';
    const bytes = req.authBytes ?? new Uint8Array(0);
    try {
      if (!isScramMechanism(mechanism) || !sec.options.mechanisms.includes(mechanism)) {
        throw new MqError('UNSUPPORTED_SASL_MECHANISM', `SASL mechanism "${mechanism.slice(0, 40)}" is not enabled on this broker (sasl.enabled.mechanisms: ${sec.options.mechanisms.join(', ')})`);
      }
      if (!session.sasl) {
        session.sasl = new ScramServer(mechanism, (user) => sec.credential(user, mechanism), { unknownUser: sec.standIn(mechanism) });
        return { authBytes: Buffer.from(session.sasl.first(bytes), 'utf8') };
      }
      if (session.sasl.mechanism !== mechanism) throw new MqError('ILLEGAL_SASL_STATE', `the SCRAM exchange began with ${session.sasl.mechanism}, not ${mechanism}`);
      const { serverFinal, user } = session.sasl.final(bytes);
      session.principal = `User:${user}`;
      session.sasl = undefined;
      session.saslEnded = true;
      ctx.logger.info({ audit: true, conn: ctx.connection.id, remote: ctx.connection.remote, principal: session.principal, mechanism }, 'authenticated');
      return { authBytes: Buffer.from(serverFinal, 'utf8'), principal: session.principal };
    } catch (err) {
      const user = session.sasl?.username;
      session.sasl = undefined;
      session.saslEnded = true;
      const e = isMqError(err) ? err : new MqError('SASL_AUTHENTICATION_FAILED', 'authentication failed', { cause: err });
      ctx.logger.warn({ audit: true, conn: ctx.connection.id, remote: ctx.connection.remote, user, mechanism: mechanism.slice(0, 40), code: e.code }, 'authentication failed');
      (e as { audited?: boolean }).audited = true;
      throw e;
    }
  };
}
