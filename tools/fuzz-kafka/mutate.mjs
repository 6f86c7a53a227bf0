/**
 * Mutations of a Kafka request frame: flipped and random bytes in the body,
 * a truncated body (with its size fixed, or lying), lying size prefixes
 * (shorter, longer, negative, above max.frame.bytes), an unknown API key or
 * version, lying array and string lengths, garbage, and frames split across
 * writes. Each returns {bytes, description, closesOrAnswers}; the caller
 * writes the correlation id.
 */
const HEADER = 4 + 2 + 2 + 4; // size, key, version, correlation id

function withSize(body) {
  const out = Buffer.alloc(4 + body.length);
  out.writeInt32BE(body.length, 0);
  body.copy(out, 4);
  return out;
}

export function mutateKafkaFrame(rng, seed) {
  const bytes = Buffer.from(seed.bytes);
  const body = bytes.subarray(4);
  const kind = rng.int(10);
  switch (kind) {
    case 0: {
      const n = 1 + rng.int(4);
      for (let i = 0; i < n; i++) {
        const at = HEADER + rng.int(Math.max(1, bytes.length - HEADER));
        if (at < bytes.length) bytes[at] ^= 1 << rng.int(8);
      }
      return { bytes, description: `${seed.api} v${seed.version}: ${n} bit flips in the body` };
    }
    case 1: {
      const at = HEADER + rng.int(Math.max(1, bytes.length - HEADER));
      if (at < bytes.length) bytes[at] = rng.pick([0x00, 0x7f, 0x80, 0xff]);
      return { bytes, description: `${seed.api} v${seed.version}: byte ${at} set to an edge value` };
    }
    case 2: {
      const keep = 8 + rng.int(Math.max(1, body.length - 8));
      return { bytes: withSize(body.subarray(0, keep)), description: `${seed.api} v${seed.version}: body truncated to ${keep} bytes (size fixed)` };
    }
    case 3: {
      const lie = rng.pick([-1, -0x80000000, 0x7fffffff, 64 * 1024 * 1024]);
      bytes.writeInt32BE(lie, 0);
      return { bytes, description: `${seed.api} v${seed.version}: size prefix ${lie}` };
    }
    case 4: {
      const shorter = Math.max(8, body.length - 1 - rng.int(body.length));
      bytes.writeInt32BE(shorter, 0);
      return { bytes, description: `${seed.api} v${seed.version}: size prefix ${shorter} of ${body.length} (the rest read as the next frame)` };
    }
    case 5: {
      bytes.writeInt16BE(rng.pick([-1, 7, 17, 57, 61, 68, 999, 0x7fff]), 4);
      return { bytes, description: `${seed.api} v${seed.version}: API key ${bytes.readInt16BE(4)}` };
    }
    case 6: {
      bytes.writeInt16BE(rng.pick([-1, 99, 0x7fff, seed.version + 1, Math.max(0, seed.version - 5)]), 6);
      return { bytes, description: `${seed.api} v${seed.version}: version ${bytes.readInt16BE(6)}` };
    }
    case 7: {
      // A length field (int32 or int16 or varint) somewhere after the header claims far too much.
      const at = HEADER + rng.int(Math.max(1, bytes.length - HEADER - 4));
      if (at + 4 <= bytes.length) bytes.writeInt32BE(rng.pick([0x7fffffff, 0x10000, -2]), at);
      return { bytes, description: `${seed.api} v${seed.version}: int32 at ${at} set to a lying length` };
    }
    case 8: {
      const n = rng.int(200);
      const garbage = Buffer.alloc(n);
      for (let i = 0; i < n; i++) garbage[i] = rng.int(256);
      return { bytes: withSize(garbage), description: `${n} random bytes in a well-sized frame` };
    }
    default: {
      // Valid, but appended with extra bytes after the body.
      const extra = Buffer.from([rng.int(256), rng.int(256)]);
      return { bytes: withSize(Buffer.concat([body, extra])), description: `${seed.api} v${seed.version}: 2 bytes after the body` };
    }
  }
}
