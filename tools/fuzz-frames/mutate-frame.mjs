/**
 * Structure-aware mutation of one decoded request frame: walks its fields by
 * the mq.proto reflection types, picks a few and changes them by type (scalar
 * extremes, hostile strings, out-of-range enums, repeated fields duplicated or
 * emptied, bytes flipped or truncated, record batches with rewritten headers),
 * then re-encodes; a small share also gets wire-level damage (lying lengths).
 */
import { RequestFrame, bodyOf, decodeFrame, encodeFrame } from './schema.mjs';
import { mutateBatch } from './mutate-batch.mjs';
import { mutateScalar } from './mutate-values.mjs';

/** Every mutable place in a message: {holder, key, field, index, path}. */
function collect(type, msg, path, out) {
  for (const field of type.fieldsArray) {
    const value = msg[field.name];
    const p = `${path}.${field.name}`;
    if (value == null) {
      // An absent optional/oneof field can also be set; skip other oneof arms so the body stays one.
      if (field.partOf?.name === 'body') continue;
      out.push({ holder: msg, key: field.name, field, path: p, absent: true });
      continue;
    }
    if (field.map) {
      out.push({ holder: msg, key: field.name, field, path: p, map: true });
    } else if (field.repeated) {
      out.push({ holder: msg, key: field.name, field, path: p, list: true });
      value.forEach((v, i) => {
        if (field.resolvedType && !field.resolvedType.values) collect(field.resolvedType, v, `${p}[${i}]`, out);
        else out.push({ holder: value, key: i, field, path: `${p}[${i}]` });
      });
    } else if (field.resolvedType && !field.resolvedType.values) {
      out.push({ holder: msg, key: field.name, field, path: p, message: true });
      collect(field.resolvedType, value, p, out);
    } else {
      out.push({ holder: msg, key: field.name, field, path: p });
    }
  }
  return out;
}

/** Bytes a mutated frame may grow to: big enough to hit the broker's limits, small enough to build quickly. */
const GROWTH_BUDGET = 2 * 1024 * 1024;

/** A hard cap on a mutated frame whatever the mutations compound to. */
const MAX_FRAME_BYTES = 8 * 1024 * 1024;

function approxSize(v) {
  if (typeof v === 'string') return v.length * 3;
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return v.length;
  if (v && typeof v === 'object') {
    // Keys count too: a config map's key can be a 300,000-character string (seed 20261202 frame 652,928: 1,000
    // copies of such a topic were built, 900 MB and 3.6 s, before the size cap threw the frame away).
    let n = 8;
    for (const [k, x] of Object.entries(v)) n += k.length * 3 + approxSize(x);
    return n;
  }
  return 8;
}

function mutatePlace(rng, place, budget) {
  const { holder, key, field } = place;
  // Duplicated list items are shared objects, and places were collected before the duplication: growing a list or
  // map inside one would grow it in every copy (5,000 topics x 1,000 partitions took 27 s and GBs to encode).
  if (budget.duplicated && (place.map || place.list)) return `${place.path} kept (frame already grown)`;
  if (place.map) {
    const map = { ...holder[key] };
    const keys = Object.keys(map);
    switch (rng.int(3)) {
      case 0:
        holder[key] = {};
        return `${place.path} emptied`;
      case 1: {
        const k = keys.length && rng.chance(0.5) ? rng.pick(keys) : mutateScalar(rng, 'string', rng.pick(keys.length ? keys : ['segment.bytes']));
        map[k] = mutateScalar(rng, 'string', rng.pick(['1', '-1', '9223372036854775807', '1e309', 'NaN', 'delete', '']));
        holder[key] = map;
        return `${place.path}[${JSON.stringify(k.slice(0, 40))}]=${JSON.stringify(map[k].slice(0, 40))}`;
      }
      default: {
        const k = rng.pick(['segment.bytes', 'retention.ms', 'max.message.bytes', 'cleanup.policy', 'min.insync.replicas', 'segment.ms', 'retention.bytes', 'compression.type']);
        map[k] = rng.pick(['0', '1', '-1', '2147483648', '9223372036854775807', '-9223372036854775808', '0.5', 'compact,delete', 'x']);
        holder[key] = map;
        return `${place.path}[${k}]=${map[k]}`;
      }
    }
  }
  if (place.list) {
    const list = holder[key];
    switch (rng.int(3)) {
      case 0:
        holder[key] = [];
        return `${place.path} emptied`;
      case 1: {
        if (list.length === 0) return `${place.path} left empty`;
        const item = list[rng.int(list.length)];
        const n = Math.max(1, Math.min(rng.pick([2, 10, 100, 1000, 5000]), Math.floor(budget.left / approxSize(item))));
        budget.left -= n * approxSize(item);
        budget.duplicated = true;
        holder[key] = [...list, ...Array.from({ length: n }, () => item)];
        return `${place.path} +${n} duplicates`;
      }
      default:
        if (approxSize(list) > budget.left) return `${place.path} kept (over the growth budget)`;
        budget.left -= approxSize(list);
        holder[key] = [...list].reverse().concat(list);
        budget.duplicated = true;
        return `${place.path} doubled`;
    }
  }
  if (place.message) {
    if (rng.chance(0.5)) {
      holder[key] = null;
      return `${place.path} removed`;
    }
    holder[key] = {};
    return `${place.path} emptied`;
  }
  if (field.resolvedType?.values) {
    const v = rng.pick([-1, 999, 0x7fffffff, -0x80000000, ...Object.values(field.resolvedType.values)]);
    holder[key] = v;
    return `${place.path} enum=${v}`;
  }
  if (field.type === 'bytes' && field.name === 'records' && holder[key]?.length && rng.chance(0.6)) {
    const m = mutateBatch(rng, holder[key]);
    if (m) {
      holder[key] = m[0];
      return `${place.path} ${m[1]}`;
    }
  }
  const before = holder[key];
  if (budget.duplicated && (field.type === 'string' || field.type === 'bytes')) return `${place.path} kept (frame already grown)`;
  holder[key] = mutateScalar(rng, field.type, before ?? (field.type === 'string' ? '' : field.type === 'bytes' ? Buffer.alloc(0) : 0));
  const shown = holder[key];
  const text = typeof shown === 'string' ? JSON.stringify(shown.length > 40 ? `${shown.slice(0, 40)}…(${shown.length})` : shown) : Buffer.isBuffer(shown) ? `<${shown.length} bytes>` : JSON.stringify(shown);
  return `${place.path}=${text}`;
}

/** Wire-level damage after encoding: a length prefix that lies, a cut frame, a flipped byte. */
function damage(rng, bytes) {
  const buf = Buffer.from(bytes);
  if (buf.length < 2) return [buf, 'wire tiny'];
  switch (rng.int(3)) {
    case 0: {
      // Find a length-delimited field (wire type 2) and inflate its length varint's low bits.
      for (let tries = 0; tries < 20; tries++) {
        const i = rng.int(buf.length - 1);
        if ((buf[i] & 7) === 2 && buf[i] >> 3 > 0) {
          buf[i + 1] = (buf[i + 1] & 0x80) | rng.int(128);
          return [buf, `wire lying length at ${i + 1}`];
        }
      }
      return [buf, 'wire unchanged'];
    }
    case 1:
      return [buf.subarray(0, rng.int(buf.length)), 'wire truncated'];
    default: {
      const i = rng.int(buf.length);
      buf[i] ^= 1 << rng.int(8);
      return [buf, `wire bit flip at ${i}`];
    }
  }
}

/** One mutated frame from a recorded one: {bytes, api, description}. */
export function mutateFrame(rng, recorded, correlationId) {
  const msg = decodeFrame(recorded);
  const api = bodyOf(msg) ?? 'none';
  const places = collect(RequestFrame, msg, '', []).filter((p) => p.path !== '.correlationId');
  const notes = [];
  const budget = { left: GROWTH_BUDGET, duplicated: false };
  const count = 1 + rng.int(3);
  for (let i = 0; i < count && places.length; i++) notes.push(mutatePlace(rng, rng.pick(places), budget));
  msg.correlationId = correlationId;
  let bytes;
  try {
    bytes = encodeFrame(msg);
  } catch (err) {
    // A value the encoder refuses: send the original with wire-level damage instead.
    bytes = encodeFrame({ ...decodeFrame(recorded), correlationId });
    notes.push(`encode refused (${err.message})`);
  }
  if (bytes.length > MAX_FRAME_BYTES) {
    bytes = encodeFrame({ ...decodeFrame(recorded), correlationId });
    notes.push(`grown past ${MAX_FRAME_BYTES} bytes, sent as recorded`);
  }
  if (rng.chance(0.08)) {
    const [b, note] = damage(rng, bytes);
    bytes = b;
    notes.push(note);
  }
  return { bytes, api, description: `${api}: ${notes.join('; ')}` };
}
