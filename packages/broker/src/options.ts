/**
 * `startBroker` options (docs/CONTRACTS.md): defaults, and the one parser
 * that merges the configuration layers. Broker configuration, lowest to
 * highest precedence: built-in defaults, the values persisted in the data
 * directory, the config file, `options.config`. The explicit result is
 * written back to the data directory, so it survives a restart.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { MqError } from '@mq/protocol/errors';
import { parseProperties } from './config/config-def.js';

export interface BrokerOptions {
  brokerId?: number;
  dataDir?: string;
  host?: string;
  port?: number;
  httpPort?: number;
  /** Port of the Kafka-protocol listener (overrides kafka.listener.port; 0: any free port; -1: none). */
  kafkaPort?: number;
  /**
   * The Kafka port to try when neither `kafkaPort` nor kafka.listener.port is
   * set (`mq broker start` passes 9093 for a single broker): if it is in use
   * the broker starts without a Kafka listener and logs a warning.
   */
  defaultKafkaPort?: number;
  /** Broker configuration keys (see README), as strings. */
  config?: Record<string, string>;
  /** A `key=value` properties file (or `.json` object) of broker configuration. */
  configFile?: string;
}

export const DEFAULT_DATA_DIR = './mq-data';
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 9092;
export const DEFAULT_HTTP_PORT = 9080;
/** The Kafka listener port `mq broker start` tries for a single broker. */
export const DEFAULT_KAFKA_PORT = 9093;

export interface ParsedBrokerOptions {
  readonly brokerId: number | undefined;
  readonly dataDir: string;
  readonly host: string;
  readonly port: number;
  readonly httpPort: number;
  /** -1: the configuration decides (kafka.listener.port). */
  readonly kafkaPort: number;
  /** -1: none. */
  readonly defaultKafkaPort: number;
  /** Explicit configuration from the file and `config` (not yet merged with the persisted one). */
  readonly config: Readonly<Record<string, string>>;
}

function port(name: string, v: number | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  if (!Number.isInteger(v) || v < 0 || v > 65535) throw new MqError('INVALID_CONFIG', `${name} must be a port number 0..65535, got ${v}`);
  return v;
}

async function readConfigFile(file: string): Promise<Record<string, string>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (cause) {
    throw new MqError('INVALID_CONFIG', `cannot read config file ${file}: ${(cause as Error).message}`, { cause });
  }
  if (file.endsWith('.json')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (cause) {
      throw new MqError('INVALID_CONFIG', `config file ${file} is not valid JSON: ${(cause as Error).message}`, { cause });
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new MqError('INVALID_CONFIG', `config file ${file} must hold a JSON object`);
    }
    return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, String(v)]));
  }
  return parseProperties(text, file);
}

/** Normalises options; reads the config file. Throws INVALID_CONFIG with a clear message. */
export async function parseBrokerOptions(options: BrokerOptions = {}): Promise<ParsedBrokerOptions> {
  const fromFile = options.configFile ? await readConfigFile(options.configFile) : {};
  const config: Record<string, string> = { ...fromFile, ...(options.config ?? {}) };
  let brokerId = options.brokerId;
  if (brokerId === undefined && config['broker.id'] !== undefined) brokerId = Number(config['broker.id']);
  delete config['broker.id'];
  if (brokerId !== undefined && (!Number.isInteger(brokerId) || brokerId < 0 || brokerId > 2 ** 31 - 1)) {
    throw new MqError('INVALID_CONFIG', `broker id must be a non-negative integer, got ${brokerId}`);
  }
  const dataDir = path.resolve(options.dataDir ?? config['log.dirs'] ?? DEFAULT_DATA_DIR);
  delete config['log.dirs'];
  return Object.freeze({
    brokerId,
    dataDir,
    host: options.host ?? DEFAULT_HOST,
    port: port('port', options.port, DEFAULT_PORT),
    httpPort: port('httpPort', options.httpPort, DEFAULT_HTTP_PORT),
    kafkaPort: options.kafkaPort === -1 ? -1 : port('kafkaPort', options.kafkaPort, -1),
    defaultKafkaPort: port('defaultKafkaPort', options.defaultKafkaPort, -1),
    config: Object.freeze(config),
  });
}
