import { encodeResponse, type ApiDef } from '@mq/kafka-protocol';
import { DescribeConfigsApi, DescribeGroupsApi, MetadataApi } from '@mq/kafka-protocol/messages';
import { encodeSlicedAnswer } from './sliced-answer.js';
import { turnsDuring } from '../test-support/event-loop.js';

const member = (i: number, bytes: number) => ({
  memberId: `client-${i}-0123456789abcdef`,
  groupInstanceId: i % 2 ? `instance-${i}` : null,
  clientId: 'client',
  clientHost: '/127.0.0.1',
  memberMetadata: Buffer.alloc(bytes, i % 251),
  memberAssignment: Buffer.alloc(40, 1),
});
const group = (g: number, members: number, bytes: number) => ({ errorCode: 0, groupId: `group-${g}`, groupState: 'Stable', protocolType: 'consumer', protocolData: 'range', members: Array.from({ length: members }, (_, i) => member(i, bytes)), authorizedOperations: 7 });
const partition = (p: number) => ({ errorCode: 0, partitionIndex: p, leaderId: 1, leaderEpoch: 3, replicaNodes: [1, 2, 3], isrNodes: [1, 2], offlineReplicas: [3] });
const topic = (name: string, partitions: number) => ({ errorCode: 0, name, isInternal: false, partitions: Array.from({ length: partitions }, (_, p) => partition(p)), topicAuthorizedOperations: 5 });
const config = (i: number) => ({ name: `k.${i}`, value: String(i), readOnly: false, isDefault: i % 2 === 0, configSource: 5, isSensitive: false, synonyms: [{ name: `s.${i}`, value: 'x', source: 4 }] });
const resource = (t: number, configs: number) => ({ errorCode: 0, errorMessage: null, resourceType: 2, resourceName: `topic-${t}`, configs: Array.from({ length: configs }, (_, i) => config(i)) });

const versions = (api: ApiDef<unknown, unknown>) => Array.from({ length: api.maxVersion - api.minVersion + 1 }, (_, i) => api.minVersion + i);

const cases: Array<[string, ApiDef<unknown, unknown>, Record<string, unknown>]> = [
  ['Metadata, many topics', MetadataApi as ApiDef<unknown, unknown>, { throttleTimeMs: 2, brokers: [{ nodeId: 1, host: 'h', port: 9, rack: null }], clusterId: 'c', controllerId: 1, topics: Array.from({ length: 300 }, (_, t) => topic(`t-${t}`, t % 3)), clusterAuthorizedOperations: 9 }],
  ['Metadata, one topic of many partitions among others', MetadataApi as ApiDef<unknown, unknown>, { brokers: [], clusterId: null, controllerId: 1, topics: [topic('a', 1), topic('big', 2000), topic('c', 0)], clusterAuthorizedOperations: 9 }],
  ['DescribeGroups, many groups', DescribeGroupsApi as ApiDef<unknown, unknown>, { throttleTimeMs: 1, groups: Array.from({ length: 400 }, (_, g) => group(g, g % 3, 100)) }],
  ['DescribeGroups, one group of many members', DescribeGroupsApi as ApiDef<unknown, unknown>, { groups: [group(1, 2, 5), group(2, 1000, 300), { ...group(3, 0, 0), errorCode: 69 }] }],
  ['DescribeConfigs, many resources', DescribeConfigsApi as ApiDef<unknown, unknown>, { throttleTimeMs: 0, results: Array.from({ length: 300 }, (_, t) => resource(t, 3)) }],
  ['DescribeConfigs, one resource of many configs', DescribeConfigsApi as ApiDef<unknown, unknown>, { results: [resource(1, 1), resource(2, 600)] }],
];

describe('encodeSlicedAnswer (the Kafka door)', () => {
  it('leaves small answers, and other APIs, to the one-step encoder', () => {
    expect(encodeSlicedAnswer(DescribeGroupsApi, 5, 1, { throttleTimeMs: 0, groups: [group(1, 3, 10)] })).toBeUndefined();
    expect(encodeSlicedAnswer(MetadataApi, 12, 1, { throttleTimeMs: 0, brokers: [], clusterId: null, controllerId: 1, topics: [topic('t', 10)], clusterAuthorizedOperations: 0 })).toBeUndefined();
  });

  it.each(cases)('the same bytes as the one-step encoding at every version: %s', async (_name, api, body) => {
    for (const v of versions(api)) {
      const sliced = encodeSlicedAnswer(api, v, 77, body);
      expect(sliced).toBeDefined();
      const { parts, yields } = await sliced!;
      expect(yields).toBeGreaterThanOrEqual(0);
      expect(Buffer.concat(parts).equals(Buffer.concat(encodeResponse(api, v, 77, body as never)))).toBe(true);
    }
  });

  it('yields to the event loop while encoding a 16 MB DescribeGroups answer', async () => {
    const body = { throttleTimeMs: 0, groups: Array.from({ length: 20_000 }, (_, g) => group(g, 1, 700)) };
    const { result, turns } = await turnsDuring(() => encodeSlicedAnswer(DescribeGroupsApi, 5, 1, body)!);
    expect(Buffer.concat(result.parts).length).toBeGreaterThan(15 * 1024 * 1024);
    expect(result.yields).toBeGreaterThan(0);
    expect(turns).toBeGreaterThan(result.yields / 2);
  });

  it('slices inside one group of 10,000 members', async () => {
    const body = { throttleTimeMs: 0, groups: [group(1, 10_000, 1600)] };
    const { result, turns } = await turnsDuring(() => encodeSlicedAnswer(DescribeGroupsApi, 4, 1, body)!);
    expect(Buffer.concat(result.parts).equals(Buffer.concat(encodeResponse(DescribeGroupsApi, 4, 1, body)))).toBe(true);
    expect(result.yields).toBeGreaterThan(0);
    expect(turns).toBeGreaterThan(0);
  });
});
