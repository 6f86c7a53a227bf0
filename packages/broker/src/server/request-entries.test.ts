import { mq } from '@mq/protocol/wire';
import { limitRequestEntries } from './request-entries.js';

describe('limitRequestEntries', () => {
  it('merges repeated topics, partitions and groups, keeping first-seen order', () => {
    const md = mq.MetadataRequest.create({ topics: ['b', 'a', 'b', 'a'] });
    limitRequestEntries('metadata', md, 10);
    expect(md.topics).toEqual(['b', 'a']);
    const of = mq.OffsetFetchRequest.create({ groupId: 'g', topics: [{ name: 't', partitions: [1, 0] }, { name: 'u', partitions: [0] }, { name: 't', partitions: [0, 2] }] });
    limitRequestEntries('offsetFetch', of, 10);
    expect(of.topics.map((t) => [t.name, t.partitions])).toEqual([['t', [1, 0, 2]], ['u', [0]]]);
    const dg = mq.DescribeGroupsRequest.create({ groupIds: Array(1000).fill('g') });
    limitRequestEntries('describeGroups', dg, 1);
    expect(dg.groupIds).toEqual(['g']);
  });

  it('keeps one of identical ListOffsets queries and refuses conflicting ones for the same partition', () => {
    const same = mq.ListOffsetsRequest.create({ topics: [{ name: 't', partitions: [{ partition: 0, timestamp: -1 }] }, { name: 't', partitions: [{ partition: 0, timestamp: -1 }] }] });
    limitRequestEntries('listOffsets', same, 10);
    expect(same.topics).toHaveLength(1);
    expect(same.topics[0]!.partitions).toHaveLength(1);
    const differ = mq.ListOffsetsRequest.create({ topics: [{ name: 't', partitions: [{ partition: 0, timestamp: -1 }, { partition: 0, timestamp: -2 }] }] });
    expect(() => limitRequestEntries('listOffsets', differ, 10)).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST' }));
  });

  it('DeleteRecords: a partition named twice with one offset is kept once, with two offsets refused; partitions count against the cap', () => {
    const same = mq.DeleteRecordsRequest.create({ topics: [{ name: 't', partitions: [{ partition: 0, offset: 5 }] }, { name: 't', partitions: [{ partition: 0, offset: 5 }, { partition: 1, offset: 2 }] }] });
    limitRequestEntries('deleteRecords', same, 10);
    expect(same.topics.map((t) => (t.partitions ?? []).map((p) => p.partition))).toEqual([[0, 1]]);
    const differ = mq.DeleteRecordsRequest.create({ topics: [{ name: 't', partitions: [{ partition: 0, offset: 5 }, { partition: 0, offset: 6 }] }] });
    expect(() => limitRequestEntries('deleteRecords', differ, 10)).toThrow(/asked for twice with different queries/);
    const many = mq.DeleteRecordsRequest.create({ topics: [{ name: 't', partitions: [0, 1, 2].map((partition) => ({ partition, offset: 1 })) }] });
    expect(() => limitRequestEntries('deleteRecords', many, 2)).toThrow(/names 3 entries/);
    const alter = mq.IncrementalAlterConfigsRequest.create({ resources: [{ topic: 'a' }, { topic: 'b' }, { topic: 'c' }] });
    expect(() => limitRequestEntries('incrementalAlterConfigs', alter, 2)).toThrow(/names 3 entries/);
  });

  it('refuses more distinct entries than the cap with INVALID_REQUEST; leaves produce and fetch uncapped', () => {
    expect(() => limitRequestEntries('metadata', mq.MetadataRequest.create({ topics: ['a', 'b', 'c'] }), 2)).toThrow(/names 3 entries; the limit is 2/);
    const fetch = mq.FetchRequest.create({ topics: [{ name: 't', partitions: [{ partition: 0 }, { partition: 1 }, { partition: 2 }] }] });
    expect(() => limitRequestEntries('fetch', fetch, 2)).not.toThrow();
  });
});
