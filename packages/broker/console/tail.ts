/**
 * A live tail of a topic in the browser: @mq/client over the browser's own WebSocket to the broker's client
 * port (the page's origin is the broker's HTTP origin, which the WebSocket port allows). Starts a few records
 * back on every partition and hands records to `onRecords` until stopped.
 */
import { MqClient, type ConsumerRecord } from '@mq/client';

export interface TailRecord {
  partition: number;
  offset: number;
  timestamp: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: Array<{ key: string; value: Uint8Array | null }>;
}

export interface Tail {
  stop(): Promise<void>;
}

export function startTail(
  bootstrap: string,
  topic: string,
  partitions: Array<{ partition: number; high: number | null; low: number | null }>,
  back: number,
  onRecords: (records: TailRecord[]) => void,
  onError: (message: string) => void,
): Tail {
  const mq = new MqClient({ bootstrap, clientId: 'mq-console' });
  const consumer = mq.consumer({ autoOffsetReset: 'latest' });
  let stopped = false;
  const tps = partitions.map((p) => ({ topic, partition: p.partition }));
  consumer.assign(tps);
  for (const p of partitions) {
    if (p.high === null) continue;
    consumer.seek({ topic, partition: p.partition }, Math.max(p.low ?? 0, p.high - back));
  }
  const loop = (async () => {
    while (!stopped) {
      let got: ConsumerRecord[];
      try {
        got = await consumer.poll(1000);
      } catch (err) {
        if (stopped) break;
        onError((err as Error).message);
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      if (got.length > 0) {
        onRecords(
          got.map((r) => ({
            partition: r.partition,
            offset: r.offset,
            timestamp: r.timestamp,
            key: r.key,
            value: r.value,
            headers: r.headers.map((h) => ({ key: h.key, value: h.value })),
          })),
        );
      }
    }
  })();
  return {
    async stop() {
      stopped = true;
      await consumer.close().catch(() => undefined);
      await loop.catch(() => undefined);
      await mq.close().catch(() => undefined);
    },
  };
}
