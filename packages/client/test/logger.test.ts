/**
 * ClientOptions.logger: the client logs through it (pino's shape), and a
 * logger without pino's methods is refused up front.
 */
import { MqClient } from '../src/index.js';
import { startFakeBroker, type FakeBroker } from './fake-broker.js';
import { RecordingLogger } from './recording-logger.js';

let broker: FakeBroker;
beforeEach(async () => {
  broker = await startFakeBroker({ topics: { one: 1 } });
});
afterEach(async () => {
  await broker.close();
});

describe('ClientOptions.logger', () => {
  it('gets a line when a connection to a broker is lost, and for the retry of a failed produce', async () => {
    const logger = new RecordingLogger();
    const client = new MqClient({ bootstrap: broker.address, logger, retry: { initialDelayMs: 5, maxDelayMs: 20 } });
    const producer = client.producer({ lingerMs: 0 });
    await producer.send('one', { value: 'a' });
    broker.dropConnections();
    broker.failNext('produce', 'NOT_LEADER', 1);
    await producer.send('one', { value: 'b' });
    expect(logger.find('info', /^connection to broker closed/)?.obj).toMatchObject({ broker: broker.address, brokerId: 1 });
    const retries = logger.lines.filter((l) => l.level === 'debug' && /^produce failed; retrying/.test(l.msg ?? ''));
    expect(retries.map((l) => l.obj)).toContainEqual(
      expect.objectContaining({ topic: 'one', partition: 0, err: expect.objectContaining({ code: 'NOT_LEADER' }) }),
    );
    const before = logger.lines.length;
    await client.close();
    // closing the client is not news
    expect(logger.lines.slice(before).filter((l) => /connection to broker closed/.test(l.msg ?? ''))).toEqual([]);
  });

  it('logs nothing anywhere by default (no console output)', async () => {
    const methods = ['log', 'info', 'warn', 'error', 'debug'] as const;
    const saved = methods.map((m) => console[m]);
    const printed: unknown[][] = [];
    for (const m of methods) console[m] = (...args: unknown[]) => void printed.push(args);
    try {
      const client = new MqClient({ bootstrap: broker.address, retry: { initialDelayMs: 5, maxDelayMs: 20 } });
      const producer = client.producer({ lingerMs: 0 });
      await producer.send('one', { value: 'a' });
      broker.dropConnections();
      await producer.send('one', { value: 'b' });
      await client.close();
      expect(printed).toEqual([]);
    } finally {
      methods.forEach((m, i) => (console[m] = saved[i]!));
    }
  });

  it('refuses a logger without pino methods with INVALID_ARGUMENT', () => {
    expect(() => new MqClient({ logger: { info() {} } as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('it lacks debug, warn, error') }),
    );
  });
});
