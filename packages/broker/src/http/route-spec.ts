/**
 * What a route declares where it is registered: its path parameters, query
 * parameters, JSON body and answers, as JSON Schema (2020-12, OpenAPI 3.1's
 * dialect). The same objects validate every request (request-validator.ts)
 * and make /openapi.json (openapi.ts): nothing is described twice. A schema
 * several routes share is made once with `component()`: validation inlines
 * it, the document names it once under components/schemas.
 */

/** A JSON Schema object. */
export type Schema = Readonly<Record<string, unknown>>;

/**
 * The error code of a value outside a schema's bounds (a pattern, a minimum,
 * an enum), instead of INVALID_REQUEST: `partition_count: 0` is
 * INVALID_PARTITIONS, as on the wire. A body or query value of the wrong
 * JSON type is always INVALID_REQUEST; a path parameter names a resource, so
 * any failure of its schema uses the code (partition "x" is 404
 * UNKNOWN_TOPIC_OR_PARTITION, like partition 7).
 */
export const ERROR_CODE = 'x-mq-error-code';

export interface ParamSpec {
  readonly schema: Schema;
  readonly description?: string;
  /** Query parameters only: path parameters are always required. */
  readonly required?: boolean;
}

export interface ResponseSpec {
  readonly description: string;
  /** The answer's schema; left out for an answer without a body (204). */
  readonly schema?: Schema;
  /** A media type other than JSON (Prometheus text). */
  readonly contentType?: string;
}

export interface BodySpec {
  readonly schema: Schema;
  /** An optional body left out reads as `{}` (its defaults applied). */
  readonly required: boolean;
  readonly description?: string;
}

export interface RouteSpec {
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  /** Path parameters: one per `{name}` of the pattern (the router checks). */
  readonly params?: Readonly<Record<string, ParamSpec>>;
  /** Query parameters. Others are ignored, as Kafka REST proxies do. */
  readonly query?: Readonly<Record<string, ParamSpec>>;
  readonly body?: BodySpec;
  /** Successful answers by status. */
  readonly responses: Readonly<Record<number, ResponseSpec>>;
  /**
   * Statuses of the errors the handler itself gives. What the server gives
   * on its own (400 from the schemas, 401/403 with security, 413/415 for a
   * body, 431, 503) is added by openapi.ts.
   */
  readonly errors?: readonly number[];
  /** 'open': no credentials needed even with security on (/health); 'basic': HTTP Basic or a client certificate, never a bearer token (POST /tokens). */
  readonly auth?: 'open' | 'basic';
}

/** A route outside the API (the web console's files): not validated, not in the document. */
export interface Undocumented {
  readonly documented: false;
}

export type RouteDeclaration = RouteSpec | Undocumented;

export function isDocumented(d: RouteDeclaration): d is RouteSpec {
  return !('documented' in d);
}

const names = new Map<object, string>();

/** A schema shared by several routes: the document refers to it by name (#/components/schemas/NAME). */
export function component<T extends Schema>(name: string, schema: T): T {
  names.set(schema, name);
  return schema;
}

export function componentName(schema: object): string | undefined {
  return names.get(schema);
}
