/**
 * Authentication and authorization of the HTTP API, against the same users
 * and ACLs as the WebSocket door:
 *
 * - `Authorization: Basic` (user:password, checked against the user's SCRAM
 *   credential) only from loopback until the HTTP listener has TLS, since
 *   Basic sends the password itself;
 * - a verified client certificate (mutual TLS, no Authorization header): its
 *   subject CN is the principal;
 * - `Authorization: Bearer <token>` with a token from `POST /tokens` (itself
 *   called with Basic or a client certificate, for that principal), valid on the broker that issued it for
 *   `http.token.lifetime.ms`.
 *
 * The topic and record routes go through the one request path (the HTTP
 * backend calls handlers/authorize.ts with the session kept here for the
 * request's duration); the other routes are checked here, one rule each.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';
import { MqError } from '@mq/protocol/errors';
import { newSession, type Session } from './session.js';
import type { Security } from './security.js';
import type { Operation, ResourceType } from './acl.js';
import { isEncrypted, tlsPrincipal } from '../server/tls.js';

/** The session of the HTTP request being served (read by the HTTP backend). */
export const httpSessions = new AsyncLocalStorage<Session>();

type Rule = (params: Readonly<Record<string, string>>) => Array<[Operation, ResourceType, string?]> | 'open' | 'refuse';

/** Routes not served through the handlers: what each needs. Unlisted routes need only an authenticated caller (the backend checks the rest). */
const ROUTE_RULES: Record<string, Rule> = {
  'GET /health': () => 'open',
  'GET /metrics': () => [['describe', 'cluster']],
  'GET /cluster': () => [['describe', 'cluster']],
  'GET /groups': () => [['describe', 'cluster']],
  'GET /groups/{group}': (p) => [['describe', 'group', p.group]],
  'POST /groups/{group}/offsets': (p) => [['read', 'group', p.group]],
  'DELETE /groups/{group}': (p) => [['delete', 'group', p.group]],
};

export interface HttpGuardOptions {
  /** Lifetime of a token from POST /tokens (http.token.lifetime.ms). */
  tokenLifetimeMs: number;
  clock: () => number;
}

export class HttpGuard {
  constructor(
    private readonly sec: Security,
    private readonly options: HttpGuardOptions,
  ) {}

  /**
   * The session of one request, or a refusal (SASL_AUTHENTICATION_FAILED: 401;
   * *_AUTHORIZATION_FAILED: 403, with its audit line).
   */
  async check(req: IncomingMessage, method: string, pattern: string, params: Readonly<Record<string, string>>): Promise<Session | undefined> {
    const key = `${method} ${pattern}`;
    const rule = ROUTE_RULES[key];
    const remote = req.socket.remoteAddress;
    const session = newSession(remote);
    // With security off the API is as before: an Authorization header is not even read.
    if (!this.sec.enabled) return session;
    const header = req.headers.authorization;
    // A verified client certificate (mutual TLS) names the principal unless credentials are given.
    if (header !== undefined) session.principal = await this.principalOf(header, session.loopback || isEncrypted(req));
    else {
      session.principal = tlsPrincipal(req.socket);
      session.certificate = session.principal !== undefined;
    }
    const r = rule?.(params);
    if (r === 'open') return session;
    const ctx = { connection: { id: -1, remote: `${remote ?? '?'}:${req.socket.remotePort ?? '?'}`, clientId: 'http-api', signal: AbortSignal.abort(), session } };
    const principal = this.sec.requirePrincipal(ctx as never);
    // A token is made from a password (Basic) or a verified client certificate (mutual TLS: a browser that logged in
    // by certificate has no password to send), for that principal only; never from another token.
    if (key === 'POST /tokens' && header !== undefined && !header.startsWith('Basic ')) {
      throw new MqError('SASL_AUTHENTICATION_FAILED', 'POST /tokens needs HTTP Basic credentials or a client certificate (a token cannot make another)');
    }
    if (Array.isArray(r)) for (const [op, type, name] of r) this.sec.check(ctx, principal, op, type, name, key);
    if (pattern.startsWith('/consumers/{group}')) this.sec.check(ctx, principal, 'read', 'group', params.group, key);
    return session;
  }

  private async principalOf(header: string, safe: boolean): Promise<string> {
    const now = this.options.clock();
    const fail = (why: string) => new MqError('SASL_AUTHENTICATION_FAILED', why);
    if (header.startsWith('Basic ')) {
      if (!safe) throw fail('HTTP Basic credentials are accepted only over TLS (https://, tls.cert.file) or from this machine (loopback): the password would cross the network in clear');
      const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
      const i = decoded.indexOf(':');
      if (i <= 0) throw fail('malformed Basic credentials (base64 of user:password)');
      const user = decoded.slice(0, i);
      if (!(await this.sec.verifyPassword(user, decoded.slice(i + 1), now))) throw fail('authentication failed: invalid user name or password');
      return `User:${user}`;
    }
    if (header.startsWith('Bearer ')) {
      const p = this.sec.tokenPrincipal(header.slice(7).trim(), now);
      if (!p) throw fail('unknown or expired token (get a new one with POST /tokens and Basic credentials)');
      return p;
    }
    throw fail('unsupported Authorization scheme (use Basic or Bearer)');
  }

  /** POST /tokens: a token for the caller authenticated by Basic credentials or by its client certificate (check() refused any other). */
  issue(session: Session): { token: string; expires_at: string; principal: string } {
    if (!session.principal) throw new MqError('SASL_AUTHENTICATION_FAILED', 'POST /tokens needs HTTP Basic credentials or a client certificate');
    const t = this.sec.issueToken(session.principal, this.options.clock(), this.options.tokenLifetimeMs, session.certificate === true);
    return { token: t.token, expires_at: new Date(t.expiresAt).toISOString(), principal: session.principal };
  }
}
