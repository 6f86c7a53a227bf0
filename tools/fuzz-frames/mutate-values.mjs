/** Extreme and hostile values per protobuf scalar type. int64s are {low, high} pairs, exact beyond 2^53. */
const I64 = (low, high) => ({ low: low | 0, high: high | 0 });
export const INT64_EDGES = [
  I64(0xffffffff, 0x7fffffff), // 2^63-1
  I64(0, 0x80000000), // -2^63
  I64(1, 0x200000), // 2^53+1
  I64(0, 0x200000), // 2^53
  I64(0xffffffff, 0x1fffff), // 2^53-1
  I64(0xffffffff, 0xffffffff), // -1
  I64(0xfffffffe, 0xffffffff), // -2
  I64(0, 0),
  I64(0x7fffffff, 0), // 2^31-1
  I64(0, 1), // 2^32
];
export const INT32_EDGES = [0, -1, 1, 2, 0x7fffffff, -0x80000000, 0x7ffffffe, 1000, 65535, 1 << 20];
export const UINT32_EDGES = [0, 1, 0xffffffff, 0xfffffffe, 0x80000000, 0x7fffffff, 65536, 10_000];

const PATHS = ['', '.', '..', '../../fz-escape-probe', '/etc/passwd', 'a/b', 'C:\\x', '%2e%2e%2f', '__consumer_offsets', '\u0000'];
const UNICODE = ['é', '\u{1F600}', '\u202e', '\ufeff', '\u0000nul', 'Ω'.repeat(100), '\ud800'];

export function mutateString(rng, s) {
  switch (rng.int(6)) {
    case 0:
      return '';
    case 1:
    {
      const base = rng.pick(['x', 'ab', s || 't']);
      const n = rng.pick([249, 250, 256, 1024, 65_536, 300_000]);
      return base.repeat(Math.ceil(n / base.length)).slice(0, n);
    }
    case 2:
      return rng.pick(PATHS);
    case 3:
      return (s ?? '') + rng.pick(UNICODE);
    case 4:
      return rng.pick(['rp.col', 'rp_col', 'fz-' + rng.int(1000), ' ', '*', '\n']);
    default:
      return (s ?? '').slice(0, rng.int((s ?? '').length + 1));
  }
}

export function mutateBytes(rng, b) {
  const buf = Buffer.from(b ?? []);
  switch (rng.int(5)) {
    case 0: {
      if (buf.length === 0) return Buffer.from([rng.int(256)]);
      const n = 1 + rng.int(4);
      for (let i = 0; i < n; i++) buf[rng.int(buf.length)] ^= 1 << rng.int(8);
      return buf;
    }
    case 1:
      return buf.subarray(0, rng.int(buf.length + 1));
    case 2:
      return Buffer.concat([buf, Buffer.alloc(rng.pick([1, 7, 100, 4096]), rng.int(256))]);
    case 3:
      return Buffer.alloc(0);
    default:
      return Buffer.concat([buf, buf]);
  }
}

export function mutateScalar(rng, type, value) {
  switch (type) {
    case 'int64':
    case 'sint64':
    case 'sfixed64':
    case 'uint64':
    case 'fixed64':
      return rng.chance(0.8) ? rng.pick(INT64_EDGES) : rng.int(2 ** 31) - 2 ** 30;
    case 'uint32':
    case 'fixed32':
      return rng.pick(UINT32_EDGES);
    case 'int32':
    case 'sint32':
    case 'sfixed32':
      return rng.pick(INT32_EDGES);
    case 'bool':
      return !value;
    case 'double':
    case 'float':
      return rng.pick([NaN, Infinity, -Infinity, -0, 1e308, -1]);
    case 'string':
      return mutateString(rng, value);
    case 'bytes':
      return mutateBytes(rng, value);
    default:
      return value;
  }
}
