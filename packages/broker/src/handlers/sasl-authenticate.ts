/**
 * SaslAuthenticate: one step of a login on this connection, the one place
 * any door authenticates a connection (the WebSocket door calls it directly,
 * the Kafka door behind SaslHandshake/SaslAuthenticate).
 *
 * - SCRAM-SHA-256/512: first client-first → server-first; then client-final →
 *   server-final and the principal. A replayed client-final fails against
 *   this exchange's fresh server nonce. An unknown user fails exactly as a
 *   wrong password does (same step, message and work: ScramServer's stand-in).
 * - PLAIN (RFC 4616, when in sasl.enabled.mechanisms): one step, the password
 *   itself, checked against the user's SCRAM credential; only on a TLS
 *   connection (on plaintext it is UNSUPPORTED_SASL_MECHANISM).
 *
 * - OAUTHBEARER (RFC 7628 framing, one step): a token the cluster delegated
 *   to a broker's own client (an HTTP consumer instance acting for its HTTP
 *   caller's principal, on any broker: Security.delegate keeps it in the
 *   metadata log), or a live token of this broker's
 *   HTTP API (POST /tokens, called with Basic credentials or a client
 *   certificate: how the web console's live tail logs in as the console's
 *   user). On a connection its client certificate already authenticated, a
 *   token of that same principal is accepted and changes nothing. Never advertised; no
 *   other token is accepted. A connection stays logged in after its token
 *   expires (no re-authentication).
 *
 * The exchange state lives on the connection's session, so a connection
 * authenticates once; a failure ends SASL on the connection (the client
 * reconnects) with SASL_AUTHENTICATION_FAILED and one audit line.
 */
import { MqError, isMqError } from '@mq/protocol/errors';
import { SCRAM_MAX_MESSAGE_BYTES, ScramServer, isScramMechanism } from '@mq/protocol/scram';
import type { RequestContext } from '../context.js';
import { PLAIN, type Security } from '../security/security.js';
import type { Session } from '../security/session.js';
import type { Handler } from './types.js';

const NO_BYTES = new Uint8Array(0);
const OAUTHBEARER = 'OAUTHBEARER';

/** The user and password of a PLAIN message: [authzid] NUL authcid NUL passwd (UTF-8). */
function parsePlain(bytes: Uint8Array): { user: string; password: string } {
  const fail = (why: string) => new MqError('SASL_AUTHENTICATION_FAILED', `malformed SASL PLAIN message: ${why}`);
  if (bytes.length > SCRAM_MAX_MESSAGE_BYTES) throw fail(`longer than ${SCRAM_MAX_MESSAGE_BYTES} bytes`);
  const parts = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8').split('\u0000');
  if (parts.length !== 3) throw fail('expected [authzid] NUL user NUL password');
  const [authzid, user, password] = parts as [string, string, string];
  if (user.length === 0 || password.length === 0) throw fail('empty user name or password');
  if (authzid !== '' && authzid !== user) throw new MqError('SASL_AUTHENTICATION_FAILED', 'SASL PLAIN authorization identity must be empty or the user name');
  return { user, password };
}

/** The token of an OAUTHBEARER client message: gs2 header, then \x01-separated key=value pairs with auth=Bearer <token>. */
function parseBearer(bytes: Uint8Array): string {
  const fail = () => new MqError('SASL_AUTHENTICATION_FAILED', 'malformed SASL OAUTHBEARER message');
  if (bytes.length > SCRAM_MAX_MESSAGE_BYTES) throw fail();
  const parts = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8').split('\u0001');
  const auth = parts.slice(1).find((p) => p.startsWith('auth='));
  const m = auth === undefined ? null : /^auth=Bearer ([A-Za-z0-9_-]{1,200})$/.exec(auth);
  if (!/^[ny],(a=[^,]*)?,$/.test(parts[0] ?? '') || !m) throw fail();
  return m[1]!;
}

function loggedIn(ctx: RequestContext, session: Session, user: string, mechanism: string, principal = `User:${user}`): string {
  session.principal = principal;
  session.sasl = undefined;
  session.saslEnded = true;
  ctx.logger.info({ audit: true, conn: ctx.connection.id, remote: ctx.connection.remote, principal: session.principal, mechanism }, 'authenticated');
  return session.principal;
}

export function saslAuthenticate(sec: Security): Handler<'saslAuthenticate'> {
  return async (req, ctx) => {
    const session = ctx.connection.session;
    if (!session) throw new MqError('ILLEGAL_SASL_STATE', 'this front door does not authenticate with SaslAuthenticate');
    const mechanism = req.mechanism ?? '';
    const bytes = req.authBytes ?? NO_BYTES;
    // A connection authenticated by its client certificate may present a token of that same principal (a browser
    // logged in by certificate, whose console tail logs in as any does): nothing changes; another principal's is
    // refused. A delegated login (only brokers hold one: another broker's HTTP consumer instance, which presents
    // that broker's certificate where client certificates are required) logs the connection in as its principal.
    if (session.certificate && session.principal !== undefined && mechanism === OAUTHBEARER) {
      const token = parseBearer(bytes);
      const delegated = await sec.delegatedLogin(token);
      if (delegated !== undefined) return { authBytes: Buffer.alloc(0), principal: loggedIn(ctx, session, delegated, mechanism, delegated) };
      if (sec.tokenPrincipal(token, ctx.broker.clock()) === session.principal) return { authBytes: Buffer.alloc(0), principal: session.principal };
    }
    if (session.saslEnded) {
      throw new MqError('ILLEGAL_SASL_STATE', session.principal ? `this connection already authenticated as ${session.principal}` : 'a failed login ended SASL on this connection: open a new connection to try again');
    }
    let plainUser: string | undefined;
    try {
      if (mechanism === PLAIN && sec.options.plain) {
        if (!session.encrypted) {
          throw new MqError('UNSUPPORTED_SASL_MECHANISM', 'SASL PLAIN sends the password itself: this broker accepts it only over TLS (connect with TLS, or use SCRAM-SHA-256/SCRAM-SHA-512 on a plaintext listener)');
        }
        const { user, password } = parsePlain(bytes);
        plainUser = user;
        // The password against the user's stored SCRAM credential (an unknown user costs the same derivation).
        if (!(await sec.verifyPassword(user, password, ctx.broker.clock()))) throw new MqError('SASL_AUTHENTICATION_FAILED', 'authentication failed: invalid user name or password');
        return { authBytes: Buffer.alloc(0), principal: loggedIn(ctx, session, user, mechanism) };
      }
      if (mechanism === OAUTHBEARER) {
        const token = parseBearer(bytes);
        const principal = await sec.tokenLogin(token, ctx.broker.clock());
        if (!principal) throw new MqError('SASL_AUTHENTICATION_FAILED', 'authentication failed: unknown, expired or revoked token');
        plainUser = principal;
        return { authBytes: Buffer.alloc(0), principal: loggedIn(ctx, session, principal, mechanism, principal) };
      }
      if (!isScramMechanism(mechanism) || !sec.options.mechanisms.includes(mechanism)) {
        const enabled = sec.mechanismsFor(session.encrypted);
        throw new MqError('UNSUPPORTED_SASL_MECHANISM', `SASL mechanism "${mechanism.slice(0, 40)}" is not enabled on this ${session.encrypted ? 'TLS' : 'plaintext'} connection (enabled: ${enabled.join(', ')}; sasl.enabled.mechanisms)`);
      }
      if (!session.sasl) {
        session.sasl = new ScramServer(mechanism, (user) => sec.credential(user, mechanism), { unknownUser: sec.standIn(mechanism) });
        return { authBytes: Buffer.from(session.sasl.first(bytes), 'utf8') };
      }
      if (session.sasl.mechanism !== mechanism) throw new MqError('ILLEGAL_SASL_STATE', `the SCRAM exchange began with ${session.sasl.mechanism}, not ${mechanism}`);
      const { serverFinal, user } = session.sasl.final(bytes);
      return { authBytes: Buffer.from(serverFinal, 'utf8'), principal: loggedIn(ctx, session, user, mechanism) };
    } catch (err) {
      const user = plainUser ?? session.sasl?.username;
      session.sasl = undefined;
      session.saslEnded = true;
      const e = isMqError(err) ? err : new MqError('SASL_AUTHENTICATION_FAILED', 'authentication failed', { cause: err });
      ctx.logger.warn({ audit: true, conn: ctx.connection.id, remote: ctx.connection.remote, user, mechanism: mechanism.slice(0, 40), code: e.code, err: e.message }, 'authentication failed');
      (e as { audited?: boolean }).audited = true;
      throw e;
    }
  };
}
