/**
 * Safe by default: without authentication a listener on anything but
 * loopback lets whoever reaches it do anything. Binding a non-loopback
 * address needs `allow.insecure=true` (then every start logs a warning),
 * unless every client of that listener must authenticate
 * (authentication.enabled on a single broker; a warning without TLS); on
 * loopback the start says that only this machine can connect.
 */
import type { Logger } from 'pino';
import { MqError } from '@mq/protocol/errors';
import { isLoopbackHost } from './origins.js';

export interface Listener {
  /** e.g. "client, HTTP and inter-broker listeners" or "Raft listener". */
  readonly what: string;
  readonly host: string;
  /** Every client of it must authenticate (authentication.enabled on a one-node cluster's client and HTTP listeners). */
  readonly authenticated?: boolean;
  /** Its traffic is TLS (tls.cert.file). */
  readonly encrypted?: boolean;
}

/** Throws INVALID_CONFIG when a listener is exposed and `allowInsecure` is off; logs what the start exposes. */
export function checkExposure(listeners: readonly Listener[], allowInsecure: boolean, logger: Logger): void {
  const beyond = listeners.filter((l) => !isLoopbackHost(l.host));
  for (const l of beyond.filter((x) => x.authenticated && !x.encrypted)) {
    logger.warn({ listener: l.what, host: l.host }, `${l.what} on ${l.host} require authentication, but traffic is not encrypted (set tls.cert.file and tls.key.file): use it on networks you trust`);
  }
  const exposed = beyond.filter((l) => !l.authenticated);
  if (exposed.length === 0 && beyond.length > 0) return;
  if (exposed.length === 0) {
    const secured = listeners.some((l) => l.authenticated || l.encrypted);
    logger.info(
      { hosts: [...new Set(listeners.map((l) => l.host))] },
      secured ? 'listening on loopback only: only this machine can connect' : 'listening on loopback only: no authentication or TLS is configured, so only this machine can connect',
    );
    return;
  }
  const named = exposed.map((l) => `${l.what} on ${l.host}`).join(', ');
  if (!allowInsecure) {
    throw new MqError(
      'INVALID_CONFIG',
      `refusing to listen beyond loopback (${named}) without authentication or TLS: anyone who reaches these ports could create and delete topics and read every record. Listen on 127.0.0.1 (the default), or set allow.insecure=true to accept that on a trusted network`,
    );
  }
  logger.warn({ exposed: exposed.map((l) => ({ listener: l.what, host: l.host })) }, `INSECURE: listening beyond loopback (${named}) with no authentication or TLS (allow.insecure=true): anyone who reaches these ports can do anything`);
}
