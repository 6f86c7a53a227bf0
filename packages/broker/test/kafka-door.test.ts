/**
 * The Kafka listener as a protocol endpoint: what ApiVersions advertises,
 * UNSUPPORTED_VERSION for anything else (never a dropped connection), and
 * bad frames (lying sizes, bodies that do not decode, random bytes) closing
 * only their own connection with one log line.
 */
import fc from 'fast-check';
import { ApiVersionsApi, CreateTopicsApi, MetadataApi, ProduceApi, encodeRequest } from '@mq/kafka-protocol';
import { AlterPartitionReassignmentsApi, DescribeLogDirsApi, ElectLeadersApi, ListPartitionReassignmentsApi } from '@mq/kafka-protocol/messages';
import { startTestBroker, waitFor, type TestBroker } from './helpers.js';
import { KafkaWire } from './kafka-wire.js';
import { TestClient } from './wire-client.js';

/** Every API the listener serves and its versions (the README's table). */
const ADVERTISED = [
  [0, 3, 9], // Produce
  [1, 4, 11], // Fetch
  [2, 1, 6], // ListOffsets
  [3, 0, 9], // Metadata
  [8, 0, 7], // OffsetCommit
  [9, 1, 7], // OffsetFetch
  [10, 0, 3], // FindCoordinator
  [11, 0, 5], // JoinGroup
  [12, 0, 3], // Heartbeat
  [13, 0, 3], // LeaveGroup
  [14, 0, 3], // SyncGroup
  [15, 0, 5], // DescribeGroups
  [16, 0, 3], // ListGroups
  [17, 0, 1], // SaslHandshake
  [18, 0, 3], // ApiVersions
  [19, 0, 4], // CreateTopics
  [20, 0, 4], // DeleteTopics
  [21, 0, 2], // DeleteRecords
  [22, 0, 4], // InitProducerId
  [23, 0, 4], // OffsetForLeaderEpoch
  [24, 0, 3], // AddPartitionsToTxn
  [25, 0, 3], // AddOffsetsToTxn
  [26, 0, 3], // EndTxn
  [28, 0, 3], // TxnOffsetCommit
  [32, 0, 2], // DescribeConfigs
  [33, 0, 1], // AlterConfigs
  [35, 0, 4], // DescribeLogDirs
  [36, 0, 2], // SaslAuthenticate
  [37, 0, 2], // CreatePartitions
  [42, 0, 2], // DeleteGroups
  [43, 0, 2], // ElectLeaders
  [44, 0, 1], // IncrementalAlterConfigs
  [45, 0, 0], // AlterPartitionReassignments
  [46, 0, 0], // ListPartitionReassignments
  [48, 0, 1], // DescribeClientQuotas
  [49, 0, 1], // AlterClientQuotas
  [60, 0, 0], // DescribeCluster
].map(([apiKey, minVersion, maxVersion]) => ({ apiKey, minVersion, maxVersion }));

describe('Kafka listener: versions and bad input', () => {
  let t: TestBroker;
  let port: number;
  beforeAll(async () => {
    t = await startTestBroker({ 'kafka.listener.port': '0', 'max.frame.bytes': String(64 * 1024), 'connection.frame.timeout.ms': '1500' });
    port = t.broker.kafkaPort!;
  });
  afterAll(() => t.cleanup());

  it('advertises exactly the APIs it serves, at v0 and at the flexible v3', async () => {
    const c = await KafkaWire.connect(port);
    for (const v of [0, 3]) {
      const r = await c.request(ApiVersionsApi, v, { clientSoftwareName: 'test', clientSoftwareVersion: '1' });
      expect(r.errorCode).toBe(0);
      expect(r.apiKeys).toEqual(ADVERTISED);
    }
    c.close();
  });

  it('answers an ApiVersions version it does not serve in v0 with UNSUPPORTED_VERSION and the versions (KIP-511)', async () => {
    const c = await KafkaWire.connect(port);
    c.sendRaw(encodeRequest({ ...ApiVersionsApi, maxVersion: 99 }, 99, 41, 'x', {}));
    const frame = (await c.nextFrame())!;
    expect(frame.readInt32BE(0)).toBe(41);
    const body = ApiVersionsApi.readResponse(new (await import('@mq/kafka-protocol')).Reader(frame, 4), 0);
    expect(body.errorCode).toBe(35);
    expect(body.apiKeys).toEqual(ADVERTISED);
    expect((await c.request(ApiVersionsApi, 1, {})).errorCode).toBe(0);
    c.close();
  });

  it('answers an unknown API key, and a version below the served range, with UNSUPPORTED_VERSION and keeps the connection', async () => {
    const c = await KafkaWire.connect(port);
    const unknown = Buffer.from('0000000c' + '7000' + '0000' + '00000007' + '0000' + 'abcd', 'hex');
    c.sendRaw(unknown);
    const f1 = (await c.nextFrame())!;
    expect([f1.readInt32BE(0), f1.readInt16BE(4)]).toEqual([7, 35]);
    c.sendRaw(encodeRequest({ ...ProduceApi, minVersion: 0 }, 2, 8, 'x', { acks: 1, timeoutMs: 1000, topicData: [] }));
    const f2 = (await c.nextFrame())!;
    expect([f2.readInt32BE(0), f2.readInt16BE(4)]).toEqual([8, 35]);
    expect((await c.request(MetadataApi, 1, { topics: [] })).brokers).toEqual([{ nodeId: t.broker.brokerId, host: '127.0.0.1', port, rack: null }]);
    c.close();
  });

  it('closes only the connection of a frame above max.frame.bytes or a body that does not decode, with one log line each', async () => {
    const bystander = await KafkaWire.connect(port);
    const before = t.lines.filter((l) => l.msg === 'bad kafka frame: connection closed').length;
    const big = await KafkaWire.connect(port);
    big.sendRaw(Buffer.from('7fffffff', 'hex'));
    await big.closed;
    const garbled = await KafkaWire.connect(port);
    // Metadata v1 claiming 1000 topics in a few bytes.
    garbled.sendRaw(Buffer.from('00000010' + '0003' + '0001' + '00000001' + 'ffff' + '000003e8' + '0001', 'hex'));
    await garbled.closed;
    await waitFor(() => t.lines.filter((l) => l.msg === 'bad kafka frame: connection closed').length === before + 2 || undefined);
    expect((await bystander.request(MetadataApi, 1, { topics: [] })).brokers.length).toBe(1);
    bystander.close();
  });

  it('closes a connection whose frame is never completed (a size that promised more, a trickle) after connection.frame.timeout.ms, with one log line', async () => {
    const bystander = await KafkaWire.connect(port);
    const stalled = await KafkaWire.connect(port);
    for (const c of [bystander, stalled]) expect((await c.request(ApiVersionsApi, 0, {})).errorCode).toBe(0);
    stalled.sendRaw(Buffer.from('00000100' + '0012', 'hex'));
    const started = Date.now();
    const trickle = setInterval(() => stalled.isClosed || stalled.sendRaw(Buffer.from([0])), 200);
    await stalled.closed;
    clearInterval(trickle);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(t.lines.some((l) => String(l.msg).startsWith('closing a stalled kafka connection: a frame not completed'))).toBe(true);
    expect((await bystander.request(ApiVersionsApi, 0, {})).errorCode).toBe(0);
    bystander.close();
  });

  it('answers or closes on any random frame, and keeps serving others', async () => {
    const watcher = await KafkaWire.connect(port);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 70 }), fc.integer({ min: -1, max: 14 }), fc.uint8Array({ maxLength: 120 }), async (key, version, body) => {
        const c = await KafkaWire.connect(port);
        const head = Buffer.alloc(14);
        head.writeInt32BE(10 + body.length, 0);
        head.writeInt16BE(key, 4);
        head.writeInt16BE(version, 6);
        head.writeInt32BE(3, 8);
        head.writeInt16BE(-1, 12);
        c.sendRaw(Buffer.concat([head, Buffer.from(body)]));
        const frame = await c.nextFrame(10_000);
        if (frame) expect(frame.readInt32BE(0)).toBe(3);
        else expect(c.isClosed).toBe(true);
        c.close();
        expect((await watcher.request(ApiVersionsApi, 0, {})).errorCode).toBe(0);
      }),
      { numRuns: 150 },
    );
    watcher.close();
  });
});

describe('Kafka listener: the scale-out APIs (a one-broker cluster)', () => {
  let t: TestBroker;
  let port: number;
  beforeAll(async () => {
    t = await startTestBroker({ 'kafka.listener.port': '0' });
    port = t.broker.kafkaPort!;
  });
  afterAll(() => t.cleanup());

  it('DescribeLogDirs, ElectLeaders, AlterPartitionReassignments and ListPartitionReassignments answer through the core', async () => {
    const c = await KafkaWire.connect(port);
    const created = await c.request(CreateTopicsApi, 4, { topics: [{ name: 'scale-k', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false });
    expect(created.topics[0]!.errorCode).toBe(0);
    await waitFor(async () => (await c.request(MetadataApi, 9, { topics: [{ name: 'scale-k' }], allowAutoTopicCreation: false })).topics[0]?.partitions.every((p) => p.leaderId >= 0));
    for (const v of [0, 4]) {
      const dirs = await c.request(DescribeLogDirsApi, v, { topics: [{ topic: 'scale-k', partitions: [1] }] });
      expect(dirs.results).toHaveLength(1);
      expect(dirs.results[0]!.logDir).toMatch(/\S/);
      expect(dirs.results[0]!.topics).toEqual([{ name: 'scale-k', partitions: [{ partitionIndex: 1, partitionSize: 0, offsetLag: 0, isFutureKey: false }] }]);
      if (v >= 4) expect(dirs.results[0]!.usableBytes).toBeGreaterThan(0);
    }
    const all = await c.request(DescribeLogDirsApi, 2, { topics: null });
    expect(all.results[0]!.topics.find((x) => x.name === 'scale-k')!.partitions.map((p) => p.partitionIndex).sort()).toEqual([0, 1]);
    // A list naming no partition: the log dir, no replicas.
    const none = await c.request(DescribeLogDirsApi, 2, { topics: [] });
    expect(none.results[0]!.topics).toEqual([]);
    // The partition filter is the core's: the mq door answers the same replica.
    const wire = await TestClient.connect(t.url);
    const mqDoor = await wire.request({ describeLogDirs: { partitions: [{ topic: 'scale-k', partitions: [1] }] } });
    await wire.close();
    expect(mqDoor.describeLogDirs!.replicas.map((r) => `${r.topic}-${r.partition}`)).toEqual(['scale-k-1']);

    const preferred = await c.request(ElectLeadersApi, 2, { electionType: 0, topicPartitions: [{ topic: 'scale-k', partitions: [0] }], timeoutMs: 5000 });
    expect(preferred.errorCode).toBe(0);
    expect(preferred.replicaElectionResults).toEqual([{ topic: 'scale-k', partitionResult: [{ partitionId: 0, errorCode: 84, errorMessage: expect.any(String) }] }]); // ELECTION_NOT_NEEDED
    const unclean = await c.request(ElectLeadersApi, 1, { electionType: 1, topicPartitions: [{ topic: 'scale-k', partitions: [0] }], timeoutMs: 5000 });
    expect(unclean.errorCode).toBe(42); // INVALID_REQUEST
    expect(unclean.replicaElectionResults[0]!.partitionResult[0]!.errorCode).toBe(42);

    const bad = await c.request(AlterPartitionReassignmentsApi, 0, { timeoutMs: 5000, topics: [{ name: 'scale-k', partitions: [{ partitionIndex: 0, replicas: [1, 77] }, { partitionIndex: 9, replicas: [1] }] }] });
    expect(bad.errorCode).toBe(0);
    const codes = Object.fromEntries(bad.responses[0]!.partitions.map((p) => [p.partitionIndex, p.errorCode]));
    expect(codes).toEqual({ 0: 39, 9: 3 }); // INVALID_REPLICA_ASSIGNMENT, UNKNOWN_TOPIC_OR_PARTITION
    const cancel = await c.request(AlterPartitionReassignmentsApi, 0, { timeoutMs: 5000, topics: [{ name: 'scale-k', partitions: [{ partitionIndex: 0, replicas: null }] }] });
    expect(cancel.responses[0]!.partitions[0]!.errorCode).toBe(85); // NO_REASSIGNMENT_IN_PROGRESS
    const listed = await c.request(ListPartitionReassignmentsApi, 0, { timeoutMs: 5000, topics: null });
    expect(listed).toMatchObject({ errorCode: 0, topics: [] });
    c.close();
  });
});
