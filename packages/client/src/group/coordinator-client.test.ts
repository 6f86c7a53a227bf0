/**
 * The coordinator client follows a coordinator that moves (a cluster moves
 * it with the leaders of `__consumer_offsets`): a lost connection or
 * NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE makes it ask FindCoordinator
 * again, COORDINATOR_LOAD_IN_PROGRESS makes it wait, and a commit that
 * failed retriably is sent again to the new coordinator. The client's real
 * Cluster (its retries) runs over scripted broker connections.
 */
import { MqError, errorNumber, type ErrorCode } from '@mq/protocol/errors';
import { Cluster, type Target } from '../cluster.js';
import type { Connection } from '../connection.js';
import { parseClientOptions } from '../options.js';
import { CoordinatorClient } from './coordinator-client.js';

type Script = (body: string, payload: Record<string, unknown>) => unknown;

/** A Cluster whose connections are scripted per broker (`any` = the broker FindCoordinator goes to). */
function scriptedCluster(brokers: Record<string, Script>) {
  const cluster = new Cluster(parseClientOptions({ bootstrap: 'localhost:1', retry: { initialDelayMs: 1, maxDelayMs: 5, retries: 5 } }));
  const sent: Array<{ to: string; body: string }> = [];
  cluster.connectionFor = async (t: Target) => {
    const to = t.kind === 'broker' ? String(t.id) : 'any';
    return {
      request: async (body: string, payload: Record<string, unknown>) => {
        sent.push({ to, body });
        const script = brokers[to];
        if (!script) throw new MqError('CONNECTION_ERROR', `broker ${to} is down`);
        return script(body, payload);
      },
    } as unknown as Connection;
  };
  cluster.refreshMetadata = async () => undefined;
  return { cluster, sent };
}

const err = (code: ErrorCode) => ({ errorCode: errorNumber(code), errorMessage: code });

describe('CoordinatorClient when the coordinator moves', () => {
  it('asks FindCoordinator again when the connection to the coordinator is lost, and sends the request to the new one', async () => {
    let coordinator = 1;
    const { cluster, sent } = scriptedCluster({
      any: () => ({ errorCode: 0, nodeId: coordinator, host: 'h', port: 1 }),
      // broker 1 was SIGKILLed: no script, every request fails with CONNECTION_ERROR
      2: (body) => (body === 'heartbeat' ? { errorCode: 0 } : undefined),
    });
    const c = new CoordinatorClient(cluster, 'g');
    expect(await c.coordinator()).toBe(1);
    coordinator = 2; // the controller elected a new leader of the group's offsets partition
    const r = await c.heartbeat({ groupId: 'g', generationId: 3, memberId: 'm' });
    expect(r.errorCode).toBe(0);
    expect(sent.map((s) => `${s.to}:${s.body}`)).toEqual(['any:findCoordinator', '1:heartbeat', 'any:findCoordinator', '2:heartbeat']);
    cluster.close();
  });

  it('retries a commit that failed retriably: re-finds after NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE, waits out COORDINATOR_LOAD_IN_PROGRESS', async () => {
    let coordinator = 1;
    const answers: ErrorCode[] = ['COORDINATOR_LOAD_IN_PROGRESS', 'NONE'];
    const commit = (code: ErrorCode) => (_b: string, payload: Record<string, unknown>) => ({
      topics: (payload.topics as Array<{ name: string; partitions: Array<{ partition: number }> }>).map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partition: p.partition, ...err(code) })),
      })),
    });
    const { cluster, sent } = scriptedCluster({
      any: () => ({ errorCode: 0, nodeId: coordinator, host: 'h', port: 1 }),
      1: (body, payload) => {
        coordinator = 3; // it lost the partition's leadership
        return commit('NOT_COORDINATOR')(body, payload);
      },
      3: (body, payload) => commit(answers.shift() ?? 'NONE')(body, payload),
    });
    const c = new CoordinatorClient(cluster, 'g');
    await c.commit([{ topic: 't', partition: 0, offset: 42 }], { generationId: 5, memberId: 'm', groupInstanceId: null, protocolName: 'range' });
    expect(sent.map((s) => `${s.to}:${s.body}`)).toEqual([
      'any:findCoordinator',
      '1:offsetCommit',
      'any:findCoordinator',
      '3:offsetCommit', // loading: retried on the same coordinator
      '3:offsetCommit',
    ]);
    cluster.close();
  });

  it('describe follows the coordinator too (NOT_COORDINATOR in the group result)', async () => {
    let coordinator = 1;
    const { cluster, sent } = scriptedCluster({
      any: () => ({ errorCode: 0, nodeId: coordinator, host: 'h', port: 1 }),
      1: () => {
        coordinator = 2;
        return { groups: [{ groupId: 'g', state: 'Dead', ...err('NOT_COORDINATOR') }] };
      },
      2: () => ({ groups: [{ groupId: 'g', state: 'Stable', errorCode: 0 }] }),
    });
    const c = new CoordinatorClient(cluster, 'g');
    const r = await c.request('describeGroups', { groupIds: ['g'] }, (x) => (x.groups?.[0]?.errorCode ? 'NOT_COORDINATOR' : 'NONE'));
    expect(r.groups![0]!.state).toBe('Stable');
    expect(sent.map((s) => s.to)).toEqual(['any', '1', 'any', '2']);
    cluster.close();
  });

  it('asks FindCoordinator of the other brokers in turn when one keeps answering COORDINATOR_NOT_AVAILABLE (cut off from the cluster)', async () => {
    const { cluster, sent } = scriptedCluster({
      any: () => err('COORDINATOR_NOT_AVAILABLE'), // the broker the client happens to be connected to
      1: () => err('COORDINATOR_NOT_AVAILABLE'),
      3: () => ({ errorCode: 0, nodeId: 2, host: 'h', port: 1 }),
    });
    for (const id of [1, 2, 3]) cluster.brokers.set(id, { id, host: 'h', port: id, httpPort: 0, rack: '', fenced: false });
    const c = new CoordinatorClient(cluster, 'g');
    expect(await c.coordinator()).toBe(2);
    // any, then 1, then 2 (down: its connection fails, the cluster's retry moves on to 3).
    expect(sent.map((s) => s.to)).toEqual(['any', '1', '2', '3']);
    cluster.close();
  });

  it('learns the brokers from the metadata first when it knows none, to go round them', async () => {
    const { cluster, sent } = scriptedCluster({
      any: () => err('COORDINATOR_NOT_AVAILABLE'),
      3: () => ({ errorCode: 0, nodeId: 3, host: 'h', port: 1 }),
    });
    let refreshed = 0;
    cluster.refreshMetadata = async () => {
      refreshed++;
      cluster.brokers.set(3, { id: 3, host: 'h', port: 3, httpPort: 0, rack: '', fenced: false });
    };
    expect(await new CoordinatorClient(cluster, 'g').coordinator()).toBe(3);
    expect(refreshed).toBe(1);
    expect(sent.map((s) => s.to)).toEqual(['any', '3']);
    cluster.close();
  });

  it('gives up with the error when the group is refused for good (not retried)', async () => {
    const { cluster, sent } = scriptedCluster({
      any: () => ({ errorCode: 0, nodeId: 1, host: 'h', port: 1 }),
      1: (_b, payload) => ({
        topics: (payload.topics as Array<{ name: string; partitions: Array<{ partition: number }> }>).map((t) => ({
          name: t.name,
          partitions: t.partitions.map((p) => ({ partition: p.partition, ...err('ILLEGAL_GENERATION') })),
        })),
      }),
    });
    const c = new CoordinatorClient(cluster, 'g');
    await expect(c.commit([{ topic: 't', partition: 0, offset: 1 }], { generationId: 1, memberId: 'm', groupInstanceId: null, protocolName: 'range' })).rejects.toMatchObject({
      code: 'ILLEGAL_GENERATION',
    });
    expect(sent.filter((s) => s.body === 'offsetCommit')).toHaveLength(1);
    cluster.close();
  });
});
