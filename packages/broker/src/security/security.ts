/**
 * The broker's security settings and the one authorizer every door's
 * requests go through (handlers/authorize.ts calls it per API). Decisions
 * read the ACLs of the metadata log as applied on this broker; a refusal is
 * one audit log line (principal, operation, resource, denied), an allowed
 * check a debug line.
 */
import type { Logger } from 'pino';
import { MqError } from '@mq/protocol/errors';
import { isScramMechanism, unknownUserCredentials, type ScramCredential, type ScramMechanism } from '@mq/protocol/scram';
import type { BrokerConfig } from '../config/broker-config.js';
import type { MetadataState } from '../controller/metadata-state.js';
import type { RequestContext } from '../context.js';
import { ANONYMOUS, CLUSTER_RESOURCE, aclsAllow, authorizationError, type Operation, type ResourceType } from './acl.js';

export interface SecurityOptions {
  readonly authentication: boolean;
  readonly mechanisms: readonly ScramMechanism[];
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
    if (!isScramMechanism(m)) throw new MqError('INVALID_CONFIG', `sasl.enabled.mechanisms: "${m}" is not supported (use SCRAM-SHA-256 and/or SCRAM-SHA-512)`);
  }
  const authentication = config.bool('authentication.enabled');
  if (authentication && mechanisms.length === 0) throw new MqError('INVALID_CONFIG', 'authentication.enabled=true needs at least one mechanism in sasl.enabled.mechanisms');
  const superUsers = new Set(
    config
      .get('super.users')
      .split(/[;,]/)
      .map((p) => p.trim())
      .filter((p) => p.length > 0),
  );
  for (const p of superUsers) if (!/^User:[^\s]+$/.test(p)) throw new MqError('INVALID_CONFIG', `super.users: "${p}" is not User:<name>`);
  return { authentication, mechanisms: mechanisms as ScramMechanism[], authorization: config.bool('authorization.enabled'), superUsers };
}

export class Security {
  private readonly standIns: Map<ScramMechanism, (user: string) => ScramCredential>;

  constructor(
    readonly options: SecurityOptions,
    private readonly metadata: MetadataState,
    private readonly logger: Logger,
  ) {
    this.standIns = new Map(options.mechanisms.map((m) => [m, unknownUserCredentials(m)]));
  }

  get enabled(): boolean {
    return this.options.authentication || this.options.authorization;
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
  check(ctx: RequestContext, principal: string, op: Operation, type: ResourceType, name: string = CLUSTER_RESOURCE, api?: string): void {
    if (!this.options.authorization) return;
    const allowed = this.allows(principal, op, type, name);
    const fields = { audit: true, principal, operation: op, resource: `${type}:${name}`, allowed, api, conn: ctx.connection.id, remote: ctx.connection.remote };
    if (allowed) {
      this.logger.debug(fields, 'authorized');
      return;
    }
    this.logger.warn(fields, 'authorization denied');
    const err = authorizationError(type, op, name, principal);
    // The audit line is this refusal's one log line: the doors do not log it again.
    (err as { audited?: boolean }).audited = true;
    throw err;
  }
}
