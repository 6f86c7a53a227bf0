/**
 * The broker's security settings and the one authorizer every door's
 * requests go through (handlers/authorize.ts calls it per API). Decisions
 * read the ACLs of the metadata log as applied on this broker; a refusal is
 * one audit log line (principal, operation, resource, denied), an allowed
 * check a debug line.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Logger } from 'pino';
import { MqError } from '@mq/protocol/errors';
import { isScramMechanism, scramKeys, unknownUserCredentials, type ScramCredential, type ScramMechanism } from '@mq/protocol/scram';
import type { BrokerConfig } from '../config/broker-config.js';
import type { Timers } from '@mq/protocol/components';
import type { DelegateLoginCommand, RevokeLoginCommand } from '../controller/commands.js';
import type { MetadataState } from '../controller/metadata-state.js';
import { metadataChange } from '../controller/metadata-wait.js';
import type { RequestContext } from '../context.js';
import { ANONYMOUS, CLUSTER_RESOURCE, aclsAllow, authorizationError, type Operation, type ResourceType } from './acl.js';

/** The SASL PLAIN mechanism (RFC 4616): user and password in clear, so only over TLS. */
export const PLAIN = 'PLAIN';

export interface SecurityOptions {
  readonly authentication: boolean;
  /** The SCRAM mechanisms enabled (sasl.enabled.mechanisms). */
  readonly mechanisms: readonly ScramMechanism[];
  /** PLAIN is in sasl.enabled.mechanisms: a password checked against the user's SCRAM credential, accepted only over TLS. */
  readonly plain: boolean;
  readonly authorization: boolean;
  readonly superUsers: ReadonlySet<string>;
}

export function parseSecurityOptions(config: BrokerConfig): SecurityOptions {
  const mechanisms = config
    .get('sasl.enabled.mechanisms')
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m.length > 0);
  for (const m of mechanisms) {
    if (!isScramMechanism(m) && m !== PLAIN) throw new MqError('INVALID_CONFIG', `sasl.enabled.mechanisms: "${m}" is not supported (use SCRAM-SHA-256, SCRAM-SHA-512 and/or PLAIN)`);
  }
  const scram = mechanisms.filter(isScramMechanism);
  const plain = mechanisms.includes(PLAIN);
  const authentication = config.bool('authentication.enabled');
  if (authentication && mechanisms.length === 0) throw new MqError('INVALID_CONFIG', 'authentication.enabled=true needs at least one mechanism in sasl.enabled.mechanisms');
  // Users are stored as SCRAM credentials: PLAIN checks a password against the enabled SCRAM mechanisms' ones.
  if (plain && scram.length === 0) throw new MqError('INVALID_CONFIG', 'sasl.enabled.mechanisms: PLAIN checks passwords against the users\' SCRAM credentials: enable SCRAM-SHA-256 and/or SCRAM-SHA-512 with it');
  const superUsers = new Set(
    config
      .get('super.users')
      .split(/[;,]/)
      .map((p) => p.trim())
      .filter((p) => p.length > 0),
  );
  for (const p of superUsers) if (!/^User:[^\s]+$/.test(p)) throw new MqError('INVALID_CONFIG', `super.users: "${p}" is not User:<name>`);
  return { authentication, mechanisms: scram, plain, authorization: config.bool('authorization.enabled'), superUsers };
}

/** How long a checked HTTP Basic password is remembered (so each request does not pay the key derivation). */
const PASSWORD_CACHE_MS = 60_000;
const PASSWORD_CACHE_MAX = 1000;
/** The most bearer tokens a broker holds at once. */
const MAX_TOKENS = 10_000;
/** Delegated tokens start so (an HTTP token never does): only they are worth waiting for the metadata to catch up. */
const DELEGATED_PREFIX = 'mqd_';
/** How long a delegation waits to be applied here, and a broker for a delegated token it does not know yet. */
const DELEGATION_WAIT_MS = 5000;

const tokenHash = (token: string): string => createHash('sha256').update(token).digest('base64');

/** The metadata log as the keeper of delegated logins: this broker's run, and how it commits a command. */
export interface LoginRegistry {
  brokerId: number;
  incarnation: string;
  submit(command: DelegateLoginCommand | RevokeLoginCommand): Promise<unknown>;
  timers: Timers;
}
/**
 * Password derivations (PBKDF2) running at once: one, so a login flood takes one core and one of libuv's four
 * pool threads, leaving the event loop and file operations theirs (2 measured worse on a 2-core machine).
 */
const PASSWORD_CHECKS_AT_ONCE = 1;

/** At most `limit` tasks run at once; the others wait their turn in order. */
class Concurrency {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running < this.limit) this.running++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      // The slot passes to the next waiter, or is freed.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

export class Security {
  private readonly standIns: Map<ScramMechanism, (user: string) => ScramCredential>;
  /** sha256(user, password, storedKey) → until when it is known good. */
  private readonly goodPasswords = new Map<string, number>();
  /** Bearer tokens of the HTTP API: sha256(token) → principal and expiry (this broker's memory only). */
  private readonly tokens = new Map<string, { principal: string; expiresAt: number; certificate: boolean }>();
  private readonly passwordChecks = new Concurrency(PASSWORD_CHECKS_AT_ONCE);
  /** Delegated logins of this broker's own clients without a metadata log to keep them (unit tests): sha256(token) → principal. */
  private readonly delegations = new Map<string, string>();

  constructor(
    readonly options: SecurityOptions,
    private readonly metadata: MetadataState,
    private readonly logger: Logger,
    /** Where delegated logins are kept so that every broker accepts them: the metadata log (absent: this process only). */
    private readonly logins?: LoginRegistry,
  ) {
    this.standIns = new Map(options.mechanisms.map((m) => [m, unknownUserCredentials(m)]));
  }

  get enabled(): boolean {
    return this.options.authentication || this.options.authorization;
  }

  /**
   * Checks a password against the user's stored SCRAM credential (HTTP Basic):
   * derives the StoredKey as a SCRAM client would and compares. An unknown
   * user costs the same derivation (the stand-in credential). The derivation
   * (PBKDF2) is asynchronous (WebCrypto: the libuv thread pool), never on the
   * event loop, and at most PASSWORD_CHECKS_AT_ONCE (one) runs at once, so a flood
   * of logins neither stalls other clients nor fills the thread pool the log
   * store's file operations also use.
   */
  async verifyPassword(user: string, password: string, now: number): Promise<boolean> {
    const mechanism = this.options.mechanisms.find((m) => this.metadata.scramCredential(user, m)) ?? this.options.mechanisms[0] ?? 'SCRAM-SHA-256';
    const found = this.metadata.scramCredential(user, mechanism);
    const cred = found ?? this.standIn(mechanism)(user);
    const key = createHash('sha256').update(user).update('\u0000').update(password).update('\u0000').update(cred.storedKey).digest('base64');
    const until = this.goodPasswords.get(key);
    if (found && until !== undefined && until > now) return true;
    // The StoredKey this password gives, as a SCRAM client derives it (the one derivation, @mq/protocol/scram).
    const { storedKey } = await this.passwordChecks.run(() => scramKeys(mechanism, password, cred.salt, cred.iterations));
    const ok = storedKey.length === cred.storedKey.length && timingSafeEqual(storedKey, cred.storedKey) && found !== undefined;
    if (ok) {
      if (this.goodPasswords.size >= PASSWORD_CACHE_MAX) this.goodPasswords.delete(this.goodPasswords.keys().next().value!);
      this.goodPasswords.set(key, now + PASSWORD_CACHE_MS);
    }
    return ok;
  }

  /**
   * A new bearer token for `principal`, valid on this broker's HTTP API until `now + lifetimeMs`. `certificate`:
   * the principal is a client certificate's subject (mutual TLS), not a SCRAM user, so the token does not end
   * with a user's deletion (there is none), only at its expiry.
   */
  issueToken(principal: string, now: number, lifetimeMs: number, certificate = false): { token: string; expiresAt: number } {
    for (const [k, v] of this.tokens) if (v.expiresAt <= now) this.tokens.delete(k);
    if (this.tokens.size >= MAX_TOKENS) throw new MqError('POLICY_VIOLATION', `this broker holds ${MAX_TOKENS} live tokens: let some expire first`);
    const token = randomBytes(32).toString('base64url');
    const expiresAt = now + lifetimeMs;
    this.tokens.set(tokenHash(token), { principal, expiresAt, certificate });
    return { token, expiresAt };
  }

  /**
   * A token with which this broker's own client (an HTTP consumer instance)
   * logs in as `principal` (SASL OAUTHBEARER on its connection), so its
   * requests are authorized and its quotas recorded as that principal's on
   * whichever broker it reaches. The token's SHA-256 (never the token) goes
   * into the metadata log with this broker's run, so every broker of the
   * cluster accepts it (the instance's group coordinator or a partition's
   * leader may be another broker) until it is revoked or this broker
   * registers a new run; resolves once this broker's own metadata has it.
   * The token itself crosses only this broker's connections to the others
   * (TLS when the client listeners speak it).
   */
  async delegate(principal: string): Promise<string> {
    const token = DELEGATED_PREFIX + randomBytes(32).toString('base64url');
    const hash = tokenHash(token);
    if (!this.logins) {
      this.delegations.set(hash, principal);
      return token;
    }
    const { brokerId, incarnation, submit, timers } = this.logins;
    await submit({ type: 'delegateLogin', tokenHash: hash, principal, brokerId, incarnation });
    await metadataChange(this.metadata, { until: () => this.metadata.delegatedLogin(hash) !== undefined, timeoutMs: DELEGATION_WAIT_MS, timers });
    if (this.metadata.delegatedLogin(hash) === undefined) throw new MqError('REQUEST_TIMED_OUT', `the delegated login for ${principal} was not applied here within ${DELEGATION_WAIT_MS} ms`);
    return token;
  }

  /** Ends a delegated login (everywhere: a metadata command; a failure is one log line, and the login ends with this run anyway). */
  revokeDelegation(token: string): void {
    const hash = tokenHash(token);
    this.delegations.delete(hash);
    this.logins?.submit({ type: 'revokeLogin', tokenHash: hash }).catch((err: unknown) => this.logger.warn({ err: (err as Error).message }, 'a delegated login was not revoked; it ends when this broker restarts'));
  }

  /** The principal a delegated token logs in as; undefined when unknown or revoked. */
  delegatedPrincipal(token: string): string | undefined {
    const hash = tokenHash(token);
    return this.delegations.get(hash) ?? this.metadata.delegatedLogin?.(hash);
  }

  /**
   * The principal of a delegated token, waiting (at most DELEGATION_WAIT_MS) for this broker's metadata to catch up
   * when it does not know the token yet (another broker may just have had it committed); undefined when unknown.
   */
  async delegatedLogin(token: string): Promise<string | undefined> {
    const found = this.delegatedPrincipal(token);
    if (found !== undefined || !this.logins || !token.startsWith(DELEGATED_PREFIX)) return found;
    await metadataChange(this.metadata, { until: () => this.delegatedPrincipal(token) !== undefined, timeoutMs: DELEGATION_WAIT_MS, timers: this.logins.timers });
    return this.delegatedPrincipal(token);
  }

  /** The principal of a token a client logs in with (SASL OAUTHBEARER): a live token of this broker's HTTP API, or a delegated login. */
  async tokenLogin(token: string, now: number): Promise<string | undefined> {
    return this.tokenPrincipal(token, now) ?? (await this.delegatedLogin(token));
  }

  /** The principal of a live bearer token; undefined when unknown or expired. */
  tokenPrincipal(token: string, now: number): string | undefined {
    const k = tokenHash(token);
    const t = this.tokens.get(k);
    if (!t) return undefined;
    if (t.expiresAt <= now) {
      this.tokens.delete(k);
      return undefined;
    }
    // A user deleted since keeps no access through its tokens.
    if (t.certificate) return t.principal;
    const user = t.principal.slice('User:'.length);
    if (!this.options.mechanisms.some((m) => this.metadata.scramCredential(user, m))) return undefined;
    return t.principal;
  }

  /** The SASL mechanisms a connection may use: the enabled SCRAM ones, and PLAIN when enabled and the connection is TLS. */
  mechanismsFor(encrypted: boolean): string[] {
    return [...this.options.mechanisms, ...(this.options.plain && encrypted ? [PLAIN] : [])];
  }

  /** The stored credential ScramServer looks a user up in. */
  credential(user: string, mechanism: ScramMechanism): ScramCredential | undefined {
    return this.metadata.scramCredential(user, mechanism);
  }

  /** The stand-in credential of an unknown user (see ScramServer). */
  standIn(mechanism: ScramMechanism): (user: string) => ScramCredential {
    return this.standIns.get(mechanism)!;
  }

  /**
   * Who sent this request: the authenticated principal; User:ANONYMOUS when
   * authentication is off and the connection did not authenticate anyway;
   * undefined when authentication is on and it has not.
   */
  principalOf(ctx: RequestContext): string | undefined {
    const p = ctx.connection.session?.principal;
    if (p !== undefined) return p;
    return this.options.authentication ? undefined : ANONYMOUS;
  }

  /** The principal, or SASL_AUTHENTICATION_FAILED when authentication is required and the connection has not authenticated. */
  requirePrincipal(ctx: RequestContext): string {
    const p = this.principalOf(ctx);
    if (p === undefined) {
      throw new MqError('SASL_AUTHENTICATION_FAILED', 'this broker requires authentication (authentication.enabled=true): connect with credentials (client option sasl: {mechanism, username, password}; CLI --user and MQ_PASSWORD)');
    }
    return p;
  }

  isSuperUser(principal: string): boolean {
    return this.options.superUsers.has(principal);
  }

  /** Whether `principal` may do `op` on the resource; no audit line (for filtering lists). */
  allows(principal: string, op: Operation, type: ResourceType, name: string = CLUSTER_RESOURCE): boolean {
    if (!this.options.authorization || this.isSuperUser(principal)) return true;
    return aclsAllow(this.metadata.acls(), principal, op, type, name);
  }

  /** Throws the resource type's AUTHORIZATION_FAILED error, with one audit line, when `principal` may not. */
  check(ctx: Pick<RequestContext, 'connection'>, principal: string, op: Operation, type: ResourceType, name: string = CLUSTER_RESOURCE, api?: string): void {
    if (!this.options.authorization) return;
    const allowed = this.allows(principal, op, type, name);
    // The audit fields are built only when a line is written (an allowed request is a debug line: off by default).
    const fields = () => ({ audit: true, principal, operation: op, resource: `${type}:${name}`, allowed, api, conn: ctx.connection.id, remote: ctx.connection.remote });
    if (allowed) {
      if (this.logger.isLevelEnabled('debug')) this.logger.debug(fields(), 'authorized');
      return;
    }
    this.logger.warn(fields(), 'authorization denied');
    const err = authorizationError(type, op, name, principal);
    // The audit line is this refusal's one log line: the doors do not log it again.
    (err as { audited?: boolean }).audited = true;
    throw err;
  }
}
