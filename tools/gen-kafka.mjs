#!/usr/bin/env node
// Generates the Kafka message codec (packages/kafka-protocol/src/gen/messages.ts)
// from the declarative descriptions in packages/kafka-protocol/schema/*.json,
// one file per API (format: packages/kafka-protocol/schema/README.md).
// Run: `npm run gen:kafka`. The output is committed; `--check` fails when it is stale (CI runs it).
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const schemaDir = path.join(root, 'packages/kafka-protocol/schema');
const outFile = path.join(root, 'packages/kafka-protocol/src/gen/messages.ts');
const check = process.argv.includes('--check');

const PRIMITIVES = {
  int8: { ts: 'number', read: 'r.int8()', write: (x) => `w.int8(${x})`, def: '0' },
  int16: { ts: 'number', read: 'r.int16()', write: (x) => `w.int16(${x})`, def: '0' },
  uint16: { ts: 'number', read: 'r.uint16()', write: (x) => `w.uint16(${x})`, def: '0' },
  int32: { ts: 'number', read: 'r.int32()', write: (x) => `w.int32(${x})`, def: '0' },
  int64: { ts: 'number', read: 'r.int64()', write: (x) => `w.int64(${x})`, def: '0' },
  float64: { ts: 'number', read: 'r.float64()', write: (x) => `w.float64(${x})`, def: '0' },
  bool: { ts: 'boolean', read: 'r.bool()', write: (x) => `w.bool(${x})`, def: 'false' },
  uuid: { ts: 'string', read: 'r.uuid()', write: (x) => `w.uuid(${x})`, def: "'00000000000000000000000000000000'" },
  string: { ts: 'string', read: 'r.string(flex)', nread: 'r.nullableString(flex)', write: (x) => `w.string(${x}, flex)`, nwrite: (x) => `w.nullableString(${x}, flex)`, def: "''" },
  bytes: { ts: 'Buffer', read: 'r.bytes(flex)', nread: 'r.nullableBytes(flex)', write: (x) => `w.bytes(${x}, flex)`, nwrite: (x) => `w.nullableBytes(${x}, flex)`, def: 'EMPTY' },
  records: { ts: 'Buffer', read: 'r.nullableBytes(flex)', nread: 'r.nullableBytes(flex)', write: (x) => `w.nullableBytes(${x}, flex)`, nwrite: (x) => `w.nullableBytes(${x}, flex)`, def: 'null', alwaysNullable: true },
};

function fail(file, msg) {
  console.error(`${file}: ${msg}`);
  process.exit(1);
}

/** "0+", "3-5", "7", "none" -> {lo, hi}. */
function range(text, file) {
  if (text === 'none') return { lo: Infinity, hi: -Infinity };
  let m = /^(\d+)\+$/.exec(text);
  if (m) return { lo: Number(m[1]), hi: Infinity };
  m = /^(\d+)-(\d+)$/.exec(text);
  if (m) return { lo: Number(m[1]), hi: Number(m[2]) };
  m = /^(\d+)$/.exec(text);
  if (m) return { lo: Number(m[1]), hi: Number(m[1]) };
  fail(file, `bad version range "${text}"`);
}

/** A field: "name type [versions] [null:versions] [default:json] [tag:n]", or [that, [fields]] for an array of structs. */
function parseField(spec, file) {
  const [head, sub] = Array.isArray(spec) ? spec : [spec, undefined];
  const tokens = head.trim().split(/\s+/);
  const [name, type] = tokens;
  if (!name || !type) fail(file, `field "${head}" needs a name and a type`);
  const f = { name, type, versions: { lo: 0, hi: Infinity }, nullable: { lo: Infinity, hi: -Infinity }, def: undefined, tag: undefined, fields: undefined };
  for (const t of tokens.slice(2)) {
    if (t.startsWith('null:')) f.nullable = range(t.slice(5), file);
    else if (t.startsWith('default:')) f.def = JSON.parse(t.slice(8));
    else if (t.startsWith('tag:')) f.tag = Number(t.slice(4));
    else f.versions = range(t, file);
  }
  const elem = type.startsWith('[]') ? type.slice(2) : undefined;
  f.array = elem !== undefined;
  f.elem = elem ?? type;
  if (PRIMITIVES[f.elem]) {
    if (sub) fail(file, `field ${name} of primitive type ${type} has sub-fields`);
  } else {
    if (!f.array) fail(file, `field ${name}: type ${type} is neither a primitive nor an array of structs`);
    if (!sub) fail(file, `field ${name}: struct ${f.elem} needs its fields`);
    f.fields = sub.map((s) => parseField(s, file));
  }
  return f;
}

const camel = (s) => s[0].toLowerCase() + s.slice(1);

/** A function's lines without an unused flex declaration, its version parameter named _v when unused. */
function tidy(lines) {
  const body = lines.slice(2).join('\n');
  const out = [...lines];
  if (!/\bflex\b/.test(body)) out.splice(1, 1);
  if (!/\bv\b/.test(out.slice(1).join('\n'))) out[0] = out[0].replace('v: number', '_v: number');
  if (out[0].includes(', o: Input<') && !/\bo\./.test(out.slice(1).join('\n'))) out[0] = out[0].replace(', o: Input<', ', _o: Input<');
  return out.join('\n') + '\n';
}

class Gen {
  constructor(api, file) {
    this.api = api;
    this.file = file;
    this.min = api.supported.lo;
    this.max = api.supported.hi;
    this.flex = api.flexible.lo;
    this.types = [];
    this.fns = [];
    this.structNames = new Set();
  }

  /** A condition on v for range r within the supported versions: 'true', 'false' or an expression. */
  cond(r) {
    const lo = Math.max(r.lo, this.min);
    const hi = Math.min(r.hi, this.max);
    if (lo > hi) return 'false';
    const parts = [];
    if (lo > this.min) parts.push(`v >= ${lo}`);
    if (hi < this.max) parts.push(`v <= ${hi}`);
    return parts.length === 0 ? 'true' : parts.join(' && ');
  }

  flexExpr() {
    return this.cond({ lo: this.flex, hi: Infinity });
  }

  /** Whether the field can be null in some supported version. */
  nullable(f) {
    if (!f.array && PRIMITIVES[f.elem].alwaysNullable) return true;
    return this.cond(f.nullable) !== 'false';
  }

  tsType(f) {
    const base = f.fields ? `${f.elem}[]` : f.array ? `${PRIMITIVES[f.elem].ts}[]` : PRIMITIVES[f.elem].ts;
    return this.nullable(f) ? `${base} | null` : base;
  }

  defaultExpr(f) {
    if (f.def !== undefined) return f.def === null ? 'null' : JSON.stringify(f.def).replace(/"/g, "'");
    if (f.array) return '[]';
    return PRIMITIVES[f.elem].def;
  }

  readExpr(f) {
    const nul = this.nullable(f);
    if (f.array) {
      const item = f.fields ? `(r) => read${f.elem}(r, v)` : `(r) => ${PRIMITIVES[f.elem].read}`;
      const e = `readArray(r, flex, ${item})`;
      return nul ? e : `${e} ?? []`;
    }
    const p = PRIMITIVES[f.elem];
    return nul && p.nread ? p.nread : p.read;
  }

  writeStmt(f, x) {
    const nul = this.nullable(f);
    if (f.array) {
      const item = f.fields ? `(w, x) => write${f.elem}(w, v, x)` : `(w, x) => ${PRIMITIVES[f.elem].write('x')}`;
      return `writeArray(w, flex, ${x}, ${nul}, ${item});`;
    }
    const p = PRIMITIVES[f.elem];
    const def = this.defaultExpr(f);
    // A nullable field keeps an explicit null; a field left out gets its default.
    const value = def === 'null' ? x : nul ? `${x} === undefined ? ${def} : ${x}` : `${x} ?? ${def}`;
    return `${(nul && p.nwrite ? p.nwrite : p.write)(value)};`;
  }

  struct(name, fields) {
    if (this.structNames.has(name)) fail(this.file, `struct ${name} is declared twice`);
    this.structNames.add(name);
    for (const f of fields) if (f.fields) this.struct(f.elem, f.fields);
    const flex = this.flexExpr();
    const live = fields.filter((f) => this.cond(f.versions) !== 'false');
    this.types.push(`export interface ${name} {\n${fields.map((f) => `  ${camel(f.name)}: ${this.tsType(f)};`).join('\n')}\n}\n`);
    const usesFlex = flex !== 'false';
    // read
    const r = [];
    r.push(`export function read${name}(r: Reader, v: number): ${name} {`);
    r.push(`  const flex = ${flex};`);
    r.push(`  const o: ${name} = { ${fields.map((f) => `${camel(f.name)}: ${this.defaultExpr(f)}`).join(', ')} };`);
    const tagged = [];
    for (const f of live) {
      const c = this.cond(f.versions);
      if (f.tag !== undefined) {
        tagged.push(f);
        continue;
      }
      const stmt = `o.${camel(f.name)} = ${this.readExpr(f)};`;
      r.push(c === 'true' ? `  ${stmt}` : `  if (${c}) ${stmt}`);
    }
    if (usesFlex) {
      if (tagged.length === 0) r.push(`  if (flex) r.taggedFields(() => false);`);
      else {
        r.push(`  if (flex) {`);
        r.push(`    r.taggedFields((tag, r) => {`);
        r.push(`      switch (tag) {`);
        for (const f of tagged) {
          const c = this.cond(f.versions);
          r.push(`        case ${f.tag}:`);
          r.push(`          if (!(${c})) return false;`);
          r.push(`          o.${camel(f.name)} = ${this.readExpr(f)};`);
          r.push(`          return true;`);
        }
        r.push(`        default:`);
        r.push(`          return false;`);
        r.push(`      }`);
        r.push(`    });`);
        r.push(`  }`);
      }
    }
    r.push(`  return o;`);
    r.push(`}`);
    // write
    const w = [];
    w.push(`export function write${name}(w: Writer, v: number, o: Input<${name}>): void {`);
    w.push(`  const flex = ${flex};`);
    for (const f of live) {
      if (f.tag !== undefined) continue;
      const c = this.cond(f.versions);
      const stmt = this.writeStmt(f, `o.${camel(f.name)}`);
      w.push(c === 'true' ? `  ${stmt}` : `  if (${c}) ${stmt}`);
    }
    if (usesFlex) {
      if (tagged.length === 0) w.push(`  if (flex) w.uvarint(0);`);
      else {
        w.push(`  if (flex) {`);
        w.push(`    const tags: Array<readonly [number, (w: Writer) => void]> = [];`);
        for (const f of [...tagged].sort((a, b) => a.tag - b.tag)) {
          const c = this.cond(f.versions);
          const x = `o.${camel(f.name)}`;
          w.push(`    if (${c === 'true' ? '' : `(${c}) && `}${x} !== undefined && ${x} !== ${this.defaultExpr(f)}) tags.push([${f.tag}, (w) => { ${this.writeStmt(f, x)} }]);`);
        }
        w.push(`    w.taggedFields(tags);`);
        w.push(`  }`);
      }
    }
    w.push(`}`);
    this.fns.push(tidy(r), tidy(w));
  }
}

const files = fs.readdirSync(schemaDir).filter((f) => f.endsWith('.json')).sort();
const apis = [];
const out = [];
const seenKeys = new Set();
for (const file of files) {
  const api = JSON.parse(fs.readFileSync(path.join(schemaDir, file), 'utf8'));
  if (api.data !== undefined) {
    // A data structure carried inside a message (the consumer protocol's subscription and assignment): a codec, no API.
    for (const k of ['data', 'versions', 'flexible', 'fields']) if (api[k] === undefined) fail(file, `missing "${k}"`);
    api.supported = range(api.versions, file);
    api.flexible = range(api.flexible, file);
    const g = new Gen(api, file);
    g.struct(api.data, api.fields.map((s) => parseField(s, file)));
    out.push(`// ${api.data} (data), versions ${api.supported.lo}-${api.supported.hi}: schema/${file}\n`);
    out.push(...g.types, ...g.fns);
    continue;
  }
  for (const k of ['api', 'key', 'versions', 'flexible', 'request', 'response']) if (api[k] === undefined) fail(file, `missing "${k}"`);
  if (seenKeys.has(api.key)) fail(file, `api key ${api.key} is described twice`);
  seenKeys.add(api.key);
  api.supported = range(api.versions, file);
  api.flexible = range(api.flexible, file);
  if (!Number.isFinite(api.supported.hi)) fail(file, 'versions must be a closed range (what mq serves)');
  const g = new Gen(api, file);
  g.struct(`${api.api}Request`, api.request.map((s) => parseField(s, file)));
  g.struct(`${api.api}Response`, api.response.map((s) => parseField(s, file)));
  out.push(`// ${api.api} (key ${api.key}), versions ${api.supported.lo}-${api.supported.hi}, flexible ${Number.isFinite(api.flexible.lo) ? `${api.flexible.lo}+` : 'none'}: schema/${file}\n`);
  out.push(...g.types, ...g.fns);
  const flexFrom = Number.isFinite(api.flexible.lo) ? api.flexible.lo : 'Infinity';
  out.push(
    `export const ${api.api}Api: ApiDef<${api.api}Request, ${api.api}Response> = {\n` +
      `  key: ${api.key},\n  name: '${api.api}',\n  minVersion: ${api.supported.lo},\n  maxVersion: ${api.supported.hi},\n  flexibleFrom: ${flexFrom},\n` +
      `  readRequest: read${api.api}Request,\n  writeRequest: write${api.api}Request,\n  readResponse: read${api.api}Response,\n  writeResponse: write${api.api}Response,\n};\n`,
  );
  apis.push(api);
}

const header = `// Generated by tools/gen-kafka.mjs from packages/kafka-protocol/schema/*.json. Do not edit.
/* eslint-disable */
import type { Reader } from '../reader.js';
import type { Writer } from '../writer.js';

/** What an encoder accepts: any field may be left out (its default is written). */
export type Input<T> = T extends Buffer ? T : T extends ReadonlyArray<infer U> ? ReadonlyArray<Input<U>> : T extends object ? { readonly [K in keyof T]?: Input<T[K]> | undefined } : T;

/** One API: its key, the versions mq serves, the first flexible version, and its codec. */
export interface ApiDef<Req, Res> {
  readonly key: number;
  readonly name: string;
  readonly minVersion: number;
  readonly maxVersion: number;
  readonly flexibleFrom: number;
  readRequest(r: Reader, v: number): Req;
  writeRequest(w: Writer, v: number, o: Input<Req>): void;
  readResponse(r: Reader, v: number): Res;
  writeResponse(w: Writer, v: number, o: Input<Res>): void;
}

/** The default of a bytes field. */
export const EMPTY: Buffer = Buffer.alloc(0);

function readArray<T>(r: Reader, flex: boolean, item: (r: Reader) => T): T[] | null {
  const n = r.arrayLength(flex);
  if (n < 0) return null;
  const a: T[] = new Array<T>(n);
  for (let i = 0; i < n; i++) a[i] = item(r);
  return a;
}

function writeArray<T>(w: Writer, flex: boolean, a: ReadonlyArray<T> | null | undefined, nullable: boolean, item: (w: Writer, x: T) => void): void {
  if (a === null || a === undefined) {
    w.arrayLength(nullable ? -1 : 0, flex);
    return;
  }
  w.arrayLength(a.length, flex);
  for (const x of a) item(w, x);
}

`;
const footer = `
/** Every API mq serves, by key. */
export const APIS: ReadonlyArray<ApiDef<unknown, unknown>> = [${apis.map((a) => `${a.api}Api`).join(', ')}] as unknown as ReadonlyArray<ApiDef<unknown, unknown>>;
`;
const code = header + out.join('\n') + footer;
const old = fs.existsSync(outFile) ? fs.readFileSync(outFile, 'utf8') : '';
if (old !== code) {
  if (check) {
    console.error(`stale ${path.relative(root, outFile)}: run npm run gen:kafka`);
    process.exit(1);
  }
  fs.mkdirSync(path.dirname(outFile), { recursive: true });
  fs.writeFileSync(outFile, code);
  console.log(`wrote ${path.relative(root, outFile)} (${apis.length} APIs)`);
} else {
  console.log(`${path.relative(root, outFile)} is up to date (${apis.length} APIs)`);
}
