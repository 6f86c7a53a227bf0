import { epochMs, monoMs } from '../clock.js';
import { LatencyRecorder } from '../histogram.js';
import { createKeyGenerator } from '../keys.js';
import { describeParameters, parseE2eOptions, type E2eBenchOptions } from '../options.js';
import { createPayloads, readStamp, stampValue } from '../payload.js';
import { ProgressReporter } from '../progress.js';
import { OpenLoopSchedule } from '../rate.js';
import { CURVE_PERCENTILES, stripCount, throughput, type BenchResult } from '../result.js';
import type { BenchTarget, TargetConsumer, TargetProducer } from '../target.js';
import { environmentOf, sleep, withTimeout, type WorkloadContext } from './run-context.js';

/**
 * End-to-end workload: consumers subscribe first, then one producer sends at
 * a fixed rate (open loop). Each value carries its intended send time; the
 * latency of a record is its delivery time minus that intended time, so a
 * stall anywhere (client, broker, consumer) shows up in the percentiles.
 */
export async function runE2e(target: BenchTarget, options: E2eBenchOptions = {}, ctx: WorkloadContext = {}): Promise<BenchResult> {
  const o = parseE2eOptions(options);
  const environment = environmentOf(ctx);
  await target.createTopic(o.topic, o.partitions);
  const latency = new LatencyRecorder();
  let delivered = 0;
  let bytes = 0;
  let sent = 0;
  let errors = 0;
  let firstError: unknown;
  let lastDeliveryAt = 0;
  const onRecord = (value: Uint8Array, key: Uint8Array | null): void => {
    const stamp = readStamp(value);
    latency.recordMs(epochMs() - stamp);
    delivered++;
    bytes += value.length + (key === null ? 0 : key.length);
    lastDeliveryAt = monoMs();
  };
  const progress = new ProgressReporter(() => ({ records: delivered, bytes, inFlight: sent - delivered, p99Ms: latency.summary().p99 }), {
    stream: ctx.progress,
    intervalMs: ctx.progressIntervalMs,
    label: 'e2e',
  }).start();
  const consumers: TargetConsumer[] = [];
  let producer: TargetProducer | null = null;
  let startAt = 0;
  try {
    for (let member = 0; member < o.consumers; member++) {
      consumers.push(await target.createConsumer({ topic: o.topic, partitions: o.partitions, ...(o.group === null ? {} : { group: o.group }), member, members: o.consumers }));
    }
    await withTimeout(Promise.all(consumers.map((c) => c.start(onRecord))), o.idleTimeoutMs, 'starting the consumers');
    producer = await target.createProducer({
      topic: o.topic,
      partitions: o.partitions,
      acks: o.acks,
      batchBytes: o.batchBytes,
      lingerMs: o.lingerMs,
      compression: o.compression,
      window: o.window,
    });
    const payloads = createPayloads(o.size);
    const nextKey = createKeyGenerator(o.keys);
    // The schedule runs on the wall clock so that the consumer side can
    // compare against the stamp; monotonic time drives the loop.
    const startEpoch = epochMs();
    startAt = monoMs();
    const schedule = new OpenLoopSchedule(o.rate, startEpoch);
    let unacked = 0;
    while (sent < o.records && !ctx.signal?.aborted) {
      const due = schedule.dueCount(epochMs(), o.records);
      while (sent < due && unacked < o.window) {
        const value = stampValue(payloads[sent % payloads.length], schedule.dueAt(sent));
        unacked++;
        producer.send(nextKey(), value).then(
          () => {
            unacked--;
          },
          (err: unknown) => {
            unacked--;
            errors++;
            if (firstError === undefined) firstError = err;
          },
        );
        sent++;
      }
      if (sent < o.records) await sleep(Math.max(0, schedule.dueAt(sent) - epochMs()));
    }
    await producer.flush();
    // Wait for delivery of everything acknowledged, or stop when idle.
    let seen = delivered;
    let idleSince = monoMs();
    while (delivered < sent - errors && !ctx.signal?.aborted) {
      await sleep(20);
      if (delivered !== seen) {
        seen = delivered;
        idleSince = monoMs();
      } else if (monoMs() - idleSince > o.idleTimeoutMs) break;
    }
  } finally {
    progress.stop();
    await Promise.allSettled([...consumers.map((c) => c.close()), producer?.close()]);
  }
  const seconds = ((lastDeliveryAt || monoMs()) - startAt) / 1000;
  const missing = Math.max(0, sent - errors - delivered);
  return {
    workload: 'e2e',
    target: target.name,
    records: delivered,
    bytes,
    seconds,
    ...throughput(delivered, bytes, seconds),
    latencyMs: stripCount(latency.summary()),
    latencyCurve: latency.curve(CURVE_PERCENTILES),
    errors: errors + missing,
    ...(errors + missing > 0
      ? { firstError: firstError instanceof Error ? firstError.message : `${missing} acknowledged records not delivered within ${o.idleTimeoutMs} ms` }
      : {}),
    targetRate: o.rate,
    parameters: describeParameters({ ...o }),
    durability: target.durability,
    environment,
  };
}
