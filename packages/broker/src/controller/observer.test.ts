/**
 * A broker-only process (ObserverController) against a real one-voter
 * RaftController, connected in process (the channel's connect is injected;
 * fetches go through the same answer function as the WebSocket handler):
 * it follows the metadata log, its fetches keep its registration alive
 * (unfenced once caught up, fenced when they stop), and a second run with
 * the same broker id is refused while the first one is alive.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { freePort, waitFor } from '../test-support/net.js';
import { errorNumber } from '@mq/protocol/errors';
import { metadataFetchAnswer } from '../handlers/controller-forward.js';
import { decodeCommand } from './commands.js';
import { ControllerChannel, type ConnectFn } from './controller-channel.js';
import { RaftController } from './controller.js';
import { ObserverController } from './observer.js';

const logger = pino({ level: 'silent' });



/** An in-process connection to `ctrl` that answers like the broker's controllerForward handler. */
function inProcess(ctrl: RaftController): ConnectFn {
  return async () => ({
    brokerId: ctrl.options.brokerId,
    closed: false,
    close() {},
    async request(payload, timeoutMs, signal) {
      if (payload.metadataFetch) return metadataFetchAnswer(ctrl, payload.metadataFetch, signal);
      const r = await ctrl.handleForward(decodeCommand(payload.command!), Math.min(timeoutMs, payload.timeoutMs ?? timeoutMs));
      return r.ok
        ? { errorCode: 0, result: Buffer.from(JSON.stringify(r.value ?? null)), controllerId: ctrl.controllerId }
        : { errorCode: errorNumber(r.code as never), errorMessage: r.message, controllerId: ctrl.controllerId };
    },
  });
}

describe('ObserverController following a RaftController', () => {
  let dir = '';
  let ctrl: RaftController | undefined;
  const observers: ObserverController[] = [];
  const SESSION = 600;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'mq-observer-'));
    ctrl = new RaftController(
      { brokerId: 1, voters: `1@127.0.0.1:${await freePort()}`, tickMs: 20, sessionTimeoutMs: SESSION, livenessCheckMs: 50, fsync: false },
      { logger, forward: async () => ({ ok: false, code: 'NOT_CONTROLLER', message: 'single voter' }) },
    );
    await ctrl.start(dir);
    await waitFor(() => ctrl!.isActive);
  });

  afterEach(async () => {
    for (const o of observers.splice(0)) await o.close();
    await ctrl?.close();
    await rm(dir, { recursive: true, force: true });
  });

  function observer(brokerId: number, incarnation: string): ObserverController {
    const channel = new ControllerChannel({ brokerId, servers: ['controller-1:1'], connectTimeoutMs: 1000, maxResponseBytes: 1 << 20 }, inProcess(ctrl!));
    const o = new ObserverController({ brokerId, incarnation, sessionTimeoutMs: SESSION, fetchMaxWaitMs: 100 }, { logger, channel });
    observers.push(o);
    o.start();
    return o;
  }

  const register = (id: number, incarnation: string) => ({ type: 'registerBroker' as const, id, host: '127.0.0.1', port: 9000 + id, httpPort: 8000 + id, rack: '', incarnation });

  it('follows the log, is unfenced once caught up and fenced when its fetches stop', async () => {
    const a = observer(7, 'run-a');
    await a.catchUp(3000);
    expect(a.controllerId).toBe(1);
    const { brokerEpoch } = (await a.submit(register(7, 'run-a'), 3000)) as { brokerEpoch: number };
    // Its fetches are its heartbeats: the controller unfences it once it has fetched past its registration.
    await waitFor(() => ctrl!.metadata.broker(7)?.fenced === false);
    await waitFor(() => a.metadata.broker(7)?.fenced === false);
    expect(a.metadata.broker(7)!.brokerEpoch).toBe(brokerEpoch);

    await ctrl!.submit({ type: 'createTopic', name: 'orders', topicId: 'id-1', numPartitions: 2, replicationFactor: 1, configs: {} }, 3000);
    await a.catchUp(3000);
    expect(a.metadata.topic('orders')?.partitions.map((p) => p.replicas)).toEqual([[7], [7]]);
    expect(a.status()).toMatchObject({ controllerId: 1, active: false, applied: ctrl!.metadata.lastApplied });

    await a.close();
    const stoppedAt = Date.now();
    await waitFor(() => ctrl!.metadata.broker(7)?.fenced === true, SESSION * 4);
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(SESSION - 100);
    // Fenced: no leader for its partitions (it was the only replica and stays in the ISR).
    expect(ctrl!.metadata.topic('orders')!.partitions.every((p) => p.leader === -1)).toBe(true);
  });

  it('fences a silent broker one session after it was last heard from, not at the next liveness round (livenessCheckMs far beyond the test)', async () => {
    const a = observer(10, 'run-a');
    await a.submit(register(10, 'run-a'), 3000);
    await waitFor(() => ctrl!.metadata.broker(10)?.fenced === false);
    // The broker goes silent and the controller restarts on its log with rounds 10 minutes apart: its first
    // round (on becoming active) gives broker 10 a full session from then; only a round at that session's end
    // can fence it within the test.
    await a.close();
    await ctrl!.close();
    ctrl = new RaftController(
      { brokerId: 1, voters: ctrl!.options.voters.map((v) => `${v.id}@${v.host}:${v.port}`).join(','), tickMs: 20, sessionTimeoutMs: SESSION, livenessCheckMs: 600_000, fsync: false },
      { logger, forward: async () => ({ ok: false, code: 'NOT_CONTROLLER', message: 'single voter' }) },
    );
    await ctrl.start(dir);
    await waitFor(() => ctrl!.isActive);
    expect(ctrl.metadata.broker(10)?.fenced).toBe(false);
    await waitFor(() => ctrl!.metadata.broker(10)?.fenced === true, 10_000);
  });

  it('refuses a second live run of a broker id, and lets a restart in once the old session expired', async () => {
    const a = observer(8, 'run-a');
    await a.submit(register(8, 'run-a'), 3000);
    await waitFor(() => ctrl!.metadata.broker(8)?.fenced === false);

    const b = observer(8, 'run-b');
    await expect(b.submit(register(8, 'run-b'), 3000)).rejects.toMatchObject({
      code: 'DUPLICATE_BROKER_REGISTRATION',
      message: expect.stringMatching(/broker id 8 is registered by another live process .*run run-a.*until that session expires/),
    });
    // run-b's fetches do not keep run-a's session alive; run-a's do.
    await new Promise((r) => setTimeout(r, SESSION + 200));
    await expect(b.submit(register(8, 'run-b'), 3000)).rejects.toMatchObject({ code: 'DUPLICATE_BROKER_REGISTRATION' });
    expect(ctrl!.metadata.broker(8)).toMatchObject({ incarnation: 'run-a', fenced: false });

    // run-a dies (no controlled shutdown): after its session, run-b registers and is unfenced.
    await a.close();
    await waitFor(() => ctrl!.metadata.broker(8)?.fenced === true, SESSION * 4);
    await b.submit(register(8, 'run-b'), 3000);
    await waitFor(() => ctrl!.metadata.broker(8)?.incarnation === 'run-b' && ctrl!.metadata.broker(8)?.fenced === false);
  });

  it('an observer of a non-active controller is told NOT_CONTROLLER', async () => {
    const a = observer(9, 'run-a');
    await a.catchUp(3000);
    await expect(a.handleMetadataFetch({ brokerId: 1, incarnation: 'x', fetchIndex: 0, maxWaitMs: 0, maxEntries: 1 })).rejects.toMatchObject({ code: 'NOT_CONTROLLER' });
    await expect(a.handleForward()).resolves.toMatchObject({ ok: false, code: 'NOT_CONTROLLER' });
  });
});

describe('the connection-loss hint of a broker-only process', () => {
  let dir = '';
  let ctrl: RaftController | undefined;
  /** The answers of the controller's dials of the lost broker, in order (then the last one again). */
  let probeAnswers: boolean[] = [];
  let probes = 0;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'mq-observer-hint-'));
    probes = 0;
    ctrl = new RaftController(
      // A session far beyond the test's waits: only the hint can fence.
      { brokerId: 1, voters: `1@127.0.0.1:${await freePort()}`, tickMs: 20, sessionTimeoutMs: 60_000, livenessCheckMs: 50, fsync: false },
      {
        logger,
        forward: async () => ({ ok: false, code: 'NOT_CONTROLLER', message: 'single voter' }),
        probeRefused: async () => probeAnswers[Math.min(probes++, probeAnswers.length - 1)]!,
      },
    );
    await ctrl.start(dir);
    await waitFor(() => ctrl!.isActive);
  });

  afterEach(async () => {
    await ctrl?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Registers broker 7 and fetches on `conn` (each fetch answered at once) until it is unfenced. */
  async function liveObserver(conn: AbortController): Promise<void> {
    await ctrl!.submit({ type: 'registerBroker', id: 7, host: '127.0.0.1', port: 9007, httpPort: 8007, rack: '', incarnation: 'run-a' }, 3000);
    await waitFor(async () => {
      await ctrl!.handleMetadataFetch({ brokerId: 7, incarnation: 'run-a', fetchIndex: ctrl!.metadata.lastApplied, maxWaitMs: 0, maxEntries: 1000 }, conn.signal);
      return ctrl!.metadata.broker(7)?.fenced === false;
    });
  }

  it('is fenced when its fetch connection closes between two fetches and its listener refuses once its sockets are all closed', async () => {
    // The first dial is accepted (a killed process's listener can outlive its connection by a moment), the next refused.
    probeAnswers = [false, true];
    const conn = new AbortController();
    await liveObserver(conn);
    conn.abort(); // no fetch in flight
    await waitFor(() => ctrl!.metadata.broker(7)?.fenced === true, 5000);
    expect(probes).toBe(2);
  });

  it('is not fenced when it fetches again on a new connection (its listener accepts)', async () => {
    probeAnswers = [false];
    const first = new AbortController();
    await liveObserver(first);
    first.abort();
    const second = new AbortController();
    for (let i = 0; i < 20; i++) {
      await ctrl!.handleMetadataFetch({ brokerId: 7, incarnation: 'run-a', fetchIndex: ctrl!.metadata.lastApplied, maxWaitMs: 0, maxEntries: 1000 }, second.signal);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(ctrl!.metadata.broker(7)?.fenced).toBe(false);
    expect(probes).toBeGreaterThanOrEqual(1);
  });
});
