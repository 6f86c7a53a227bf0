/**
 * The one request validator: each route's declared schemas (route-spec.ts)
 * compiled by ajv into one function over `{params, query, body}`. Path and
 * query values are text: each is read as its schema's type (integer,
 * boolean, array for a repeated parameter) before validation; undeclared
 * query parameters are ignored. Defaults the schemas declare are filled in.
 * A refusal is a typed error naming the field (`query parameter "max_bytes"
 * must be >= 1 (got 0)`), INVALID_REQUEST unless the schema names its own
 * code (ERROR_CODE).
 */
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import { MqError, ERROR_CODES, type ErrorCode } from '@mq/protocol/errors';
import { ERROR_CODE, type ParamSpec, type RouteSpec, type Schema } from './route-spec.js';

/** What the handler gets: path and query values in their declared types with defaults, and the JSON body. */
export interface RequestInput {
  readonly params: Readonly<Record<string, unknown>>;
  readonly query: Readonly<Record<string, unknown>>;
  readonly body: unknown;
}

export interface RawRequest {
  /** Decoded path parameters. */
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** The parsed JSON body; undefined when none was sent. */
  readonly body: unknown;
}

export type RequestValidator = (raw: RawRequest) => RequestInput;

const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, useDefaults: true, verbose: true, allErrors: false });
ajv.addKeyword({ keyword: ERROR_CODE, schemaType: 'string' });

/** The JSON type a path or query value is read as: its schema's `type`, or that of the schema it wraps (allOf). */
function typeOf(schema: Schema): unknown {
  if (schema.type !== undefined) return schema.type;
  const all = schema.allOf as Schema[] | undefined;
  return all?.length === 1 ? typeOf(all[0]!) : undefined;
}

function fromText(schema: Schema, text: string): unknown {
  const type = typeOf(schema);
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  if (type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

function objectOf(specs: Readonly<Record<string, ParamSpec>> | undefined, allRequired: boolean): Schema {
  const entries = Object.entries(specs ?? {});
  return {
    type: 'object',
    properties: Object.fromEntries(entries.map(([name, p]) => [name, p.schema])),
    required: entries.filter(([, p]) => allRequired || p.required === true).map(([name]) => name),
  };
}

export function compileValidator(spec: RouteSpec): RequestValidator {
  const validate = ajv.compile({
    type: 'object',
    properties: {
      params: objectOf(spec.params, true),
      query: objectOf(spec.query, false),
      ...(spec.body ? { body: spec.body.schema } : {}),
    },
    required: ['params', 'query'],
  });
  const query = Object.entries(spec.query ?? {});
  const optionalObjectBody = spec.body !== undefined && !spec.body.required && spec.body.schema.type === 'object';
  return (raw) => {
    const params: Record<string, unknown> = {};
    for (const [name, p] of Object.entries(spec.params ?? {})) params[name] = fromText(p.schema, raw.params[name] ?? '');
    const q: Record<string, unknown> = {};
    for (const [name, p] of query) {
      if (typeOf(p.schema) === 'array') {
        const items = (p.schema.items ?? {}) as Schema;
        const all = raw.query.getAll(name).filter((v) => v !== '');
        if (all.length > 0) q[name] = all.map((v) => fromText(items, v));
      } else {
        const v = raw.query.get(name);
        // An empty value (?offset=) is left out, as if not given.
        if (v !== null && v !== '') q[name] = fromText(p.schema, v);
      }
    }
    let body = raw.body;
    if (body === undefined && spec.body?.required) throw new MqError('INVALID_REQUEST', 'the request needs a JSON body', { retriable: false });
    if (body === undefined && optionalObjectBody) body = {};
    const data: Record<string, unknown> = { params, query: q, ...(body !== undefined ? { body } : {}) };
    if (!validate(data)) throw refusal(validate.errors ?? []);
    return { params, query: q, body: data.body };
  };
}

const COMBINATORS = new Set(['oneOf', 'anyOf', 'allOf', 'if']);

/** `path parameter "partition"`, `query parameter "max_bytes"`, `the body`, `body.records[2].value`. */
function field(path: string): string {
  const [where, name, ...rest] = path.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (where === 'params') return `path parameter "${name}"`;
  if (where === 'query') return `query parameter "${name}"`;
  if (name === undefined) return 'the body';
  return ['body', name, ...rest].map((s, i) => (i === 0 ? s : /^\d+$/.test(s) ? `[${s}]` : /^[A-Za-z_][\w]*$/.test(s) ? `.${s}` : `[${JSON.stringify(s)}]`)).join('');
}

function shown(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

function depth(e: ErrorObject): number {
  return e.instancePath === '' ? 0 : e.instancePath.split('/').length;
}

/** A constraint that failed ranks above a wrong type (often just a oneOf branch that does not apply), which ranks above a combinator's summary. */
function rank(e: ErrorObject): number {
  return COMBINATORS.has(e.keyword) ? 0 : e.keyword === 'type' ? 1 : 2;
}

/** The most useful of ajv's errors: the deepest field, then the best rank, then the first. */
function pick(errors: readonly ErrorObject[]): ErrorObject | undefined {
  let best: ErrorObject | undefined;
  for (const e of errors) {
    if (!best || depth(e) > depth(best) || (depth(e) === depth(best) && rank(e) > rank(best))) best = e;
  }
  return best;
}

/** The typed error for a request the schemas refuse, naming the field. */
export function refusal(errors: readonly ErrorObject[]): MqError {
  const e = pick(errors);
  if (!e) return new MqError('INVALID_REQUEST', 'the request does not fit its schema', { retriable: false });
  const where = field(e.instancePath);
  const p = e.params as Record<string, unknown>;
  let message: string;
  switch (e.keyword) {
    case 'required':
      message = e.instancePath === '' ? 'the request needs a JSON body' : `${field(`${e.instancePath}/${String(p.missingProperty)}`)} is required`;
      break;
    case 'additionalProperties':
      message = `${where} has an unknown field "${String(p.additionalProperty)}"`;
      break;
    case 'type': {
      // Several branches of a oneOf may each want a type: name them all.
      const types = [...new Set(errors.filter((x) => x.keyword === 'type' && x.instancePath === e.instancePath).flatMap((x) => String((x.params as { type: string }).type).split(',')))];
      message = `${where} must be ${types.join(' or ')} (got ${shown(e.data)})`;
      break;
    }
    case 'enum':
      message = `${where} must be one of ${(p.allowedValues as unknown[]).map(shown).join(', ')} (got ${shown(e.data)})`;
      break;
    case 'not':
      message = `${where} must not be ${shown(e.data)}`;
      break;
    default:
      message = `${where} ${e.message ?? 'is not valid'}${COMBINATORS.has(e.keyword) ? '' : ` (got ${shown(e.data)})`}`;
  }
  const inPath = e.instancePath.startsWith('/params/');
  const named = e.parentSchema?.[ERROR_CODE] as ErrorCode | undefined;
  const code: ErrorCode = named !== undefined && named in ERROR_CODES && (inPath || e.keyword !== 'type') ? named : 'INVALID_REQUEST';
  return new MqError(code, message, { retriable: false });
}
