/**
 * Large answers encoded in slices (issue 22). Metadata, DescribeConfigs and
 * DescribeGroups answers are bounded by caps (request.max.entries, the
 * partition budgets, the DescribeGroups byte budget), but at those caps
 * protobufjs encodes one in a single synchronous step during which no other
 * connection is served (a DescribeGroups answer of 20,000 one-member groups,
 * 17 MB: 1.6 s on the 2-core development machine). Here the answer's long list
 * (and a long list inside one entry: a group's members, a topic's
 * partitions) is encoded entry by entry, yielding to the event loop once a
 * slice has taken SLICE_MS, and the frame is assembled from the pieces. A
 * repeated embedded-message field is the concatenation of its entries' tag,
 * length and bytes, so the result decodes exactly as protobufjs's one-step
 * encoding of the same frame.
 */
import { mq, type ResponseFrame } from '@mq/protocol/wire';
import { type SliceClock, Slicer } from '../slicer.js';

/** An answer with fewer list entries than this is encoded in one step (a few milliseconds at most). */
export const SLICED_MIN_ENTRIES = 256;

interface Codec {
  encode(message: never): { finish(): Uint8Array };
}

/** A repeated embedded-message field: its number, its name in the decoded object, its entries' codec, and a long list inside an entry. */
interface ListSpec {
  field: number;
  name: string;
  entry: Codec;
  nested?: ListSpec;
}

/** The answers encoded in slices: the ResponseFrame field of the body, the body's codec and its long list (mq.proto). */
const SLICED: Record<string, { frameField: number; body: Codec; list: ListSpec }> = {
  metadata: {
    frameField: 11,
    body: mq.MetadataResponse,
    list: { field: 4, name: 'topics', entry: mq.TopicMetadata, nested: { field: 5, name: 'partitions', entry: mq.PartitionMetadata } },
  },
  describeConfigs: { frameField: 15, body: mq.DescribeConfigsResponse, list: { field: 1, name: 'results', entry: mq.ConfigResult, nested: { field: 4, name: 'entries', entry: mq.ConfigEntry } } },
  describeGroups: {
    frameField: 38,
    body: mq.DescribeGroupsResponse,
    list: { field: 1, name: 'groups', entry: mq.DescribedGroup, nested: { field: 7, name: 'members', entry: mq.DescribedGroupMember } },
  },
};

type Entries = Record<string, unknown[] | null | undefined>;

/** Entries of the list and of the lists inside its entries. */
function entryCount(message: Entries, spec: ListSpec): number {
  const list = message[spec.name] ?? [];
  let n = list.length;
  if (spec.nested) for (const e of list) n += ((e as Entries)[spec.nested.name] ?? []).length;
  return n;
}

function tagAndLength(field: number, length: number): Buffer {
  const out: number[] = [];
  for (let n = (field << 3) | 2, i = 0; i < 2; i++, n = length) {
    while (n >= 0x80) {
      out.push((n % 128) | 0x80);
      n = Math.floor(n / 128);
    }
    out.push(n);
  }
  return Buffer.from(out);
}

/** `message` encoded with `codec`, its `spec` list one entry at a time; returns the pieces whose concatenation is the message. */
async function encodeList(codec: Codec, message: Entries, spec: ListSpec, slicer: Slicer, parts: Uint8Array[]): Promise<number> {
  const head = codec.encode({ ...message, [spec.name]: [] } as never).finish();
  parts.push(head);
  let length = head.length;
  for (const entry of message[spec.name] ?? []) {
    let body: Uint8Array;
    const inner = spec.nested && ((entry as Entries)[spec.nested.name] ?? []).length >= SLICED_MIN_ENTRIES;
    if (inner) {
      const pieces: Uint8Array[] = [];
      await encodeList(spec.entry, entry as Entries, spec.nested!, slicer, pieces);
      body = Buffer.concat(pieces);
    } else body = spec.entry.encode(entry as never).finish();
    const tag = tagAndLength(spec.field, body.length);
    parts.push(tag, body);
    length += tag.length + body.length;
    await slicer.maybeYield();
  }
  return length;
}

/**
 * The frame's bytes, encoded in slices, when its body is a large answer of
 * one of the APIs above; undefined otherwise (encode it in one step).
 */
export function encodeSlicedResponse(frame: ResponseFrame, api: string, clock?: SliceClock): Promise<{ bytes: Uint8Array; longestStepMs: number; yields: number }> | undefined {
  const sliced = SLICED[api];
  const body = (frame as Record<string, unknown>)[api] as Entries | undefined;
  if (!sliced || !body || entryCount(body, sliced.list) < SLICED_MIN_ENTRIES) return undefined;
  return (async () => {
    const slicer = new Slicer(undefined, clock);
    const parts: Uint8Array[] = [];
    const length = await encodeList(sliced.body, body, sliced.list, slicer, parts);
    const head = mq.ResponseFrame.encode({ ...frame, [api]: undefined }).finish();
    const bytes = Buffer.concat([head, tagAndLength(sliced.frameField, length), ...parts]);
    slicer.done();
    return { bytes, longestStepMs: slicer.longestMs, yields: slicer.yields };
  })();
}
