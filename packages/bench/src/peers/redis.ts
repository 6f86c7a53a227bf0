import { Redis } from 'ioredis';
import type { BenchTarget, TargetConsumer, TargetProducer } from '../target.js';
import { createPartitioner } from '../target.js';

export interface RedisTargetOptions {
  host?: string;
  port: number;
  /** What the server's configuration makes an ack mean (stated in results). */
  durability?: string;
  /** Read with XREADGROUP + XACK when a group is given (default), or always XREAD. */
  groupMode?: 'xreadgroup' | 'xread';
}

export const REDIS_DEFAULT_DURABILITY = 'appendonly yes, appendfsync everysec (AOF written before the reply, fsync once a second)';

/** Commands in one pipeline. */
const PIPELINE_MAX = 1000;
/** Entries one XREAD asks for. */
const READ_COUNT = 5000;

/**
 * Redis Streams over ioredis. A partition is one stream key
 * (`<topic>:<p>`). Producers pipeline XADD (one EXEC-less pipeline per event
 * loop turn, at most 1,000 commands, several in flight), or send each XADD
 * at once when the workload awaits every record (window 1); reading alone is XREAD from 0 over
 * every partition key, a group is XREADGROUP + XACK.
 */
export async function createRedisTarget(options: RedisTargetOptions): Promise<BenchTarget> {
  const clients: Redis[] = [];
  const open = async (): Promise<Redis> => {
    const r = new Redis({ host: options.host ?? '127.0.0.1', port: options.port, lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: true });
    await r.connect();
    clients.push(r);
    return r;
  };
  const admin = await open();
  const key = (topic: string, p: number): string => `${topic}:${p}`;
  return {
    name: 'redis',
    durability: options.durability ?? REDIS_DEFAULT_DURABILITY,
    async createTopic(topic, partitions) {
      for (let p = 0; p < partitions; p++) await admin.del(key(topic, p));
    },
    async deleteTopic(topic) {
      const keys = await admin.keys(`${topic}:*`);
      if (keys.length > 0) await admin.del(...keys);
    },
    async createProducer(o): Promise<TargetProducer> {
      const r = await open();
      const partitionOf = createPartitioner(o.partitions);
      const keys = Array.from({ length: o.partitions }, (_, p) => key(o.topic, p));
      let pipeline = r.pipeline();
      let queued = 0;
      let pending: { promise: Promise<unknown>; resolve: () => void; reject: (e: unknown) => void } | null = null;
      let last: Promise<unknown> = Promise.resolve();
      const newPending = (): NonNullable<typeof pending> => {
        let resolve!: () => void;
        let reject!: (e: unknown) => void;
        const promise = new Promise<void>((res, rej) => {
          resolve = res;
          reject = rej;
        });
        promise.catch(() => undefined);
        return { promise, resolve, reject };
      };
      const exec = (): void => {
        if (queued === 0 || pending === null) return;
        const p = pipeline;
        const done = pending;
        pipeline = r.pipeline();
        queued = 0;
        pending = null;
        last = p.exec().then(
          (results) => {
            const failed = results?.find(([err]) => err !== null);
            if (failed) done.reject(failed[0]);
            else done.resolve();
          },
          (err: unknown) => done.reject(err),
        );
      };
      if (o.window === 1) {
        // One at a time: a plain XADD goes to the socket at once (a pipeline would wait for the next turn).
        return {
          send(k, value) {
            const stream = keys[partitionOf(k)];
            return k === undefined ? r.xadd(stream, '*', 'v', value) : r.xadd(stream, '*', 'k', k, 'v', value);
          },
          async flush() {},
          async close() {
            r.disconnect();
          },
        };
      }
      return {
        send(k, value) {
          if (pending === null) {
            pending = newPending();
            setImmediate(exec);
          }
          const current = pending;
          // xaddBuffer: the reply (the new entry's id) stays a Buffer, not decoded to a string per record.
          if (k === undefined) pipeline.xaddBuffer(keys[partitionOf(k)], '*', 'v', value);
          else pipeline.xaddBuffer(keys[partitionOf(k)], '*', 'k', k, 'v', value);
          queued++;
          if (queued >= PIPELINE_MAX) exec();
          return current.promise;
        },
        async flush() {
          exec();
          await last.catch(() => undefined);
        },
        async close() {
          exec();
          await last.catch(() => undefined);
          r.disconnect();
        },
      };
    },
    async createConsumer(o): Promise<TargetConsumer> {
      const r = await open();
      const keys = Array.from({ length: o.partitions }, (_, p) => key(o.topic, p));
      const useGroup = o.group !== undefined && options.groupMode !== 'xread';
      let running = true;
      let loop: Promise<void> = Promise.resolve();
      return {
        async start(onRecord) {
          if (useGroup) {
            for (const k of keys) {
              await r.xgroup('CREATE', k, o.group as string, '0', 'MKSTREAM').catch((e: Error) => {
                if (!/BUSYGROUP/.test(e.message)) throw e;
              });
            }
          }
          const ids = keys.map(() => '0');
          const consumerName = `c${o.member}`;
          const deliver = (fields: Buffer[]): void => {
            let value: Buffer | null = null;
            let k: Buffer | null = null;
            for (let i = 0; i + 1 < fields.length; i += 2) {
              const f = fields[i];
              if (f.length === 1 && f[0] === 0x76) value = fields[i + 1];
              else if (f.length === 1 && f[0] === 0x6b) k = fields[i + 1];
            }
            if (value !== null) onRecord(value, k);
          };
          loop = (async () => {
            while (running) {
              const reply = (useGroup
                ? await r.callBuffer('XREADGROUP', 'GROUP', o.group as string, consumerName, 'COUNT', READ_COUNT, 'BLOCK', 100, 'STREAMS', ...keys, ...keys.map(() => '>'))
                : await r.xreadBuffer('COUNT', READ_COUNT, 'BLOCK', 100, 'STREAMS', ...keys, ...ids)) as Array<[Buffer, Array<[Buffer, Buffer[]]>]> | null;
              if (!reply) continue;
              for (const [streamKey, entries] of reply) {
                if (entries.length === 0) continue;
                for (const [, fields] of entries) deliver(fields);
                const lastId = entries[entries.length - 1][0].toString();
                // XACK goes down the same connection ahead of the next read; no round trip is awaited.
                if (useGroup) r.xack(streamKey, o.group as string, ...entries.map(([id]) => id)).catch(() => undefined);
                else ids[keys.indexOf(streamKey.toString())] = lastId;
              }
            }
          })().catch(() => undefined);
        },
        async close() {
          running = false;
          await loop;
          r.disconnect();
        },
      };
    },
    async close() {
      for (const c of clients) c.disconnect();
    },
  };
}
