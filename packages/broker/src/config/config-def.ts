/**
 * Typed configuration keys, Kafka style: every value travels and is stored as
 * a string, and is checked against its definition (type, range, allowed
 * values) before it is accepted. Broker keys and topic keys share this.
 */
import { MqError } from '@mq/protocol/errors';

export type ConfigType = 'int' | 'long' | 'boolean' | 'string' | 'enum';

export interface ConfigDef {
  readonly name: string;
  readonly type: ConfigType;
  /** The built-in default, as a string. */
  readonly default: string;
  readonly min?: number;
  readonly max?: number;
  /** Allowed values for `enum`. */
  readonly values?: readonly string[];
  readonly doc: string;
}

export type ConfigMap = Readonly<Record<string, string>>;

/** Normalises and checks one value; throws INVALID_CONFIG saying what is wrong. */
export function validateConfigValue(def: ConfigDef, raw: unknown): string {
  const value = typeof raw === 'number' || typeof raw === 'boolean' ? String(raw) : raw;
  if (typeof value !== 'string') {
    throw new MqError('INVALID_CONFIG', `config ${def.name} must be a string, got ${typeof raw}`);
  }
  const v = value.trim();
  switch (def.type) {
    case 'int':
    case 'long': {
      if (!/^-?\d+$/.test(v)) throw new MqError('INVALID_CONFIG', `config ${def.name}=${value} is not an integer`);
      const n = Number(v);
      const limit = def.type === 'int' ? 2 ** 31 - 1 : Number.MAX_SAFE_INTEGER;
      if (!Number.isSafeInteger(n) || Math.abs(n) > limit) {
        throw new MqError('INVALID_CONFIG', `config ${def.name}=${value} is out of range for a ${def.type}`);
      }
      if (def.min !== undefined && n < def.min) {
        throw new MqError('INVALID_CONFIG', `config ${def.name}=${value} is below the minimum ${def.min}`);
      }
      if (def.max !== undefined && n > def.max) {
        throw new MqError('INVALID_CONFIG', `config ${def.name}=${value} is above the maximum ${def.max}`);
      }
      return String(n);
    }
    case 'boolean': {
      const lower = v.toLowerCase();
      if (lower !== 'true' && lower !== 'false') {
        throw new MqError('INVALID_CONFIG', `config ${def.name}=${value} must be true or false`);
      }
      return lower;
    }
    case 'enum': {
      const found = def.values?.find((x) => x.toLowerCase() === v.toLowerCase());
      if (found === undefined) {
        throw new MqError('INVALID_CONFIG', `config ${def.name}=${value} must be one of ${def.values?.join(', ')}`);
      }
      return found;
    }
    case 'string':
      return v;
  }
}

/**
 * Checks every entry of `input` against `defs`; unknown keys are refused
 * (a typo must not be silently ignored). Returns a fresh normalised map.
 */
export function validateConfigs(
  defs: ReadonlyMap<string, ConfigDef>,
  input: Readonly<Record<string, unknown>>,
  what: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, raw] of Object.entries(input)) {
    const def = defs.get(key);
    if (!def) {
      throw new MqError('INVALID_CONFIG', `unknown ${what} config "${key}" (known: ${[...defs.keys()].join(', ')})`);
    }
    out[key] = validateConfigValue(def, raw);
  }
  return out;
}

export function defsByName(defs: readonly ConfigDef[]): ReadonlyMap<string, ConfigDef> {
  return new Map(defs.map((d) => [d.name, d]));
}

/** Parses a Java-style properties text (`key=value` or `key: value`, `#`/`!` comments). */
export function parseProperties(text: string, source = 'properties'): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  lines.forEach((line, i) => {
    const l = line.trim();
    if (l === '' || l.startsWith('#') || l.startsWith('!')) return;
    const m = /^([^=:\s]+)\s*[=:]\s*(.*)$/.exec(l);
    if (!m) throw new MqError('INVALID_CONFIG', `${source}:${i + 1}: expected key=value, got "${l}"`);
    out[m[1]!] = m[2]!;
  });
  return out;
}

/** Renders a properties text, keys sorted, with a leading comment. */
export function formatProperties(map: ConfigMap, comment?: string): string {
  const head = comment ? `# ${comment}\n` : '';
  return (
    head +
    Object.keys(map)
      .sort()
      .map((k) => `${k}=${map[k]}`)
      .join('\n') +
    '\n'
  );
}
