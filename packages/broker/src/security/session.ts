/**
 * What a connection (or one HTTP request) knows about who is on the other
 * end: the principal once authenticated, and the SASL exchange in progress.
 * A connection authenticates once: after a success or a failure its SASL is
 * over (a failed login must reconnect, which bounds guessing per connection).
 */
import type { ScramServer } from '@mq/protocol/scram';
import { isLoopbackHost } from '../server/origins.js';

export interface Session {
  /** "User:<name>" once authenticated. */
  principal: string | undefined;
  /** The SCRAM exchange between its first and final step. */
  sasl: ScramServer | undefined;
  /** A SASL exchange succeeded or failed on this connection: no other may start. */
  saslEnded: boolean;
  /** The peer is on this machine (a loopback address): the first user may be created from here. */
  readonly loopback: boolean;
  /** The connection is TLS: a mechanism that sends the password itself (PLAIN) may be used. */
  readonly encrypted: boolean;
  /** The principal is a verified client certificate's subject (mutual TLS), not a login. */
  certificate?: boolean;
}

export function newSession(remoteAddress: string | undefined, principal?: string, encrypted = false): Session {
  return {
    principal,
    sasl: undefined,
    saslEnded: principal !== undefined,
    loopback: remoteAddress !== undefined && isLoopbackHost(remoteAddress),
    encrypted,
    ...(principal !== undefined ? { certificate: true } : {}),
  };
}
