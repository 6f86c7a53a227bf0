/**
 * HTTP consumer instances (the Confluent REST proxy's model): a client that cannot speak mq's protocol creates
 * a consumer instance in a group over HTTP, subscribes it, polls records and commits offsets. Each instance is a
 * real @mq/client group consumer running inside the broker, connected to this broker's own client listener (in
 * process: the listener's handlers with no socket, so a TLS-only listener is served too), so it joins the group,
 * rebalances and commits exactly as any other member. Instances are bounded in number and expire when
 * not polled for `instanceTimeoutMs` (they leave the group, committing nothing unless auto-commit is on).
 *
 * With authentication, an instance belongs to the principal that created it: another principal's calls get 404
 * (as for an instance that does not exist, so names do not leak), and its client logs in as that principal
 * (OAUTHBEARER with a token this broker delegated: one client, connection and token per principal), so its
 * joins, fetches and commits are authorized with that principal's ACLs (TOPIC_/GROUP_AUTHORIZATION_FAILED) and
 * its bytes and requests count against that principal's quotas, exactly as its own client's would.
 */
import { randomUUID } from 'node:crypto';
import { MqClient, type ConnectFn, type GroupConsumer, type TlsOptions } from '@mq/client';
import { MqError } from '@mq/protocol/errors';
import type { Logger } from '@mq/protocol/components';

export interface ConsumerInstanceOptions {
  /** This broker's own client listener, as host:port. */
  bootstrap: () => string;
  /** How the instances' client opens a connection (this broker: in process; default: a WebSocket). */
  connect?: ConnectFn;
  maxInstances: number;
  instanceTimeoutMs: number;
  logger: Logger;
  /** With authentication: a login for this broker's own client as a principal (valid on every broker of the cluster), and its end. */
  delegation?: { delegate(principal: string): Promise<string>; revoke(token: string): void };
  /** With TLS client listeners: how the instances' client dials other brokers (wss://; read when a principal's client is made). */
  tls?: () => TlsOptions;
}

export interface CreateInstance {
  name?: string;
  autoOffsetReset: 'earliest' | 'latest';
  autoCommit: boolean;
}

export interface ConsumerInstance {
  readonly group: string;
  readonly id: string;
  /** Who created it ("" without authentication): only they may use it. */
  readonly principal: string;
  readonly consumer: GroupConsumer;
  readonly autoCommit: boolean;
  lastUsed: number;
  /** One poll or commit at a time per instance (a consumer is not shared by concurrent callers). */
  busy: Promise<unknown>;
}

const INSTANCE_NAME = /^[a-zA-Z0-9._-]{1,128}$/;

/** One client per principal ("" without authentication), with the delegated token it logs in with. */
interface PrincipalClient {
  client: MqClient;
  token: string | undefined;
  instances: number;
}

export class ConsumerInstances {
  /** One client per principal, made once its login is delegated. */
  private readonly clients = new Map<string, Promise<PrincipalClient>>();
  private readonly instances = new Map<string, ConsumerInstance>();
  /** Instances being created (their principal's login on its way): their names are taken and they count against the bound. */
  private readonly creating = new Set<string>();
  private readonly sweep: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly options: ConsumerInstanceOptions) {
    this.sweep = setInterval(() => void this.expire(), Math.max(1000, Math.min(options.instanceTimeoutMs / 2, 30_000)));
    this.sweep.unref();
  }

  get size(): number {
    return this.instances.size;
  }

  async create(group: string, req: CreateInstance, principal = ''): Promise<ConsumerInstance> {
    if (this.closed) throw new MqError('BROKER_NOT_AVAILABLE', 'the broker is shutting down');
    const id = req.name ?? randomUUID();
    if (!INSTANCE_NAME.test(id)) throw new MqError('INVALID_REQUEST', 'name must be 1 to 128 characters of [a-zA-Z0-9._-]');
    const key = `${group}\0${id}`;
    if (this.instances.has(key) || this.creating.has(key)) throw new MqError('INVALID_REQUEST', `group "${group}" already has a consumer instance "${id}"`);
    const held = this.instances.size + this.creating.size;
    if (held >= this.options.maxInstances) {
      throw new MqError('GROUP_LIMIT_REACHED', `this broker holds ${held} HTTP consumer instances (http.consumer.max.instances); delete one or retry later`);
    }
    this.creating.add(key);
    try {
      const pc = await this.clientOf(principal);
      if (this.closed) throw new MqError('BROKER_NOT_AVAILABLE', 'the broker is shutting down');
      const consumer = pc.client.consumer({ groupId: group, autoOffsetReset: req.autoOffsetReset, autoCommit: req.autoCommit }) as GroupConsumer;
      pc.instances++;
      const instance: ConsumerInstance = { group, id, principal, consumer, autoCommit: req.autoCommit, lastUsed: Date.now(), busy: Promise.resolve() };
      this.instances.set(key, instance);
      this.options.logger.info({ group, instance: id, ...(principal ? { principal } : {}) }, 'HTTP consumer instance created');
      return instance;
    } finally {
      this.creating.delete(key);
    }
  }

  /** The principal's client, made (and its login delegated) by the first of its instances; one a closing one is not handed out. */
  private async clientOf(principal: string): Promise<PrincipalClient> {
    for (;;) {
      let made = this.clients.get(principal);
      if (!made) {
        made = this.newClient(principal);
        const mine = made;
        this.clients.set(principal, mine);
        mine.catch(() => {
          if (this.clients.get(principal) === mine) this.clients.delete(principal);
        });
      }
      const pc = await made;
      // Its last instance closed while this call waited: that client is closing, make another.
      if (this.clients.get(principal) === made) return pc;
    }
  }

  private async newClient(principal: string): Promise<PrincipalClient> {
    const d = this.options.delegation;
    const token = principal && d ? await d.delegate(principal) : undefined;
    const tls = this.options.tls?.();
    const client = new MqClient(
      {
        bootstrap: this.options.bootstrap(),
        clientId: 'mq-http-consumers',
        logger: this.options.logger,
        ...(tls ? { tls } : {}),
        ...(token !== undefined ? { sasl: { mechanism: 'OAUTHBEARER' as const, token } } : {}),
      },
      this.options.connect ? { connect: this.options.connect } : {},
    );
    return { client, token, instances: 0 };
  }

  /** The instance, for `principal` (its creator) only: to anyone else it does not exist (404). */
  get(group: string, id: string, principal = ''): ConsumerInstance {
    const instance = this.instances.get(`${group}\0${id}`);
    if (!instance || instance.principal !== principal) throw new MqError('UNKNOWN_MEMBER_ID', `group "${group}" has no HTTP consumer instance "${id}" (expired after ${this.options.instanceTimeoutMs} ms without a poll, or deleted)`);
    instance.lastUsed = Date.now();
    return instance;
  }

  /** Runs `fn` after the instance's earlier calls (one consumer call at a time). */
  exclusive<T>(instance: ConsumerInstance, fn: () => Promise<T>): Promise<T> {
    const run = instance.busy.then(fn, fn);
    instance.busy = run.catch(() => undefined);
    return run;
  }

  async remove(group: string, id: string, principal = '', reason = 'deleted'): Promise<void> {
    const instance = this.get(group, id, principal);
    this.instances.delete(`${group}\0${id}`);
    await this.exclusive(instance, () => instance.consumer.close()).catch((err: unknown) =>
      this.options.logger.warn({ group, instance: id, err: (err as Error).message }, 'HTTP consumer instance did not leave its group cleanly'),
    );
    // The principal's last instance gone: its client closes and its login is revoked.
    const made = this.clients.get(principal);
    const pc = made && (await made.catch(() => undefined));
    if (pc && --pc.instances === 0 && this.clients.get(principal) === made) {
      this.clients.delete(principal);
      await pc.client.close({ timeoutMs: 2000 }).catch(() => undefined);
      if (pc.token !== undefined) this.options.delegation?.revoke(pc.token);
    }
    this.options.logger.info({ group, instance: id, reason }, 'HTTP consumer instance closed');
  }

  private async expire(): Promise<void> {
    const now = Date.now();
    for (const i of [...this.instances.values()]) {
      if (now - i.lastUsed > this.options.instanceTimeoutMs) await this.remove(i.group, i.id, i.principal, 'expired').catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweep);
    for (const i of [...this.instances.values()]) await this.remove(i.group, i.id, i.principal, 'broker stopping').catch(() => undefined);
    for (const made of this.clients.values()) {
      const pc = await made.catch(() => undefined);
      await pc?.client.close({ timeoutMs: 2000 }).catch(() => undefined);
      if (pc?.token !== undefined) this.options.delegation?.revoke(pc.token);
    }
  }
}
