/**
 * Starts the Kafka listener of a broker: on --kafka-port (BrokerOptions.kafkaPort),
 * else kafka.listener.port, else the start command's default (9093 for
 * `mq broker start`), which is given up with a warning when it is in use
 * (an explicit port in use fails the start). Each broker advertises its own
 * Kafka address (kafka.advertised.listener overrides it).
 */
import type { Logger } from 'pino';
import { MqError } from '@mq/protocol/errors';
import type { BrokerConfig } from '../config/broker-config.js';
import type { BrokerRegistration } from '../controller/types.js';
import type { HandlerMap } from '../handlers/types.js';
import type { ConnectionQuotas } from '../quota/connection-limits.js';
import type { TlsSettings } from '../server/tls.js';
import type { Security } from '../security/security.js';
import type { ParsedBrokerOptions } from '../options.js';
import { KafkaServer } from './kafka-server.js';
import type { KafkaEndpoint } from './types.js';

export interface KafkaListener {
  readonly server: KafkaServer;
  readonly port: number;
  readonly advertised: KafkaEndpoint;
}

/** `host:port` of kafka.advertised.listener. */
export function parseAdvertisedListener(value: string): KafkaEndpoint | undefined {
  if (value.trim() === '') return undefined;
  const m = /^(.+):(\d{1,5})$/.exec(value.trim());
  const port = m ? Number(m[2]) : NaN;
  if (!m || port < 1 || port > 65535) throw new MqError('INVALID_CONFIG', `kafka.advertised.listener must be host:port, got "${value}"`);
  return { host: m[1]!.replace(/^\[(.*)\]$/, '$1'), port };
}

export async function startKafkaListener(
  opts: ParsedBrokerOptions,
  config: BrokerConfig,
  core: HandlerMap,
  metadata: { broker(id: number): BrokerRegistration | undefined },
  advertisedHost: string,
  oneNode: boolean,
  logger: Logger,
  security: Pick<Security, 'options' | 'mechanismsFor'>,
  tls?: TlsSettings,
  connectionQuotas?: ConnectionQuotas,
): Promise<KafkaListener | undefined> {
  const configured = config.int('kafka.listener.port');
  const explicit = opts.kafkaPort >= 0 ? opts.kafkaPort : configured;
  // The start command's default port is for a single broker: cluster members are given theirs (mq cluster start).
  const wanted = explicit >= 0 ? explicit : oneNode ? opts.defaultKafkaPort : -1;
  if (wanted < 0) return undefined;
  const override = parseAdvertisedListener(config.get('kafka.advertised.listener'));
  const log = logger.child({ component: 'kafka-listener' });
  const server = new KafkaServer(
    {
      host: opts.host,
      port: wanted,
      idleMs: config.int('connections.max.idle.ms'),
      frameTimeoutMs: config.int('connection.frame.timeout.ms'),
      ...(tls ? { tls } : {}),
      ...(connectionQuotas ? { connectionQuotas } : {}),
      sasl: { required: security.options.authentication, mechanisms: (encrypted) => security.mechanismsFor(encrypted) },
      limits: {
        maxFrameBytes: config.int('max.frame.bytes'),
        maxInFlight: config.int('max.in.flight.requests.per.connection'),
        maxFetchesInFlight: config.int('max.in.flight.fetches.per.connection'),
        maxBufferedBytes: config.int('connection.max.buffered.bytes'),
      },
    },
    core,
    (id) => {
      const b = metadata.broker(id);
      return b?.kafkaHost !== undefined && b.kafkaPort !== undefined ? { host: b.kafkaHost, port: b.kafkaPort } : undefined;
    },
    log,
  );
  let port: number;
  try {
    port = await server.listen();
  } catch (err) {
    await server.close(0);
    if (explicit < 0 && (err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      log.warn(`port ${wanted} is in use: no Kafka listener (Kafka clients cannot connect; give this broker one with --kafka-port N)`);
      return undefined;
    }
    throw err;
  }
  return { server, port, advertised: override ?? { host: advertisedHost, port } };
}
