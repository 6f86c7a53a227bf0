/**
 * Record values for a run. Bytes are pseudo-random (seeded), so compression
 * gains nothing it would not gain on real data of high entropy; a small pool
 * of distinct values is reused so the harness allocates nothing per record.
 * The first 8 bytes of a value may carry a timestamp (see stampValue).
 */
export const PAYLOAD_POOL = 64;

export function createPayloads(size: number, pool = PAYLOAD_POOL, seed = 12345): Buffer[] {
  let state = seed >>> 0 || 1;
  const out: Buffer[] = [];
  for (let p = 0; p < pool; p++) {
    const buf = Buffer.allocUnsafe(size);
    for (let i = 0; i < size; i++) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      buf[i] = state & 0xff;
    }
    out.push(buf);
  }
  return out;
}

/** Bytes a value needs to carry a send timestamp. */
export const STAMP_BYTES = 8;

/** A fresh value of `size` bytes whose first 8 bytes hold `epochMs` (float64). */
export function stampValue(template: Buffer, epochMs: number): Buffer {
  const buf = Buffer.allocUnsafe(template.length);
  template.copy(buf);
  buf.writeDoubleLE(epochMs, 0);
  return buf;
}

export function readStamp(value: Uint8Array): number {
  if (value.length < STAMP_BYTES) return Number.NaN;
  return new DataView(value.buffer, value.byteOffset, STAMP_BYTES).getFloat64(0, true);
}
