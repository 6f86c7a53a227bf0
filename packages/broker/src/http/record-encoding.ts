/**
 * How the HTTP API writes keys, values and header values in JSON: UTF-8 text (the default; a key or value that is a
 * JSON object, array, number or boolean is stored as its JSON text), base64, or JSON (keys and values are JSON
 * values stored as JSON text; header values stay text). Shared by the record routes and the HTTP consumers.
 */
import { MqError } from '@mq/protocol/errors';

export type Encoding = 'text' | 'base64' | 'json';

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A key or value as stored: null stays null (a tombstone, a null key). */
export function bytes(v: unknown, enc: Encoding, what: string): Buffer | null {
  if (v === null || v === undefined) return null;
  if (enc === 'json') return Buffer.from(JSON.stringify(v), 'utf8');
  if (typeof v !== 'string') {
    // Text: a JSON object, array, number or boolean is stored as its JSON text.
    if (enc === 'text' && (typeof v === 'object' || typeof v === 'number' || typeof v === 'boolean')) return Buffer.from(JSON.stringify(v), 'utf8');
    throw new MqError('INVALID_REQUEST', `${what} must be a string or null`);
  }
  if (enc === 'text') return Buffer.from(v, 'utf8');
  if (!BASE64.test(v)) throw new MqError('INVALID_REQUEST', `${what} is not valid base64`);
  return Buffer.from(v, 'base64');
}

/** A header value: text or base64 (a JSON request's header values are text). */
export function headerBytes(v: unknown, enc: Encoding, what: string): Buffer | null {
  return bytes(v, enc === 'json' ? 'text' : enc, what);
}

/** Marks a key or value that is not JSON when reading with encoding=json (it is shown as text instead). */
const NOT_JSON = Symbol('not json');

export function show(b: Buffer | null, enc: Encoding): unknown {
  if (b === null) return null;
  if (enc === 'base64') return b.toString('base64');
  const text = b.toString('utf8');
  if (enc !== 'json') return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { [NOT_JSON]: text };
  }
}

/** A read record's key or value field(s): the value, and for encoding=json a list of the fields that were not JSON. */
export function shownFields(key: Buffer | null, value: Buffer | null, enc: Encoding): Record<string, unknown> {
  const k = show(key, enc);
  const v = show(value, enc);
  const notJson: string[] = [];
  const plain = (x: unknown, name: string) => {
    if (x !== null && typeof x === 'object' && NOT_JSON in x) {
      notJson.push(name);
      return (x as { [NOT_JSON]: string })[NOT_JSON];
    }
    return x;
  };
  return { key: plain(k, 'key'), value: plain(v, 'value'), ...(notJson.length > 0 ? { not_json: notJson } : {}) };
}

/** A read record as the HTTP API answers it (record reads and HTTP consumer polls alike). */
export function recordJson(r: { offset: number; timestamp: number; key: Buffer | null; value: Buffer | null; headers: ReadonlyArray<{ key: string; value: Buffer | null }> }, enc: Encoding): Record<string, unknown> {
  return {
    offset: r.offset,
    timestamp: r.timestamp,
    ...shownFields(r.key, r.value, enc),
    headers: r.headers.map((h) => ({ key: h.key, value: show(h.value, enc === 'json' ? 'text' : enc) })),
  };
}
