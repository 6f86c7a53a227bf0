/**
 * A live tail of a topic in the browser: @mq/client over the browser's own WebSocket to the broker's client
 * port (the page's origin is the broker's HTTP origin, which the WebSocket port allows). Starts a few records
 * back on every partition and hands records to `onRecords` until stopped. With authentication it logs in as the
 * console's user first (SASL OAUTHBEARER with a token from POST /tokens, which the browser calls with the Basic
 * credentials it asked the user for): the broker's ACLs decide what the tail may read.
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
  /** With authentication: a token the broker issued for the console's user (SASL OAUTHBEARER on the client port). */
  login: (() => Promise<string>) | undefined,
  topic: string,
  partitions: Array<{ partition: number; high: number | null; low: number | null }>,
  back: number,
  onRecords: (records: TailRecord[]) => void,
  onError: (message: string) => void,
): Tail {
  let stopped = false;
  let mq: MqClient | undefined;
  let consumer: ReturnType<MqClient['consumer']> | undefined;
  const loop = (async () => {
    let token: string | undefined;
    while (login && token === undefined && !stopped) {
      try {
        token = await login();
      } catch (err) {
        onError(`cannot log in: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 2000));
      }
    }
    if (stopped) return;
    mq = new MqClient({ bootstrap, clientId: 'mq-console', ...(token !== undefined ? { sasl: { mechanism: 'OAUTHBEARER' as const, token } } : {}) });
    const c = mq.consumer({ autoOffsetReset: 'latest' });
    consumer = c;
    c.assign(partitions.map((p) => ({ topic, partition: p.partition })));
    for (const p of partitions) {
      if (p.high === null) continue;
      c.seek({ topic, partition: p.partition }, Math.max(p.low ?? 0, p.high - back));
    }
    while (!stopped) {
      let got: ConsumerRecord[];
      try {
        got = await c.poll(1000);
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
      await consumer?.close().catch(() => undefined);
      await loop.catch(() => undefined);
      await mq?.close().catch(() => undefined);
    },
  };
}
