/**
 * A small HTTP router: `{name}` path parameters, JSON in and out, typed
 * errors turned into `{error: {code, message, retriable}}` with the matching
 * status. Route modules register themselves with `router.add(method,
 * pattern, spec, handler)`: the spec (route-spec.ts) declares the route's
 * parameters, body and answers once, for the request validator compiled here
 * and for /openapi.json (openapi.ts).
 */
import type { IncomingMessage } from 'node:http';
import { MqError, type ErrorCode } from '@mq/protocol/errors';
import { compileValidator, type RequestInput, type RequestValidator } from './request-validator.js';
import { isDocumented, type RouteDeclaration } from './route-spec.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

export interface HttpRequest {
  readonly method: Method;
  readonly path: string;
  /** Decoded path parameters, as text. */
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  readonly raw: IncomingMessage;
  /** Aborted when the client goes away before the answer is written, or the broker shuts down. */
  readonly signal: AbortSignal;
  /**
   * What the route's schemas validated: path and query values in their declared types with the declared
   * defaults, and the JSON body (an optional object body left out reads as {}). Empty for an undocumented route.
   */
  readonly input: RequestInput;
}

export interface HttpResponse {
  status: number;
  /** JSON-serialised unless `text` is set. */
  body?: unknown;
  text?: string;
  contentType?: string;
  /** More response headers (e.g. content-security-policy, cache-control, location). */
  headers?: Record<string, string>;
}

export type RouteHandler = (req: HttpRequest) => Promise<HttpResponse>;

export interface Route {
  readonly method: Method;
  /** e.g. `/topics/{topic}/partitions/{partition}/records` */
  readonly pattern: string;
  readonly spec: RouteDeclaration;
  readonly handler: RouteHandler;
  /** The spec's validator (compiled on first use); undefined for an undocumented route (the web console's files). */
  readonly validate: RequestValidator | undefined;
}

interface Compiled extends Route {
  regex: RegExp;
  names: string[];
}

export type RouteMatch =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allowed: Method[] }
  | { kind: 'not-found' };

export class Router {
  private readonly routes: Compiled[] = [];

  add(method: Method, pattern: string, spec: RouteDeclaration, handler: RouteHandler): this {
    const names: string[] = [];
    const source = pattern
      .split('/')
      .map((seg) => {
        const m = /^\{(\w+)\}$/.exec(seg);
        if (m) {
          names.push(m[1]!);
          return '([^/]+)';
        }
        return seg.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
      })
      .join('/');
    if (isDocumented(spec)) {
      const declared = Object.keys(spec.params ?? {}).sort().join(',');
      if (declared !== [...names].sort().join(',')) throw new Error(`${method} ${pattern} declares path parameters [${declared}], its pattern has [${names.join(',')}]`);
    }
    // Compiled on the route's first request: ajv's code generation for every route would add about a second to start-up.
    let compiled: RequestValidator | undefined;
    const validate: RequestValidator | undefined = isDocumented(spec) ? (raw) => (compiled ??= compileValidator(spec))(raw) : undefined;
    this.routes.push({ method, pattern, spec, handler, validate, regex: new RegExp(`^${source}/?$`), names });
    return this;
  }

  list(): readonly Route[] {
    return this.routes;
  }

  match(method: string, path: string): RouteMatch {
    const allowed: Method[] = [];
    for (const r of this.routes) {
      const m = r.regex.exec(path);
      if (!m) continue;
      if (r.method !== method) {
        allowed.push(r.method);
        continue;
      }
      const params: Record<string, string> = {};
      try {
        r.names.forEach((n, i) => (params[n] = decodeURIComponent(m[i + 1]!)));
      } catch {
        throw new MqError('INVALID_REQUEST', `path ${path} is not valid percent-encoding`);
      }
      return { kind: 'found', route: r, params };
    }
    return allowed.length > 0 ? { kind: 'method-not-allowed', allowed } : { kind: 'not-found' };
  }
}

const STATUS: Partial<Record<ErrorCode, number>> = {
  SASL_AUTHENTICATION_FAILED: 401,
  ILLEGAL_SASL_STATE: 401,
  UNSUPPORTED_SASL_MECHANISM: 401,
  TOPIC_AUTHORIZATION_FAILED: 403,
  GROUP_AUTHORIZATION_FAILED: 403,
  CLUSTER_AUTHORIZATION_FAILED: 403,
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: 403,
  RESOURCE_NOT_FOUND: 404,
  UNKNOWN_TOPIC_OR_PARTITION: 404,
  GROUP_ID_NOT_FOUND: 404,
  UNKNOWN_MEMBER_ID: 404,
  GROUP_LIMIT_REACHED: 429,
  TOPIC_ALREADY_EXISTS: 409,
  NON_EMPTY_GROUP: 409,
  DUPLICATE_VOTER: 409,
  RECORD_TOO_LARGE: 413,
  MESSAGE_TOO_LARGE: 413,
  TOPIC_DELETION_DISABLED: 403,
  UNKNOWN: 500,
};

/** The HTTP status for an error code: 404 unknown, 409 exists, 413 too large, 503 retriable, 400 otherwise. */
export function httpStatusFor(code: ErrorCode, retriable: boolean): number {
  const s = STATUS[code];
  if (s !== undefined) return s;
  return retriable ? 503 : 400;
}

export function errorBody(err: MqError): { error: { code: ErrorCode; message: string; retriable: boolean } } {
  return { error: { code: err.code, message: err.message, retriable: err.retriable } };
}
