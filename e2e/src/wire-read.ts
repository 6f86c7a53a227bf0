/**
 * Reads a whole partition over the raw wire (no @mq/client): fetch from
 * offset 0 until a fetch brings nothing new or reaches the high watermark,
 * decoding every record. Tests use it to check what the log really holds.
 */
import { decodeBatchSync, iterateBatches } from '@mq/protocol/batch';
import { TestClient } from '../../packages/broker/test/wire-client.js';

/** Every record of `topic`/`partition` on the broker at `url`, in offset order, values as UTF-8 strings. */
export async function readPartition(url: string, topic: string, partition: number): Promise<Map<number, string>> {
  const c = await TestClient.connect(url);
  const out = new Map<number, string>();
  let offset = 0;
  try {
    for (;;) {
      const r = await c.request({ fetch: { maxBytes: 4 << 20, topics: [{ name: topic, partitions: [{ partition, fetchOffset: offset, partitionMaxBytes: 1 << 20 }] }] } });
      const p = r.fetch!.topics[0]!.partitions[0]!;
      if (p.errorCode !== 0) throw new Error(`fetch failed: ${p.errorMessage}`);
      const buf = Buffer.from(p.records);
      let progressed = false;
      for (const span of iterateBatches(buf)) {
        for (const rec of decodeBatchSync(buf, span.position).records) {
          if (rec.offset < offset) continue;
          out.set(rec.offset, rec.value!.toString());
          offset = rec.offset + 1;
          progressed = true;
        }
      }
      if (!progressed || offset >= Number(p.highWatermark)) return out;
    }
  } finally {
    await c.close().catch(() => undefined);
  }
}
