import { createRequire } from 'node:module';
import type { BenchTarget, TargetConsumer, TargetProducer } from '../target.js';
import { createPartitioner } from '../target.js';

export interface RabbitTargetOptions {
  host?: string;
  port: number;
  username?: string;
  password?: string;
  durability?: string;
  /** Records per publish frame (the client's maxChunkLength; default 100). */
  chunk?: number;
}

export const RABBIT_DEFAULT_DURABILITY = 'stream (osiris segment files), confirm after write to the OS; no fsync before confirm';

type RabbitModule = typeof import('rabbitmq-stream-js-client');
type RabbitClient = Awaited<ReturnType<RabbitModule['connect']>>;

const require = createRequire(import.meta.url);
let patched = false;

/**
 * The Debian RabbitMQ 3.10 server closes the connection when a client sends
 * the ExchangeCommandVersions request (3.10 has no such command), and
 * rabbitmq-stream-js-client 1.x always sends it after opening. Skip that
 * step: the client then falls back to the 3.10-era command versions it
 * declares for itself, which this server speaks.
 */
function skipCommandVersionsExchange(): void {
  if (patched) return;
  const { Connection } = require('rabbitmq-stream-js-client/dist/connection.js') as {
    Connection: { prototype: { exchangeCommandVersions: () => Promise<boolean> } };
  };
  Connection.prototype.exchangeCommandVersions = async function exchangeCommandVersions() {
    return true;
  };
  patched = true;
}

/**
 * RabbitMQ Streams over rabbitmq-stream-js-client. A partition is one stream
 * (`<topic>-<p>`). The publisher batches up to `chunk` records per frame and a
 * send is acknowledged by the server's publish confirm. A group splits the
 * streams among its members (p % members), the static assignment a Kafka
 * group would make; reading alone reads every stream from the first offset.
 */
export async function createRabbitTarget(options: RabbitTargetOptions): Promise<BenchTarget> {
  skipCommandVersionsExchange();
  const rabbit = require('rabbitmq-stream-js-client') as RabbitModule;
  const clients: RabbitClient[] = [];
  const open = async (): Promise<RabbitClient> => {
    const c = await rabbit.connect({
      hostname: options.host ?? '127.0.0.1',
      port: options.port,
      username: options.username ?? 'guest',
      password: options.password ?? 'guest',
      vhost: '/',
    });
    clients.push(c);
    return c;
  };
  const admin = await open();
  const stream = (topic: string, p: number): string => `${topic}-${p}`;
  return {
    name: 'rabbitmq',
    durability: options.durability ?? RABBIT_DEFAULT_DURABILITY,
    async createTopic(topic, partitions) {
      for (let p = 0; p < partitions; p++) {
        await admin.deleteStream({ stream: stream(topic, p) }).catch(() => undefined);
        await admin.createStream({ stream: stream(topic, p), arguments: {} });
      }
    },
    async deleteTopic(topic) {
      for (let p = 0; p < 1024; p++) {
        const ok = await admin.deleteStream({ stream: stream(topic, p) }).then(
          () => true,
          () => false,
        );
        if (!ok) break;
      }
    },
    async createProducer(o): Promise<TargetProducer> {
      const client = await open();
      const partitionOf = createPartitioner(o.partitions);
      const publishers: Array<Awaited<ReturnType<RabbitClient['declarePublisher']>>> = [];
      for (let p = 0; p < o.partitions; p++) {
        const publisher = await client.declarePublisher({ stream: stream(o.topic, p), maxChunkLength: options.chunk ?? 100 });
        publishers.push(publisher);
      }
      // Confirms arrive per connection; publishing ids are per publisher, so key by (publisher index, id).
      const pendingBy = publishers.map(() => new Map<bigint, { resolve: () => void; reject: (e: unknown) => void }>());
      // A confirm that arrives before send() has told us its id waits here (bounded by the window).
      const earlyBy = publishers.map(() => new Map<bigint, number | null>());
      publishers.forEach((publisher, p) => {
        publisher.on('publish_confirm', (err: number | null, ids: bigint[]) => {
          const pending = pendingBy[p];
          for (const id of ids) {
            const w = pending.get(id);
            if (!w) {
              earlyBy[p].set(id, err);
              continue;
            }
            pending.delete(id);
            if (err === null) w.resolve();
            else w.reject(new Error(`RabbitMQ publish error ${err}`));
          }
        });
      });
      return {
        send(key, value) {
          const p = partitionOf(key);
          return new Promise<void>((resolve, reject) => {
            publishers[p].send(value).then((r: { publishingId: bigint }) => {
              const early = earlyBy[p];
              if (early.has(r.publishingId)) {
                const err = early.get(r.publishingId);
                early.delete(r.publishingId);
                if (err === null) resolve();
                else reject(new Error(`RabbitMQ publish error ${err}`));
              } else pendingBy[p].set(r.publishingId, { resolve, reject });
            }, reject);
          });
        },
        async flush() {
          for (const pub of publishers) await pub.flush();
        },
        async close() {
          for (const pub of publishers) await pub.close().catch(() => undefined);
        },
      };
    },
    async createConsumer(o): Promise<TargetConsumer> {
      const client = await open();
      const consumers: Array<{ close: () => Promise<unknown> }> = [];
      return {
        async start(onRecord) {
          for (let p = 0; p < o.partitions; p++) {
            if (o.group !== undefined && p % o.members !== o.member) continue;
            consumers.push(
              await client.declareConsumer({ stream: stream(o.topic, p), offset: rabbit.Offset.first() }, (msg: { content: Buffer }) => onRecord(msg.content, null)),
            );
          }
        },
        async close() {
          for (const c of consumers) await c.close().catch(() => undefined);
        },
      };
    },
    async close() {
      await Promise.allSettled(clients.map((c) => c.close()));
    },
  };
}
