/**
 * Browser origins allowed on the broker's front doors (`ws.allowed.origins`,
 * `http.cors.allowed.origins`). A request without an Origin header is not a
 * browser's (Node clients, the CLI, curl) and is always let through; a
 * browser's request is allowed only from a listed origin, `*`, or the
 * broker's own HTTP origin (where a console it serves would live). The own
 * origins come from the configured host names, never from the request's
 * Host header, so a DNS-rebound page does not count as the broker's own.
 */
import { MqError } from '@mq/protocol/errors';

export interface OriginList {
  /** `*`: every origin (including the opaque `null`). */
  readonly any: boolean;
  /** Normalised origins (`URL.origin`: lower-case host, no default port, no trailing slash). */
  readonly origins: ReadonlySet<string>;
}

export type OriginVerdict = 'no-origin' | 'allowed' | 'refused';

/** Parses a comma list of origins or `*`; INVALID_CONFIG names the key and the bad entry. */
export function parseOriginList(key: string, value: string): OriginList {
  let any = false;
  const origins = new Set<string>();
  for (const entry of value.split(',').map((s) => s.trim()).filter(Boolean)) {
    if (entry === '*') {
      any = true;
      continue;
    }
    const origin = originOfEntry(entry);
    if (origin === undefined) {
      throw new MqError('INVALID_CONFIG', `${key}: "${entry}" is not an origin (scheme://host[:port] such as http://localhost:5173, or * for any)`);
    }
    origins.add(origin);
  }
  return { any, origins };
}

/** An allow-list entry's origin: http(s), a host, maybe a port, nothing else (no path, query or credentials). */
function originOfEntry(entry: string): string | undefined {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return undefined;
  }
  const bare = url.pathname === '/' && !/^[a-z]+:\/\/[^/]*\/./i.test(entry) && url.search === '' && url.hash === '' && url.username === '' && url.password === '';
  return bare ? normaliseOrigin(entry) : undefined;
}

/** `URL.origin` of an http(s) origin, or undefined when it is not one (a path, another scheme, `null`). */
function normaliseOrigin(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  return url.origin;
}

const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]', '']);

/** True for names and addresses of this machine's loopback interface. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || /^::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** The broker's own HTTP origins: `http://<host>:<httpPort>` for its listen and advertised hosts (and every loopback name when one is loopback). */
export function ownHttpOrigins(hosts: readonly string[], httpPort: number, scheme: 'http' | 'https' = 'http'): string[] {
  const out = new Set<string>();
  const add = (h: string) => {
    const o = normaliseOrigin(`${scheme}://${h.includes(':') && !h.startsWith('[') ? `[${h}]` : h}:${httpPort}`);
    if (o) out.add(o);
  };
  for (const h of hosts) {
    if (WILDCARD_HOSTS.has(h)) continue;
    add(h);
    if (isLoopbackHost(h)) for (const l of ['localhost', '127.0.0.1', '::1']) add(l);
  }
  return [...out];
}

/** Decides a request's Origin header against the list and the broker's own origins. */
export function originVerdict(list: OriginList, own: readonly string[], header: string | string[] | undefined): OriginVerdict {
  if (header === undefined) return 'no-origin';
  if (Array.isArray(header)) return 'refused';
  if (list.any) return 'allowed';
  const origin = normaliseOrigin(header);
  if (origin === undefined) return 'refused';
  return list.origins.has(origin) || own.includes(origin) ? 'allowed' : 'refused';
}
