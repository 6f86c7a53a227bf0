/**
 * Connection-count limits of one broker (Kafka's max.connections.per.ip, and
 * the same per authenticated principal): a connection beyond its IP's limit
 * is closed when it arrives, one beyond its principal's once it has
 * authenticated (mutual TLS: when it arrives), with the reason and one log
 * line; other connections are not affected. Counts are released when a
 * connection closes.
 */
export interface ConnectionLimitOptions {
  maxConnectionsPerIp: number;
  maxConnectionsPerPrincipal: number;
}

export class ConnectionQuotas {
  private readonly byIp = new Map<string, number>();
  private readonly byPrincipal = new Map<string, number>();

  constructor(private readonly options: ConnectionLimitOptions) {}

  /** Counts a new connection from `ip`; returns why it is refused (and counts nothing) when its IP is at the limit. */
  acceptIp(ip: string): string | undefined {
    const n = this.byIp.get(ip) ?? 0;
    if (n >= this.options.maxConnectionsPerIp) return `too many connections from ${ip} (max.connections.per.ip=${this.options.maxConnectionsPerIp})`;
    this.byIp.set(ip, n + 1);
    return undefined;
  }

  releaseIp(ip: string): void {
    const n = (this.byIp.get(ip) ?? 1) - 1;
    if (n <= 0) this.byIp.delete(ip);
    else this.byIp.set(ip, n);
  }

  /** Counts a connection authenticated as `principal`; returns why it is refused (and counts nothing) at the limit. */
  acceptPrincipal(principal: string): string | undefined {
    const n = this.byPrincipal.get(principal) ?? 0;
    if (n >= this.options.maxConnectionsPerPrincipal) return `too many connections for ${principal} (max.connections.per.principal=${this.options.maxConnectionsPerPrincipal})`;
    this.byPrincipal.set(principal, n + 1);
    return undefined;
  }

  releasePrincipal(principal: string): void {
    const n = (this.byPrincipal.get(principal) ?? 1) - 1;
    if (n <= 0) this.byPrincipal.delete(principal);
    else this.byPrincipal.set(principal, n);
  }

  /** Connections counted for an IP and a principal (tests, metrics). */
  countIp(ip: string): number {
    return this.byIp.get(ip) ?? 0;
  }

  countPrincipal(principal: string): number {
    return this.byPrincipal.get(principal) ?? 0;
  }
}
