/**
 * MqClient: one per application. Holds the connections and the metadata
 * cache that its producers, consumers and admin share.
 */
import { Admin } from './admin.js';
import { Cluster, type ClientComponents } from './cluster.js';
import { Consumer } from './consumer/consumer.js';
import type { ConsumerOptions } from './consumer/options.js';
import { GroupAdmin } from './group/group-admin.js';
import { GroupConsumer, type GroupConsumerOptions } from './group/group-consumer.js';
import { parseClientOptions, type ClientOptions, type ParsedClientOptions } from './options.js';
import type { ProducerOptions } from './producer/options.js';
import { Producer } from './producer/producer.js';

export class MqClient {
  readonly options: ParsedClientOptions;
  private readonly cluster: Cluster;
  private readonly producers = new Set<Producer>();
  private readonly consumers = new Set<Consumer>();
  private adminClient: Admin | undefined;
  private groupAdmin: GroupAdmin | undefined;

  /** `components.connect`: how a connection's socket is opened (default: a WebSocket to the broker). */
  constructor(options: ClientOptions = {}, components: ClientComponents = {}) {
    this.options = parseClientOptions(options);
    this.cluster = new Cluster(this.options, components);
  }

  /** Reaches a broker and loads the cluster's metadata: fails fast when no broker answers. */
  async connect(options: { signal?: AbortSignal } = {}): Promise<void> {
    await this.cluster.refreshMetadata([], options.signal);
  }

  producer(options: ProducerOptions = {}): Producer {
    const p: Producer = new Producer(this.cluster, options, () => this.producers.delete(p));
    this.producers.add(p);
    return p;
  }

  /** With a `groupId`: a consumer in that consumer group (subscribe, commit); without: manual assignment. */
  consumer(options: GroupConsumerOptions): GroupConsumer;
  consumer(options?: ConsumerOptions): Consumer;
  consumer(options: ConsumerOptions = {}): Consumer {
    const c: Consumer = options.groupId
      ? new GroupConsumer(this.cluster, options as GroupConsumerOptions, () => this.consumers.delete(c))
      : new Consumer(this.cluster, options, () => this.consumers.delete(c));
    this.consumers.add(c);
    return c;
  }

  /** Consumer groups: list, describe (with lag), delete, reset offsets. */
  groups(): GroupAdmin {
    return (this.groupAdmin ??= new GroupAdmin(this.cluster));
  }

  admin(): Admin {
    return (this.adminClient ??= new Admin(this.cluster));
  }

  /** Closes producers (flushing them, up to `timeoutMs`), consumers and connections. */
  async close(options: { timeoutMs?: number } = {}): Promise<void> {
    await Promise.all([...this.producers].map((p) => p.close({ timeoutMs: options.timeoutMs ?? 30_000 })));
    await Promise.all([...this.consumers].map((c) => c.close()));
    this.cluster.close();
  }
}
