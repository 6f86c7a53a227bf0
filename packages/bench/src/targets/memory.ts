import { MqError } from '@mq/protocol/errors';
import type { BenchTarget, RecordHandler, TargetConsumer, TargetConsumerOptions, TargetProducer, TargetProducerOptions } from '../target.js';
import { createPartitioner } from '../target.js';

export interface MemoryTargetOptions {
  /** Acknowledge after this many ms (a timer) instead of on the next microtask. */
  ackDelayMs?: number;
  /** Records a topic may hold; a bound so a runaway run fails instead of exhausting memory. */
  maxRecords?: number;
  /**
   * false: keep nothing, acknowledge only (default true). For produce-only
   * runs that measure the harness's own cost at a rate: kept records would
   * grow the heap and add full collections the systems under test do not pay.
   */
  retain?: boolean;
}

export const DEFAULT_MEMORY_MAX_RECORDS = 5_000_000;

interface Topic {
  partitions: Array<{ keys: Array<Buffer | undefined>; values: Buffer[] }>;
  listeners: Set<{ handler: RecordHandler; partitions: Set<number>; positions: number[] }>;
  total: number;
}

/**
 * A target that keeps records in memory in this process. It measures the
 * harness's own ceiling (what the workload loop costs with a free queue) and
 * lets the harness be tested without a broker.
 */
export function createMemoryTarget(options: MemoryTargetOptions = {}): BenchTarget {
  const topics = new Map<string, Topic>();
  const maxRecords = options.maxRecords ?? DEFAULT_MEMORY_MAX_RECORDS;
  const retain = options.retain ?? true;
  const topicOf = (name: string): Topic => {
    const t = topics.get(name);
    if (!t) throw new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${name}" does not exist`);
    return t;
  };
  const deliver = (t: Topic): void => {
    for (const l of t.listeners) {
      for (const p of l.partitions) {
        const part = t.partitions[p];
        while (l.positions[p] < part.values.length) {
          const i = l.positions[p]++;
          l.handler(part.values[i], part.keys[i] ?? null);
        }
      }
    }
  };
  return {
    name: 'memory',
    durability: 'none (in-process memory)',
    async createTopic(name, partitions) {
      topics.set(name, { partitions: Array.from({ length: partitions }, () => ({ keys: [], values: [] })), listeners: new Set(), total: 0 });
    },
    async deleteTopic(name) {
      topics.delete(name);
    },
    async createProducer(o: TargetProducerOptions): Promise<TargetProducer> {
      const t = topicOf(o.topic);
      const partitionOf = createPartitioner(o.partitions);
      let scheduled = false;
      const schedule = (): void => {
        if (scheduled || t.listeners.size === 0) return;
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          deliver(t);
        });
      };
      return {
        send(key, value) {
          if (!retain) {
            t.total++;
            return options.ackDelayMs === undefined ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, options.ackDelayMs));
          }
          if (t.total >= maxRecords) return Promise.reject(new MqError('BUFFER_FULL', `memory target holds its maximum of ${maxRecords} records`));
          const p = t.partitions[partitionOf(key)];
          p.keys.push(key);
          p.values.push(value);
          t.total++;
          schedule();
          if (options.ackDelayMs === undefined) return Promise.resolve();
          return new Promise((resolve) => setTimeout(resolve, options.ackDelayMs));
        },
        async flush() {},
        async close() {},
      };
    },
    async createConsumer(o: TargetConsumerOptions): Promise<TargetConsumer> {
      const t = topicOf(o.topic);
      const mine = new Set<number>();
      for (let p = 0; p < o.partitions; p++) if (o.group === undefined || p % o.members === o.member) mine.add(p);
      let listener: Topic['listeners'] extends Set<infer L> ? L : never;
      return {
        async start(handler) {
          listener = { handler, partitions: mine, positions: new Array(o.partitions).fill(0) };
          t.listeners.add(listener);
          setImmediate(() => deliver(t));
        },
        async close() {
          t.listeners.delete(listener);
        },
      };
    },
    async close() {
      topics.clear();
    },
  };
}
