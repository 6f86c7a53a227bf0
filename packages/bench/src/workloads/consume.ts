import { monoMs } from '../clock.js';
import { describeParameters, parseConsumeOptions, parseProduceOptions, type ConsumeBenchOptions } from '../options.js';
import { ProgressReporter } from '../progress.js';
import { throughput, type BenchResult } from '../result.js';
import type { BenchTarget, TargetConsumer, TargetProducer } from '../target.js';
import { driveProducers } from './produce.js';
import { environmentOf, sleep, withTimeout, type WorkloadContext } from './run-context.js';

/** Settings used to fill the topic before a consume run (not measured). */
export const PREPARE_WINDOW = 16_384;

/**
 * Consume workload: fills a topic with `records` records (unless `prepare`
 * is false), then reads it from the beginning with one consumer alone or
 * `consumers` members of a group, and measures records/s and MB/s from the
 * first subscription to the last record.
 */
export async function runConsume(target: BenchTarget, options: ConsumeBenchOptions = {}, ctx: WorkloadContext = {}): Promise<BenchResult> {
  const o = parseConsumeOptions(options);
  const environment = environmentOf(ctx);
  if (o.prepare) await prepareTopic(target, o.topic, o.partitions, o.records, o.size, o.keys, ctx);

  let records = 0;
  let bytes = 0;
  let lastAt = 0;
  let lastProgressAt = monoMs();
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  let firstAt = 0;
  const onRecord = (value: Uint8Array, key: Uint8Array | null): void => {
    if (records === 0) firstAt = monoMs();
    records++;
    bytes += value.length + (key === null ? 0 : key.length);
    if (records >= o.records) {
      lastAt = monoMs();
      done();
    }
  };
  const progress = new ProgressReporter(() => ({ records, bytes }), { stream: ctx.progress, intervalMs: ctx.progressIntervalMs, label: 'consume' }).start();
  const consumers: TargetConsumer[] = [];
  // The clock starts once every consumer is subscribed (a group has its
  // partitions), or at the first record if that comes earlier: joining a
  // group or creating a peer's consumer is setup, not reading.
  let startAt = 0;
  try {
    for (let member = 0; member < o.consumers; member++) {
      const consumer = await target.createConsumer({
        topic: o.topic,
        partitions: o.partitions,
        ...(o.group === null ? {} : { group: o.group }),
        member,
        members: o.consumers,
      });
      consumers.push(consumer);
    }
    await withTimeout(Promise.all(consumers.map((c) => c.start(onRecord))), o.idleTimeoutMs, 'starting the consumers');
    startAt = records > 0 ? firstAt : monoMs();
    lastProgressAt = monoMs();
    // Wait for every record, or stop when nothing arrives for idleTimeoutMs.
    let seen = records;
    while (records < o.records) {
      const tick = await Promise.race([finished.then(() => 'done' as const), sleep(250).then(() => 'tick' as const)]);
      if (tick === 'done') break;
      if (ctx.signal?.aborted) break;
      if (records !== seen) {
        seen = records;
        lastProgressAt = monoMs();
      } else if (monoMs() - lastProgressAt > o.idleTimeoutMs) {
        break;
      }
    }
  } finally {
    progress.stop();
    await Promise.allSettled(consumers.map((c) => c.close()));
  }
  const seconds = ((lastAt || monoMs()) - startAt) / 1000;
  const missing = Math.max(0, o.records - records);
  return {
    workload: 'consume',
    target: target.name,
    records,
    bytes,
    seconds,
    ...throughput(records, bytes, seconds),
    latencyMs: null,
    errors: missing,
    ...(missing > 0 ? { firstError: `${missing} of ${o.records} records not received within ${o.idleTimeoutMs} ms of the last one` } : {}),
    parameters: describeParameters({ ...o }),
    durability: target.durability,
    environment,
  };
}

/** Creates `topic` and fills it with `records` records as fast as the target takes them. */
export async function prepareTopic(
  target: BenchTarget,
  topic: string,
  partitions: number,
  records: number,
  size: number,
  keys: ReturnType<typeof parseConsumeOptions>['keys'],
  ctx: WorkloadContext,
): Promise<void> {
  await target.createTopic(topic, partitions);
  const po = parseProduceOptions({ topic, partitions, records, size, keys, window: PREPARE_WINDOW });
  let producer: TargetProducer | null = null;
  try {
    producer = await target.createProducer({
      topic,
      partitions,
      acks: po.acks,
      batchBytes: po.batchBytes,
      lingerMs: po.lingerMs,
      compression: po.compression,
      window: po.window,
    });
    const r = await driveProducers([producer], po, { ...ctx, progress: null });
    if (r.records !== records) throw new Error(`preparing ${topic}: ${r.records} of ${records} records acknowledged (${r.firstError ?? 'no error'})`);
  } finally {
    await producer?.close();
  }
}
