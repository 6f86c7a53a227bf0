/**
 * Issue 22: one socket read carrying many frames is served in slices. ws emits
 * every frame of a read in one step, and the Kafka door splits them all at
 * once; each connection starts requests for at most SLICE_MS before it yields
 * to the event loop (server/connection.ts, kafka/kafka-connection.ts). The
 * Metadata handler here spends 3 ms per request, so a slice holds at most 4
 * requests: the test counts requests started per turn of the event loop.
 */
import { MetadataApi, encodeRequest } from '@mq/kafka-protocol';
import { startTestBroker, TestClient, type TestBroker } from '../../test/helpers.js';
import { KafkaWire } from '../../test/kafka-wire.js';
import { SLICE_MS } from '../slicer.js';

const WORK_MS = 3;
const FRAMES = 40;
/** The most requests of WORK_MS each one slice can start. */
const PER_SLICE = Math.ceil(SLICE_MS / WORK_MS);

function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // The handler's synchronous work.
  }
}

describe.each([
  ['any number in flight', '64'],
  ['one in flight (the rest queued)', '1'],
])('frames of one socket read, %s', (_name, inFlight) => {
  let t: TestBroker;
  let turn = 0;
  let ticking = false;
  const startedIn: number[] = [];
  const tick = () => {
    if (!ticking) return;
    turn++;
    setImmediate(tick);
  };

  beforeAll(async () => {
    t = await startTestBroker(
      { 'kafka.listener.port': '0', 'max.in.flight.requests.per.connection': inFlight },
      {
        handlers: {
          metadata: async () => {
            startedIn.push(turn);
            busy(WORK_MS);
            return { brokers: [], topics: [] };
          },
        },
      },
    );
  });

  afterAll(async () => {
    await t.cleanup();
  });

  /** The most requests started in one turn of the event loop while `send` is answered. */
  async function mostPerTurn(send: () => Promise<unknown>): Promise<number> {
    startedIn.length = 0;
    ticking = true;
    setImmediate(tick);
    try {
      await send();
    } finally {
      ticking = false;
    }
    expect(startedIn).toHaveLength(FRAMES);
    const perTurn = new Map<number, number>();
    for (const n of startedIn) perTurn.set(n, (perTurn.get(n) ?? 0) + 1);
    return Math.max(...perTurn.values());
  }

  it('the WebSocket door starts them in slices, and answers every one', async () => {
    const c = await TestClient.connect(t.url);
    try {
      const socket = (c.ws as unknown as { _socket: import('node:net').Socket })._socket;
      const most = await mostPerTurn(async () => {
        // One write: the broker reads every frame at once.
        socket.cork();
        const answers = Array.from({ length: FRAMES }, () => c.request({ metadata: { topics: [] } }, 30_000));
        socket.uncork();
        const r = await Promise.all(answers);
        expect(r.every((a) => a.metadata !== undefined && a.errorCode === 0)).toBe(true);
      });
      expect(most).toBeLessThanOrEqual(PER_SLICE);
      // The frames sent while its first ones waited are still read: one more request is answered.
      expect((await c.request({ metadata: { topics: [] } })).errorCode).toBe(0);
    } finally {
      await c.close();
    }
  });

  it('the Kafka door starts them in slices, and answers every one in order', async () => {
    const k = await KafkaWire.connect(t.broker.kafkaPort!);
    try {
      const most = await mostPerTurn(async () => {
        k.sendRaw(Buffer.concat(Array.from({ length: FRAMES }, (_, i) => encodeRequest(MetadataApi, 1, i + 1, 'intake-test', { topics: [] }))));
        for (let i = 0; i < FRAMES; i++) expect(await k.nextFrame(30_000)).toBeDefined();
      });
      expect(most).toBeLessThanOrEqual(PER_SLICE);
    } finally {
      k.close();
    }
  });
});
