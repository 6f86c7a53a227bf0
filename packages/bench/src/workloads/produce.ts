import { MqError } from '@mq/protocol/errors';
import { monoMs } from '../clock.js';
import { LatencyRecorder } from '../histogram.js';
import { createKeyGenerator } from '../keys.js';
import { describeParameters, parseProduceOptions, type ParsedProduceOptions, type ProduceBenchOptions } from '../options.js';
import { createPayloads } from '../payload.js';
import { ProgressReporter } from '../progress.js';
import { OpenLoopSchedule } from '../rate.js';
import { CURVE_PERCENTILES, stripCount, throughput, type BenchResult } from '../result.js';
import type { BenchTarget, TargetProducer } from '../target.js';
import { environmentOf, yieldToLoop, type WorkloadContext } from './run-context.js';

/** Sends at most this many records back to back before letting I/O run. */
const YIELD_EVERY = 2048;

interface Shared {
  acked: number;
  bytes: number;
  errors: number;
  firstError: unknown;
  inFlight: number;
  lastAckAt: number;
}

/**
 * Produce workload: `records` (or `duration` seconds) of `size`-byte values
 * from `producers` producers, each with at most `window` records outstanding.
 * Latency is send call to acknowledgement; with `rate` the load is open-loop
 * and latency counts from each record's intended send time.
 */
export async function runProduce(target: BenchTarget, options: ProduceBenchOptions = {}, ctx: WorkloadContext = {}): Promise<BenchResult> {
  const o = parseProduceOptions(options);
  const environment = environmentOf(ctx);
  await target.createTopic(o.topic, o.partitions);
  const producers: TargetProducer[] = [];
  try {
    for (let i = 0; i < o.producers; i++) {
      producers.push(
        await target.createProducer({
          topic: o.topic,
          partitions: o.partitions,
          acks: o.acks,
          batchBytes: o.batchBytes,
          lingerMs: o.lingerMs,
          compression: o.compression,
          window: o.window,
        }),
      );
    }
    const result = await driveProducers(producers, o, ctx);
    return {
      workload: 'produce',
      target: target.name,
      ...result,
      parameters: describeParameters({ ...o }),
      durability: target.durability,
      environment,
    };
  } finally {
    await Promise.allSettled(producers.map((p) => p.close()));
  }
}

/** Runs producers that already exist (the consume and e2e workloads reuse it to prepare data). */
export async function driveProducers(
  producers: TargetProducer[],
  o: ParsedProduceOptions,
  ctx: WorkloadContext,
): Promise<Omit<BenchResult, 'workload' | 'target' | 'parameters' | 'durability' | 'environment'>> {
  const perProducerRate = o.rate === null ? null : o.rate / producers.length;
  if (o.warmup > 0) {
    // The same load, not measured: JIT, connections and metadata are warm when the clock starts.
    const warm: Shared = { acked: 0, bytes: 0, errors: 0, firstError: undefined, inFlight: 0, lastAckAt: 0 };
    const warmStart = monoMs();
    const warmEnd = warmStart + o.warmup * 1000;
    await Promise.all(
      producers.map((producer, index) => {
        const schedule = perProducerRate === null ? null : new OpenLoopSchedule(perProducerRate, warmStart);
        return produceLoop(producer, index, Infinity, warmEnd, schedule, o, warm, new LatencyRecorder(), ctx.signal);
      }),
    );
  }
  const latency = new LatencyRecorder();
  const shared: Shared = { acked: 0, bytes: 0, errors: 0, firstError: undefined, inFlight: 0, lastAckAt: 0 };
  const progress = new ProgressReporter(
    () => ({ records: shared.acked, bytes: shared.bytes, inFlight: shared.inFlight }),
    { stream: ctx.progress, intervalMs: ctx.progressIntervalMs, label: 'produce' },
  ).start();
  const startAt = monoMs();
  const deadline = o.duration === null ? Infinity : startAt + o.duration * 1000;
  try {
    await Promise.all(
      producers.map((producer, index) => {
        const quota = o.records === null ? Infinity : Math.floor(o.records / producers.length) + (index < o.records % producers.length ? 1 : 0);
        const schedule = perProducerRate === null ? null : new OpenLoopSchedule(perProducerRate, startAt);
        return produceLoop(producer, index, quota, deadline, schedule, o, shared, latency, ctx.signal);
      }),
    );
  } finally {
    progress.stop();
  }
  if (shared.acked === 0 && shared.errors > 0) {
    throw new MqError('UNKNOWN', `every send failed (${shared.errors}); first error: ${describe(shared.firstError)}`, { cause: shared.firstError });
  }
  const seconds = ((shared.lastAckAt || monoMs()) - startAt) / 1000;
  return {
    records: shared.acked,
    bytes: shared.bytes,
    seconds,
    ...throughput(shared.acked, shared.bytes, seconds),
    latencyMs: stripCount(latency.summary()),
    latencyCurve: latency.curve(CURVE_PERCENTILES),
    errors: shared.errors,
    ...(o.rate === null ? {} : { targetRate: o.rate }),
    ...(shared.firstError === undefined ? {} : { firstError: describe(shared.firstError) }),
  };
}

function describe(err: unknown): string {
  return err instanceof Error ? `${(err as { code?: string }).code ?? err.name}: ${err.message}` : String(err);
}

async function produceLoop(
  producer: TargetProducer,
  index: number,
  quota: number,
  deadline: number,
  schedule: OpenLoopSchedule | null,
  o: ParsedProduceOptions,
  shared: Shared,
  latency: LatencyRecorder,
  signal: AbortSignal | undefined,
): Promise<void> {
  const payloads = createPayloads(o.size, undefined, 12345 + index);
  const nextKey = createKeyGenerator(o.keys, 0x9e3779b9 + index);
  let mine = 0; // this producer's outstanding records
  let wake: (() => void) | null = null;
  // Open loop: the wait for the next due record, which an acknowledgement may cut short.
  let napTimer: NodeJS.Timeout | undefined;
  let napEnd: (() => void) | null = null;
  let napCut = false;
  const endNap = (): void => {
    napCut = false;
    if (napEnd === null) return;
    const end = napEnd;
    napEnd = null;
    clearTimeout(napTimer);
    end();
  };
  const onSettled = (): void => {
    mine--;
    shared.inFlight--;
    if (wake !== null && mine < o.window) {
      const w = wake;
      wake = null;
      w();
    }
    // Timers fire at 1 ms granularity at best, so records due meanwhile would
    // wait up to a millisecond in the harness. The loop is awake anyway when
    // acknowledgements arrive: send what has come due then (once per turn of
    // the event loop, after its I/O callbacks). Latency still counts from
    // each record's intended send time; nothing is sent before it.
    if (napEnd !== null && !napCut) {
      napCut = true;
      setImmediate(endNap);
    }
  };
  const nap = (ms: number): Promise<void> =>
    new Promise<void>((resolve) => {
      napEnd = resolve;
      napTimer = setTimeout(endNap, ms);
    });
  let sent = 0;
  while (sent < quota) {
    if (signal?.aborted) break;
    const now = monoMs();
    if (now >= deadline) break;
    let due = quota;
    if (schedule !== null) {
      due = schedule.dueCount(now, quota);
      if (due <= sent) {
        await nap(Math.max(0, schedule.dueAt(sent) - now));
        continue;
      }
    }
    let burst = 0;
    while (sent < due && burst < YIELD_EVERY && mine < o.window) {
      const key = nextKey();
      const value = payloads[sent % payloads.length];
      const size = value.length + (key === undefined ? 0 : key.length);
      const t0 = schedule === null ? monoMs() : schedule.dueAt(sent);
      mine++;
      shared.inFlight++;
      producer.send(key, value).then(
        () => {
          const t = monoMs();
          latency.recordMs(t - t0);
          shared.acked++;
          shared.bytes += size;
          shared.lastAckAt = t;
          onSettled();
        },
        (err: unknown) => {
          shared.errors++;
          if (shared.firstError === undefined) shared.firstError = err;
          onSettled();
        },
      );
      sent++;
      burst++;
    }
    if (mine >= o.window) {
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    } else if (burst >= YIELD_EVERY) {
      await yieldToLoop();
    }
  }
  await producer.flush();
  while (mine > 0) {
    await new Promise<void>((resolve) => {
      wake = resolve;
      if (mine === 0) resolve();
    });
  }
}
