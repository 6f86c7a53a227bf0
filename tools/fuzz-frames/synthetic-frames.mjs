/**
 * Frames no @mq/client session sends, so the recorded corpus lacks them, but a
 * stranger on the client port can: ControllerForward (brokers only; every
 * command must be refused there, so any metadata change it makes is a
 * violation the metadata watch reports) and OffsetForLeaderEpoch as a
 * consumer and as a follower (replica_id > 0, refused on the client port).
 * They name the steady topic so that a forwarded command that got through
 * would change what the run checks.
 */
import { bodyOf, decodeFrame, encodeFrame } from './schema.mjs';

const json = (o) => Buffer.from(JSON.stringify(o));

export function syntheticFrames(recorded, steadyTopic) {
  // The header (api version, client id) of a recorded frame, so only the body differs from real traffic.
  const header = decodeFrame(recorded.find((f) => f.api === 'metadata').bytes);
  const frame = (api, body) => ({ api, bytes: encodeFrame({ correlationId: 1, apiVersion: header.apiVersion, clientId: header.clientId, [api]: body }) });
  const forward = (command, brokerId = 1) => frame('controllerForward', { brokerId, command: json(command), timeoutMs: 5000 });
  const epochs = (replicaId, topicId) =>
    frame('offsetForLeaderEpoch', {
      replicaId,
      topics: [{ name: steadyTopic, topicId, partitions: [0, 1, 2].map((partition) => ({ partition, currentLeaderEpoch: 0, leaderEpoch: 0 })) }],
    });
  const frames = [
    forward({ type: 'registerBroker', id: 77, host: '127.0.0.1', port: 1, httpPort: 0, rack: '', incarnation: 'fz-forged' }),
    forward({ type: 'createTopic', name: '../../fz-escape-probe', topicId: 'fzForgedTopicId0', numPartitions: 150, replicationFactor: 1, configs: { 'segment.bytes': '1' } }),
    forward({ type: 'createTopic', name: 'fz-forwarded', topicId: 'fzForgedTopicId1', numPartitions: 1, replicationFactor: 1, configs: {} }),
    forward({ type: 'deleteTopic', name: steadyTopic }),
    forward({ type: 'createPartitions', name: steadyTopic, count: 100_000 }),
    forward({ type: 'fenceBroker', id: 1, brokerEpoch: 0, reason: 'controlled shutdown' }),
    forward({ type: 'alterTopicConfigs', name: steadyTopic, topicId: 'x', set: { 'segment.bytes': '1' }, delete: [] }),
    frame('controllerForward', { brokerId: 2, metadataFetch: { brokerId: 2, incarnation: 'fz-forged', fetchIndex: 0, maxWaitMs: 1000, maxEntries: 1000 } }),
    epochs(-1, ''),
    epochs(2, ''),
    epochs(-1, 'fzWrongTopicId'),
  ];
  for (const f of frames) if (bodyOf(decodeFrame(f.bytes)) !== f.api) throw new Error(`synthetic ${f.api} frame does not decode as one`);
  return frames;
}
