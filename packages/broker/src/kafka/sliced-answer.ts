/**
 * The Kafka door's large answers encoded in slices (issue 22), as the
 * WebSocket door's are (server/sliced-response.ts, the same Slicer): a
 * Metadata, DescribeConfigs or DescribeGroups answer at its caps (request.max.entries
 * topics or groups, a group of thousands of members) was encoded in one
 * synchronous step, during which no other connection was served.
 *
 * Kafka's arrays are a count and then the entries back to back, so the
 * answer is the encoding of the same answer with the long list empty, with
 * the count replaced and the entries, each encoded on its own, spliced in
 * where the empty list was. That place is found from the end: after each of
 * these lists come only fixed-size fields (authorized operations, the tagged
 * fields of flexible versions), whose length `after(version)` gives; the
 * empty count found there is checked, and an answer that does not match is
 * encoded in one step. A long list inside one entry (a topic's partitions, a
 * group's members, a resource's configs) is spliced the same way.
 */
import { encodeResponse, Writer, type ApiDef } from '@mq/kafka-protocol';
import {
  DescribeConfigsApi,
  DescribeGroupsApi,
  MetadataApi,
  writeDescribeConfigsResourceResult,
  writeDescribeConfigsResult,
  writeDescribedGroup,
  writeDescribedGroupMember,
  writeMetadataResponsePartition,
  writeMetadataResponseTopic,
} from '@mq/kafka-protocol/messages';
import { type SliceClock, Slicer } from '../slicer.js';
import { SLICED_MIN_ENTRIES } from '../server/sliced-response.js';

type EntryWriter = (w: Writer, v: number, o: never) => void;

/** A long list: its field, its entries' writer, whether a version is flexible, the bytes after the list, and a long list inside an entry. */
interface ListSpec {
  name: string;
  entry: EntryWriter;
  flexible: (v: number) => boolean;
  after: (v: number) => number;
  nested?: ListSpec;
}

const metadataFlex = (v: number) => v >= 9;
const groupsFlex = (v: number) => v >= 5;
/** Authorized operations (int32) from v8 of Metadata, then the tagged fields of flexible versions. */
const metadataAfter = (v: number) => (v >= 8 ? 4 : 0) + (v >= 9 ? 1 : 0);

/** The answers encoded in slices, by API key: their long list (the generated writers of @mq/kafka-protocol, in schema order). */
const SLICED: ReadonlyMap<number, ListSpec> = new Map([
  [
    MetadataApi.key,
    {
      name: 'topics',
      entry: writeMetadataResponseTopic as EntryWriter,
      flexible: metadataFlex,
      after: metadataAfter,
      nested: { name: 'partitions', entry: writeMetadataResponsePartition as EntryWriter, flexible: metadataFlex, after: metadataAfter },
    },
  ],
  [
    DescribeConfigsApi.key,
    {
      name: 'results',
      entry: writeDescribeConfigsResult as EntryWriter,
      flexible: () => false,
      after: () => 0,
      nested: { name: 'configs', entry: writeDescribeConfigsResourceResult as EntryWriter, flexible: () => false, after: () => 0 },
    },
  ],
  [
    DescribeGroupsApi.key,
    {
      name: 'groups',
      entry: writeDescribedGroup as EntryWriter,
      flexible: groupsFlex,
      after: (v) => (v >= 5 ? 1 : 0),
      // A member list is followed by the group's authorized operations (v3+) and its tagged fields.
      nested: { name: 'members', entry: writeDescribedGroupMember as EntryWriter, flexible: groupsFlex, after: (v) => (v >= 3 ? 4 : 0) + (v >= 5 ? 1 : 0) },
    },
  ],
]);

type Entries = Record<string, unknown[] | null | undefined>;

function listOf(o: Entries, spec: ListSpec): unknown[] {
  return o[spec.name] ?? [];
}

function entryCount(o: Entries, spec: ListSpec): number {
  const list = listOf(o, spec);
  let n = list.length;
  if (spec.nested) for (const e of list) n += listOf(e as Entries, spec.nested).length;
  return n;
}

class NotWhereExpected extends Error {}

/**
 * Appends to `out` the encoding of the list `spec` of an object whose
 * encoding with that list empty is `empty`: what precedes the list, its
 * count, its entries (each alone, yielding between them), what follows it.
 */
async function spliceList(empty: Buffer, spec: ListSpec, list: unknown[], v: number, slicer: Slicer, out: Buffer[]): Promise<void> {
  const flex = spec.flexible(v);
  const countBytes = flex ? 1 : 4;
  const at = empty.length - spec.after(v) - countBytes;
  // An empty array: uvarint 1 (length + 1) when flexible, int32 0 otherwise.
  const zero = flex ? empty[at] === 1 : at >= 0 && empty.readInt32BE(at) === 0;
  if (at < 0 || !zero) throw new NotWhereExpected();
  out.push(empty.subarray(0, at));
  const count = new Writer(8);
  count.arrayLength(list.length, flex);
  out.push(...count.finish());
  for (const entry of list) {
    const inner = spec.nested && listOf(entry as Entries, spec.nested).length >= SLICED_MIN_ENTRIES;
    const w = new Writer();
    if (inner) {
      spec.entry(w, v, { ...(entry as Entries), [spec.nested!.name]: [] } as never);
      await spliceList(Buffer.concat(w.finish()), spec.nested!, listOf(entry as Entries, spec.nested!), v, slicer, out);
    } else {
      spec.entry(w, v, entry as never);
      out.push(...w.finish());
    }
    await slicer.maybeYield();
  }
  out.push(empty.subarray(empty.length - spec.after(v)));
}

/**
 * The answer's frame (size prefix included), encoded in slices when it is a
 * large answer of one of the APIs above; undefined otherwise (encode it in one step).
 */
export function encodeSlicedAnswer<Res>(api: ApiDef<unknown, Res>, version: number, correlationId: number, body: Res, clock?: SliceClock): Promise<{ parts: Buffer[]; longestStepMs: number; yields: number }> | undefined {
  const spec = SLICED.get(api.key);
  const o = body as Entries;
  if (!spec || typeof body !== 'object' || body === null || entryCount(o, spec) < SLICED_MIN_ENTRIES) return undefined;
  return (async () => {
    const slicer = new Slicer(undefined, clock);
    const empty = Buffer.concat(encodeResponse(api, version, correlationId, { ...o, [spec.name]: [] } as never));
    const out: Buffer[] = [];
    try {
      await spliceList(empty, spec, listOf(o, spec), version, slicer, out);
    } catch (err) {
      if (!(err instanceof NotWhereExpected)) throw err;
      // Not the layout this file expects (a schema change): correct bytes in one step rather than wrong ones.
      return { parts: encodeResponse(api, version, correlationId, body as never), longestStepMs: NaN, yields: 0 };
    }
    const frame = Buffer.concat(out);
    frame.writeInt32BE(frame.length - 4, 0);
    slicer.done();
    return { parts: [frame], longestStepMs: slicer.longestMs, yields: slicer.yields };
  })();
}
