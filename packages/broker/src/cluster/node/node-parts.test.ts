/** The cluster node's small parts: its roles from the configuration, where peers are dialled, the shutdown order, when replicas start. */
import { MqError } from '@mq/protocol/errors';
import { BrokerConfig } from '../../config/broker-config.js';
import { CONTROLLED_SHUTDOWN } from '../../controller/metadata-state.js';
import { peerAddress } from './links.js';
import { closeNode, controlledShutdown } from './node-shutdown.js';
import { isClusterConfig, nodeRoles } from './node-roles.js';
import { ReplicaStart } from './replica-start.js';

const flush = () => new Promise<void>((r) => setImmediate(r));

describe('cluster node roles', () => {
  it('makes a broker without cluster settings a one-node cluster: broker and only voter', () => {
    const cfg = new BrokerConfig({});
    expect(isClusterConfig(cfg)).toBe(false);
    expect(nodeRoles(3, cfg, true)).toEqual({ roles: { broker: true, controller: true }, voters: '3@localhost:1', voterIds: [3] });
    expect(nodeRoles(3, new BrokerConfig({ 'process.roles': 'controller, broker' }), true).roles).toEqual({ broker: true, controller: true });
  });

  it('refuses any other role without cluster settings, saying what to set', () => {
    const err = (() => {
      try {
        nodeRoles(3, new BrokerConfig({ 'process.roles': 'broker' }), true);
      } catch (e) {
        return e as MqError;
      }
    })();
    expect(err?.code).toBe('INVALID_CONFIG');
    expect(err?.message).toMatch(/^process.roles=broker needs a cluster: set controller.quorum.voters/);
  });

  it('reads the voters of a cluster; a broker-only process knows none', () => {
    const voters = new BrokerConfig({ 'controller.quorum.voters': '1@h:1,2@h:2' });
    expect(isClusterConfig(voters)).toBe(true);
    expect(nodeRoles(2, voters, false)).toMatchObject({ roles: { broker: true, controller: true }, voterIds: [1, 2] });
    const observer = new BrokerConfig({ 'controller.quorum.bootstrap.servers': 'h:9093' });
    expect(nodeRoles(5, observer, false)).toEqual({ roles: { broker: true, controller: false }, voters: '', voterIds: [] });
  });
});

describe('peer addresses', () => {
  const md = {
    broker: (id: number) => (id === 1 ? { host: 'a', port: 9092, interBrokerPort: 9094 } : id === 2 ? { host: 'b', port: 9092 } : undefined),
    controllerEndpoint: (id: number) => (id === 7 ? { id, host: 'c', port: 9095 } : undefined),
  } as never;
  it("dials a broker's inter-broker listener (its client port when it registered none), else a controller's endpoint", () => {
    expect(peerAddress(md, 1)).toBe('a:9094');
    expect(peerAddress(md, 2)).toBe('b:9092');
    expect(peerAddress(md, 7)).toBe('c:9095');
    expect(peerAddress(md, 9)).toBeUndefined();
  });
});

describe('cluster node shutdown', () => {
  it('fences first, then closes replicas, peers, controller, channel, and waits for registrations', async () => {
    const order: string[] = [];
    const step = (name: string) => async () => void order.push(name);
    await closeNode({
      fence: step('fence'),
      replicas: { close: step('replicas') },
      peers: { close: () => void order.push('peers') },
      controller: { close: step('controller') },
      channel: { close: () => void order.push('channel') },
      registrations: [step('broker registration'), step('controller endpoint')],
    });
    expect(order).toEqual(['fence', 'replicas', 'peers', 'controller', 'channel', 'broker registration', 'controller endpoint']);
  });

  it('fences only a registered run while a controller is known, and goes on when it cannot', async () => {
    const submitted: unknown[] = [];
    const lines: string[] = [];
    const log = { info: (m: string) => void lines.push(m), warn: (_o: object, m: string) => void lines.push(m) } as never;
    const controller = (id: number, fail = false) => ({
      controllerId: id,
      submit: async (c: unknown) => {
        submitted.push(c);
        if (fail) throw new MqError('REQUEST_TIMED_OUT', 'no quorum');
      },
    });
    await controlledShutdown(controller(1), 4, -1, log);
    await controlledShutdown(controller(-1), 4, 10, log);
    expect(submitted).toEqual([]);
    await controlledShutdown(controller(1), 4, 10, log);
    await controlledShutdown(controller(1, true), 4, 10, log);
    expect(submitted).toEqual([
      { type: 'fenceBroker', id: 4, brokerEpoch: 10, reason: CONTROLLED_SHUTDOWN },
      { type: 'fenceBroker', id: 4, brokerEpoch: 10, reason: CONTROLLED_SHUTDOWN },
    ]);
    expect(lines).toEqual(['controlled shutdown: fenced, partition leadership moved to other brokers', 'controlled shutdown: could not reach the controller; others take over after the session timeout']);
  });
});

describe('replica start', () => {
  function setup(catchUps: boolean[]) {
    const listeners = new Set<() => void>();
    let fenced = true;
    const events: string[] = [];
    const controller = {
      catchUp: async () => {
        const ok = catchUps.length > 1 ? catchUps.shift()! : catchUps[0]!;
        events.push(`catchUp ${ok}`);
        if (!ok) throw new MqError('REQUEST_TIMED_OUT', 'no controller');
      },
      metadata: {
        broker: () => ({ fenced }),
        onChange(fn: () => void) {
          listeners.add(fn);
          return () => void listeners.delete(fn);
        },
      },
    };
    const replicas = { start: () => void events.push('start'), settled: async () => void events.push('settled') };
    const unfence = () => {
      fenced = false;
      for (const fn of [...listeners]) fn();
    };
    return { controller, replicas, events, unfence, listeners };
  }

  it('starts the replicas once the metadata has caught up, and serves once unfenced', async () => {
    const s = setup([false, false, true]);
    const closing = new AbortController();
    const r = new ReplicaStart(s.controller as never, s.replicas as never, true, closing.signal);
    expect(r.metadataCaughtUp).toBe(false);
    let serving = false;
    void r.untilServing(4).then(() => (serving = true));
    await flush();
    expect(s.events).toEqual(['catchUp false', 'catchUp false', 'catchUp true', 'start']);
    expect(r.metadataCaughtUp).toBe(true);
    expect(serving).toBe(false);
    s.unfence();
    await flush();
    expect(serving).toBe(true);
    expect(s.events.at(-1)).toBe('settled');
    expect(s.listeners.size).toBe(0);
  });

  it('starts nothing without the broker role; closing releases whoever waits', async () => {
    const s = setup([false]);
    const closing = new AbortController();
    const r = new ReplicaStart(s.controller as never, s.replicas as never, false, closing.signal);
    expect(r.metadataCaughtUp).toBe(true);
    let serving = false;
    void r.untilServing(4).then(() => (serving = true));
    await flush();
    expect(serving).toBe(false);
    closing.abort();
    await flush();
    expect(serving).toBe(true);
    expect(s.events).toEqual(['settled']);
  });
});
