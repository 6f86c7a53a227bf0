/**
 * HTTP consumer instances (the Confluent REST proxy's model): a client that cannot speak mq's protocol creates
 * a consumer instance in a group over HTTP, subscribes it, polls records and commits offsets. Each instance is a
 * real @mq/client group consumer running inside the broker, connected to this broker's own listener, so it joins
 * the group, rebalances and commits exactly as any other member. Instances are bounded in number and expire when
 * not polled for `instanceTimeoutMs` (they leave the group, committing nothing unless auto-commit is on).
 */
import { randomUUID } from 'node:crypto';
import { MqClient, type GroupConsumer } from '@mq/client';
import { MqError } from '@mq/protocol/errors';
import type { Logger } from '@mq/protocol/components';

export interface ConsumerInstanceOptions {
  /** This broker's own client listener, as host:port. */
  bootstrap: () => string;
  maxInstances: number;
  instanceTimeoutMs: number;
  logger: Logger;
}

export interface CreateInstance {
  name?: string;
  autoOffsetReset: 'earliest' | 'latest';
  autoCommit: boolean;
}

export interface ConsumerInstance {
  readonly group: string;
  readonly id: string;
  readonly consumer: GroupConsumer;
  readonly autoCommit: boolean;
  lastUsed: number;
  /** One poll or commit at a time per instance (a consumer is not shared by concurrent callers). */
  busy: Promise<unknown>;
}

const INSTANCE_NAME = /^[a-zA-Z0-9._-]{1,128}$/;

export class ConsumerInstances {
  private client: MqClient | undefined;
  private readonly instances = new Map<string, ConsumerInstance>();
  private readonly sweep: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly options: ConsumerInstanceOptions) {
    this.sweep = setInterval(() => void this.expire(), Math.max(1000, Math.min(options.instanceTimeoutMs / 2, 30_000)));
    this.sweep.unref();
  }

  get size(): number {
    return this.instances.size;
  }

  create(group: string, req: CreateInstance): ConsumerInstance {
    if (this.closed) throw new MqError('BROKER_NOT_AVAILABLE', 'the broker is shutting down');
    const id = req.name ?? randomUUID();
    if (!INSTANCE_NAME.test(id)) throw new MqError('INVALID_REQUEST', 'name must be 1 to 128 characters of [a-zA-Z0-9._-]');
    const key = `${group}\0${id}`;
    if (this.instances.has(key)) throw new MqError('INVALID_REQUEST', `group "${group}" already has a consumer instance "${id}"`);
    if (this.instances.size >= this.options.maxInstances) {
      throw new MqError('GROUP_LIMIT_REACHED', `this broker holds ${this.instances.size} HTTP consumer instances (http.consumer.max.instances); delete one or retry later`);
    }
    this.client ??= new MqClient({ bootstrap: this.options.bootstrap(), clientId: 'mq-http-consumers', logger: this.options.logger });
    const consumer = this.client.consumer({ groupId: group, autoOffsetReset: req.autoOffsetReset, autoCommit: req.autoCommit }) as GroupConsumer;
    const instance: ConsumerInstance = { group, id, consumer, autoCommit: req.autoCommit, lastUsed: Date.now(), busy: Promise.resolve() };
    this.instances.set(key, instance);
    this.options.logger.info({ group, instance: id }, 'HTTP consumer instance created');
    return instance;
  }

  get(group: string, id: string): ConsumerInstance {
    const instance = this.instances.get(`${group}\0${id}`);
    if (!instance) throw new MqError('UNKNOWN_MEMBER_ID', `group "${group}" has no HTTP consumer instance "${id}" (expired after ${this.options.instanceTimeoutMs} ms without a poll, or deleted)`);
    instance.lastUsed = Date.now();
    return instance;
  }

  /** Runs `fn` after the instance's earlier calls (one consumer call at a time). */
  exclusive<T>(instance: ConsumerInstance, fn: () => Promise<T>): Promise<T> {
    const run = instance.busy.then(fn, fn);
    instance.busy = run.catch(() => undefined);
    return run;
  }

  async remove(group: string, id: string, reason = 'deleted'): Promise<void> {
    const instance = this.get(group, id);
    this.instances.delete(`${group}\0${id}`);
    await this.exclusive(instance, () => instance.consumer.close()).catch((err: unknown) =>
      this.options.logger.warn({ group, instance: id, err: (err as Error).message }, 'HTTP consumer instance did not leave its group cleanly'),
    );
    this.options.logger.info({ group, instance: id, reason }, 'HTTP consumer instance closed');
  }

  private async expire(): Promise<void> {
    const now = Date.now();
    for (const i of [...this.instances.values()]) {
      if (now - i.lastUsed > this.options.instanceTimeoutMs) await this.remove(i.group, i.id, 'expired').catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweep);
    for (const i of [...this.instances.values()]) await this.remove(i.group, i.id, 'broker stopping').catch(() => undefined);
    await this.client?.close({ timeoutMs: 2000 }).catch(() => undefined);
  }
}
