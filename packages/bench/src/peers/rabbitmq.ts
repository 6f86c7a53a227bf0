import { createRequire } from 'node:module';
import type { BenchTarget, TargetConsumer, TargetProducer } from '../target.js';
import { createPartitioner } from '../target.js';
import { ConfirmTracker } from './confirm-tracker.js';

export interface RabbitTargetOptions {
  host?: string;
  port: number;
  username?: string;
  password?: string;
  durability?: string;
  /** Replicas of each stream (`initial-cluster-size`, needs a cluster of that many nodes; default 1). */
  replicas?: number;
  /** Records per publish frame (the publisher's maxChunkLength). */
  chunk?: number;
  /** Chunks a consumer may have in flight (credits granted up front, one more per chunk received). */
  consumerCredits?: number;
}

/** Records per publish frame: the client's own default, and its fastest setting on this machine. */
export const DEFAULT_CHUNK = 100;
/** Chunks in flight to a consumer. */
export const DEFAULT_CONSUMER_CREDITS = 16;

export const RABBIT_DEFAULT_DURABILITY = 'stream (osiris segment files), confirm after write to the OS; no fsync before confirm';

type RabbitModule = typeof import('rabbitmq-stream-js-client');
type RabbitClient = Awaited<ReturnType<RabbitModule['connect']>>;
type RabbitPublisher = Awaited<ReturnType<RabbitClient['declarePublisher']>>;
type CreditPolicyModule = { creditsOnChunkReceived: (startFrom: number, step: number) => unknown };

interface Lane {
  publisher: RabbitPublisher;
  /** Mirrors the client's publishing ids (from 1, without a publisherRef) and settles records by their confirms. */
  confirms: ConfirmTracker;
  checked: boolean;
}

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
 * RabbitMQ Streams over rabbitmq-stream-js-client, used the way its fastest
 * documented path goes. A partition is one stream (`<topic>-<p>`). The
 * producer calls `publisher.send()` for every record without awaiting it
 * (the client packs `chunk` records per publish frame) and follows the
 * publish confirms by publishing id: the records sent to one stream in one
 * event-loop turn share one promise, settled once all their ids are
 * confirmed. (Sub-entry batching, `sendSubEntries`, publishes faster still,
 * but this client's reader decodes only the first sub-entry of each chunk
 * and silently drops the rest, so it cannot be read back.) Consumers grant credits as chunks arrive
 * (`creditsOnChunkReceived`), so several chunks are in flight instead of the
 * client's default of one at a time. A group splits the streams among its
 * members (p % members), the static assignment a Kafka group would make;
 * reading alone reads every stream from the first offset. A key only chooses
 * the stream (RabbitMQ stream messages have no key).
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
  const { creditsOnChunkReceived } = require('rabbitmq-stream-js-client/dist/consumer_credit_policy.js') as CreditPolicyModule;
  const credits = Math.max(1, options.consumerCredits ?? DEFAULT_CONSUMER_CREDITS);
  const creditPolicy = (): unknown => creditsOnChunkReceived(credits, 1);
  return {
    name: 'rabbitmq',
    durability: options.durability ?? RABBIT_DEFAULT_DURABILITY,
    async createTopic(topic, partitions) {
      for (let p = 0; p < partitions; p++) {
        await admin.deleteStream({ stream: stream(topic, p) }).catch(() => undefined);
        await admin.createStream({ stream: stream(topic, p), arguments: options.replicas === undefined ? {} : { 'initial-cluster-size': options.replicas } });
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
      const chunk = Math.max(1, options.chunk ?? DEFAULT_CHUNK);
      const lanes: Lane[] = [];
      for (let p = 0; p < o.partitions; p++) {
        const publisher = await client.declarePublisher({ stream: stream(o.topic, p), maxChunkLength: chunk });
        const lane: Lane = { publisher, confirms: new ConfirmTracker(), checked: false };
        // The client pools connections per stream, so each publisher has its
        // own connection and these confirms are its own.
        publisher.on('publish_confirm', (err: number | null, ids: bigint[]) => {
          const error = err === null ? null : `RabbitMQ publish error ${err}`;
          for (let i = 0; i < ids.length; i++) lane.confirms.confirm(Number(ids[i]), error);
        });
        lanes.push(lane);
      }
      let failed: unknown = null;
      const onSendError = (err: unknown): void => {
        failed ??= err;
        for (const lane of lanes) lane.confirms.failAll(err);
      };
      let turnScheduled = false;
      const oneAtATime = o.window === 1;
      const endTurn = (): void => {
        turnScheduled = false;
        for (const lane of lanes) lane.confirms.endGroup();
      };
      return {
        send(key, value) {
          if (failed !== null) return Promise.reject(failed);
          const lane = lanes[partitionOf(key)];
          // send() takes the next publishing id synchronously, before its
          // first await; the first send checks that the counts agree.
          const id = lane.confirms.nextId;
          const done = lane.confirms.add();
          const sent = lane.publisher.send(value);
          if (!lane.checked) {
            lane.checked = true;
            sent.then((r: { publishingId: bigint }) => {
              if (Number(r.publishingId) !== id) onSendError(new Error(`RabbitMQ publishing ids out of step (${r.publishingId} for ${id})`));
            }, onSendError);
          } else sent.catch(onSendError);
          if (oneAtATime) {
            // The workload awaits every record: send the frame now rather than on the client's next-turn flush.
            lane.confirms.endGroup();
            lane.publisher.flush().catch(onSendError);
          } else if (!turnScheduled) {
            turnScheduled = true;
            setImmediate(endTurn);
          }
          return done;
        },
        async flush() {
          for (const lane of lanes) await lane.publisher.flush();
          await Promise.all(lanes.map((l) => l.confirms.settled()));
        },
        async close() {
          for (const lane of lanes) await lane.publisher.close().catch(() => undefined);
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
              await client.declareConsumer(
                { stream: stream(o.topic, p), offset: rabbit.Offset.first(), creditPolicy: creditPolicy() as never },
                (msg: { content: Buffer }) => onRecord(msg.content, null),
              ),
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
