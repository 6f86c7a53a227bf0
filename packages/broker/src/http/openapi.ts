/**
 * The OpenAPI 3.1 document served at /openapi.json, built from the route
 * table: each route's declared schemas (the ones that validate its requests)
 * become its operation, the shared ones (component()) are named once under
 * components/schemas, and the errors the server gives on its own are listed
 * for every operation they can reach. Undocumented routes (the console) are
 * left out.
 */
import type { ErrorCode } from '@mq/protocol/errors';
import { componentName, ERROR_CODE, isDocumented, type ParamSpec, type RouteSpec, type Schema } from './route-spec.js';
import { httpStatusFor, type Route } from './router.js';
import { ErrorBody } from './schemas.js';

type Json = Record<string, unknown>;

const ERROR_TEXT: Record<number, string> = {
  400: 'Invalid request: a path parameter, query parameter or body field that does not fit its schema (the message names it), or a refused value',
  401: 'Authentication required or failed (authentication.enabled=true): Authorization Basic (over TLS or from loopback) or Bearer',
  403: 'Not allowed by the ACLs (TOPIC_/GROUP_/CLUSTER_AUTHORIZATION_FAILED), or by the broker configuration',
  404: 'Unknown topic, partition, group or consumer instance',
  409: 'Already exists, or the group is not empty',
  413: 'Too large: the body over http.max.body.bytes, or a batch over max.message.bytes',
  415: 'The body is not application/json',
  429: 'Too many (HTTP consumer instances over http.consumer.max.instances)',
  431: 'More request headers than http.max.headers, or a head over http.max.header.bytes',
  503: 'Retriable: not available right now (the broker is starting or stopping, no leader, not enough replicas)',
};

const SECURITY_SCHEMES = {
  basic: { type: 'http', scheme: 'basic', description: 'A user of the broker (SCRAM credentials); accepted over TLS or from loopback' },
  bearer: { type: 'http', scheme: 'bearer', description: 'A token from POST /tokens, valid on the broker that issued it for http.token.lifetime.ms' },
  mutualTLS: { type: 'mutualTLS', description: 'A client certificate the broker verifies (tls.client.auth) names the principal' },
};

/** Visits every object in a schema tree (the schemas and their subschemas). */
const walk = (v: unknown, visit: (schema: Schema) => void): void => {
  if (Array.isArray(v)) v.forEach((x) => walk(x, visit));
  else if (typeof v === 'object' && v !== null) {
    visit(v as Schema);
    for (const x of Object.values(v)) walk(x, visit);
  }
};

/** Replaces each component by its $ref, collecting the components used (and those they use). */
function refs(v: unknown, used: Map<string, unknown>): unknown {
  if (Array.isArray(v)) return v.map((x) => refs(x, used));
  if (typeof v !== 'object' || v === null) return v;
  const name = componentName(v);
  if (name !== undefined) {
    if (!used.has(name)) {
      used.set(name, undefined); // claimed before recursing: a component may refer to others
      used.set(name, inline(v, used));
    }
    return { $ref: `#/components/schemas/${name}` };
  }
  return inline(v, used);
}

function inline(v: object, used: Map<string, unknown>): Json {
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, refs(x, used)]));
}

/** The statuses of the error codes a route's input schemas name (ERROR_CODE). */
function schemaErrorStatuses(spec: RouteSpec): number[] {
  const statuses = new Set<number>();
  const schemas = [...Object.values(spec.params ?? {}), ...Object.values(spec.query ?? {})].map((p) => p.schema);
  if (spec.body) schemas.push(spec.body.schema);
  walk(schemas, (s) => {
    const code = s[ERROR_CODE] as ErrorCode | undefined;
    if (code !== undefined) statuses.add(httpStatusFor(code, false));
  });
  return [...statuses];
}

/** What the server answers besides the handler: 400 from the schemas, 401/403 with security, 413/415 for a body, 431, 503. */
function errorStatuses(spec: RouteSpec): number[] {
  const s = new Set<number>(spec.errors ?? []);
  if (spec.params || spec.query || spec.body) s.add(400);
  for (const x of schemaErrorStatuses(spec)) s.add(x);
  if (spec.auth !== 'open') [401, 403].forEach((x) => s.add(x));
  if (spec.body) [413, 415].forEach((x) => s.add(x));
  [431, 503].forEach((x) => s.add(x));
  return [...s].sort((a, b) => a - b);
}

function parameters(where: 'path' | 'query', specs: Readonly<Record<string, ParamSpec>> | undefined, used: Map<string, unknown>): Json[] {
  return Object.entries(specs ?? {}).map(([name, p]) => ({
    name,
    in: where,
    required: where === 'path' || p.required === true,
    ...(p.description !== undefined ? { description: p.description } : {}),
    schema: refs(p.schema, used),
    ...(where === 'query' && p.schema.type === 'array' ? { style: 'form', explode: true } : {}),
  }));
}

function operation(spec: RouteSpec, used: Map<string, unknown>, usedErrors: Set<number>): Json {
  const responses: Json = {};
  for (const [status, r] of Object.entries(spec.responses)) {
    responses[status] = {
      description: r.description,
      ...(r.schema !== undefined ? { content: { [r.contentType ?? 'application/json']: { schema: refs(r.schema, used) } } } : {}),
    };
  }
  for (const status of errorStatuses(spec)) {
    usedErrors.add(status);
    responses[String(status)] = { $ref: `#/components/responses/Error${status}` };
  }
  const params = [...parameters('path', spec.params, used), ...parameters('query', spec.query, used)];
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    ...(spec.description !== undefined ? { description: spec.description } : {}),
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(spec.body
      ? {
          requestBody: {
            required: spec.body.required,
            ...(spec.body.description !== undefined ? { description: spec.body.description } : {}),
            content: { 'application/json': { schema: refs(spec.body.schema, used) } },
          },
        }
      : {}),
    responses,
    ...(spec.auth === 'open' ? { security: [] } : spec.auth === 'basic' ? { security: [{ basic: [] }, { mutualTLS: [] }] } : {}),
  };
}

export interface ApiInfo {
  version: string;
}

export function openApiDocument(routes: readonly Route[], info: ApiInfo): Json {
  const used = new Map<string, unknown>();
  const usedErrors = new Set<number>();
  const paths: Record<string, Json> = {};
  for (const r of routes) {
    if (!isDocumented(r.spec)) continue;
    (paths[r.pattern] ??= {})[r.method.toLowerCase()] = operation(r.spec, used, usedErrors);
  }
  const errorRef = usedErrors.size > 0 ? refs(ErrorBody, used) : undefined;
  return {
    openapi: '3.1.0',
    info: {
      title: 'mq broker HTTP API',
      version: info.version,
      description:
        'Topics, records, consumer groups and the cluster over HTTP/JSON. Every request is validated against the schemas ' +
        'below (the same ones, compiled by ajv); errors are {error: {code, message, retriable}}. In a cluster every broker ' +
        "serves the whole API: topic changes go through the controller, records to and from each partition's leader. " +
        'Credentials are needed only with authentication.enabled=true.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: '/', description: 'The broker that serves this document (each broker serves the whole API)' }],
    // No credentials unless the broker has authentication.enabled=true; then any of these.
    security: [{}, { basic: [] }, { bearer: [] }, { mutualTLS: [] }],
    paths,
    components: {
      schemas: Object.fromEntries([...used].sort(([a], [b]) => (a < b ? -1 : 1))),
      responses: Object.fromEntries(
        [...usedErrors].sort((a, b) => a - b).map((s) => [`Error${s}`, { description: ERROR_TEXT[s] ?? `HTTP ${s}`, content: { 'application/json': { schema: errorRef } } }]),
      ),
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}
