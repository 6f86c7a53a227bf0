/**
 * IncrementalAlterConfigs on a topic's own configs: the keys set and the keys
 * removed (a removed key falls back to the broker's default), merged, then
 * checked by the one topic-config validator.
 */
import { MqError } from '@mq/protocol/errors';
import { TOPIC_CONFIG, validateTopicConfigs } from './topic-config.js';

/** A topic's own configs after setting `set` and removing `remove` (no validation: the metadata log applies committed changes). */
export function mergeTopicConfigs(
  configs: Readonly<Record<string, string>>,
  set: Readonly<Record<string, string>>,
  remove: readonly string[],
): Record<string, string> {
  const out: Record<string, string> = { ...configs, ...set };
  for (const k of remove) delete out[k];
  return out;
}

/** The topic's own configs after the change; INVALID_CONFIG for an unknown key, a bad value, or a key both set and removed. */
export function alterTopicConfigs(
  configs: Readonly<Record<string, string>>,
  set: Readonly<Record<string, unknown>>,
  remove: readonly string[],
  maxFrameBytes: number,
): Record<string, string> {
  for (const k of remove) {
    if (!TOPIC_CONFIG.has(k)) throw new MqError('INVALID_CONFIG', `unknown topic config ${JSON.stringify(k.slice(0, 80))} (known: ${[...TOPIC_CONFIG.keys()].join(', ')})`);
    if (Object.hasOwn(set, k)) throw new MqError('INVALID_CONFIG', `topic config ${k} is both set and deleted`);
  }
  const checked = validateTopicConfigs(set, maxFrameBytes);
  return mergeTopicConfigs(configs, checked, remove);
}

/** Whether two topics' own configs are the same. */
export function sameTopicConfigs(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}
