import { decodeResponse, encodeResponse, type ResponseFrame } from '@mq/protocol/wire';
import { encodeSlicedResponse } from './sliced-response.js';
import { turnsDuring } from '../test-support/event-loop.js';

const member = (i: number, metadataBytes: number) => ({
  memberId: `client-${i}-0123456789abcdef0123456789abcdef`,
  groupInstanceId: i % 2 ? `instance-${i}` : '',
  clientId: 'client',
  clientHost: '/127.0.0.1',
  metadata: Buffer.alloc(metadataBytes, i % 251),
  assignment: Buffer.alloc(40, 1),
});

const group = (g: number, members: number, metadataBytes: number) => ({
  errorCode: 0,
  groupId: `group-${g}`,
  state: 'Stable',
  protocolType: 'consumer',
  protocol: 'range',
  generationId: g,
  leader: 'client-0',
  members: Array.from({ length: members }, (_, i) => member(i, metadataBytes)),
});

describe('encodeSlicedResponse', () => {
  it('leaves small answers to the one-step encoder', () => {
    expect(encodeSlicedResponse({ correlationId: 1, describeGroups: { groups: [group(1, 3, 10)] } }, 'describeGroups')).toBeUndefined();
    expect(encodeSlicedResponse({ correlationId: 1, fetch: { topics: [] } }, 'fetch')).toBeUndefined();
  });

  it.each<[string, ResponseFrame]>([
    ['describeGroups, many groups', { correlationId: 7, throttleMs: 3, describeGroups: { groups: Array.from({ length: 600 }, (_, g) => group(g, g % 3, 200)) } }],
    ['describeGroups, one group of many members', { correlationId: 8, describeGroups: { groups: [group(1, 2, 5), group(2, 1000, 300), { groupId: 'gone', state: 'Dead', errorCode: 69, errorMessage: 'group "gone" does not exist' }] } }],
    [
      'describeConfigs',
      {
        correlationId: 9,
        describeConfigs: {
          results: [
            ...Array.from({ length: 400 }, (_, t) => ({ resource: `topic-${t}`, errorCode: 0, entries: Array.from({ length: 14 }, (_, i) => ({ name: `k.${i}`, value: String(t * i), source: 'default' })) })),
            { resource: 'missing', errorCode: 3, errorMessage: 'no', entries: [] },
          ],
        },
      },
    ],
    [
      'metadata (a topic of many partitions among others)',
      {
        correlationId: 10,
        metadata: {
          clusterId: 'c1',
          controllerId: 2,
          brokers: [{ id: 1, host: 'h', port: 1 }],
          topics: [
            { errorCode: 0, name: 'big', topicId: 'abc', partitions: Array.from({ length: 300 }, (_, p) => ({ errorCode: 0, partition: p, leader: 1, leaderEpoch: 3, replicas: [1, 2, 3], isr: [1, 2], offlineReplicas: [3], partitionEpoch: 5 })) },
            { errorCode: 3, name: 'missing', partitions: [] },
          ],
        },
      },
    ],
  ])('decodes exactly as the one-step encoding: %s', async (_name, frame) => {
    const api = Object.keys(frame).find((k) => !['correlationId', 'throttleMs', 'errorCode', 'errorMessage'].includes(k))!;
    const sliced = encodeSlicedResponse(frame, api);
    expect(sliced).toBeDefined();
    const { bytes } = await sliced!;
    expect(decodeResponse(bytes)).toEqual(decodeResponse(encodeResponse(frame)));
  });

  it('yields to the event loop while encoding a 17 MB DescribeGroups answer', async () => {
    // 20,000 one-member groups of 700-byte subscriptions: 1.6 s in one step on the loaded 2-core machine.
    const frame: ResponseFrame = { correlationId: 1, describeGroups: { groups: Array.from({ length: 20_000 }, (_, g) => group(g, 1, 700)) } };
    const { result, turns } = await turnsDuring(() => encodeSlicedResponse(frame, 'describeGroups')!);
    expect(result.bytes.length).toBeGreaterThan(16 * 1024 * 1024);
    // Wall-clock step lengths depend on the machine's load; that other work ran between slices does not.
    expect(result.yields).toBeGreaterThan(0);
    expect(turns).toBeGreaterThan(result.yields / 2);
  });

  it('slices inside one group of 10,000 members', async () => {
    const frame: ResponseFrame = { correlationId: 1, describeGroups: { groups: [group(1, 10_000, 1600)] } };
    const { result, turns } = await turnsDuring(() => encodeSlicedResponse(frame, 'describeGroups')!);
    expect(decodeResponse(result.bytes).describeGroups!.groups![0]!.members!.length).toBe(10_000);
    expect(result.yields).toBeGreaterThan(0);
    expect(turns).toBeGreaterThan(0);
  });
});
