import { ManualTime } from '@mq/protocol/components';
import { MqError } from '@mq/protocol/errors';
import { BrokerConfig } from '../../config/broker-config.js';
import type { RegisterBrokerCommand } from '../../controller/commands.js';
import { BrokerRegistration, registerBrokerCommand } from './broker-registration.js';

const flush = () => new Promise<void>((r) => setImmediate(r));

function setup(answers: Array<() => unknown>) {
  const time = new ManualTime();
  const submitted: unknown[] = [];
  const lines: string[] = [];
  let registered = 0;
  const closing = new AbortController();
  const controller = {
    submit: async (cmd: unknown) => {
      submitted.push(cmd);
      const next = answers.length > 1 ? answers.shift()! : answers[0]!;
      return next();
    },
  };
  const logger = { info: (_o: object, msg: string) => void lines.push(`info ${msg}`), warn: (_o: object, msg: string) => void lines.push(`warn ${msg}`) };
  const reg = new BrokerRegistration(7, { controller, logger: logger as never, clock: time.clock, timers: time, closing: closing.signal, onRegistered: () => void registered++ });
  return { time, submitted, lines, reg, closing, registered: () => registered };
}

const command = registerBrokerCommand({ brokerId: 7, config: new BrokerConfig({ 'broker.rack': 'r1' }), incarnation: 'run-a', cleanShutdown: true }, { host: 'h', port: 1, httpPort: 2, interBrokerPort: 3 });
const duplicate = () => {
  throw new MqError('DUPLICATE_BROKER_REGISTRATION', 'held by run-z');
};

/** Lets the loop run one attempt per 500 ms sleep. */
async function advance(time: ManualTime, ms: number) {
  for (let t = 0; t < ms; t += 500) {
    await flush();
    time.advance(500);
  }
  await flush();
}

describe('broker registration', () => {
  it('registers what the broker is: endpoints, rack, incarnation, clean shutdown and flush policy', () => {
    const c: RegisterBrokerCommand = command;
    expect(c).toEqual({ type: 'registerBroker', id: 7, host: 'h', port: 1, httpPort: 2, interBrokerPort: 3, rack: 'r1', incarnation: 'run-a', cleanShutdown: true, flushAlways: false });
    const noKafkaHost = registerBrokerCommand({ brokerId: 7, config: new BrokerConfig({}), incarnation: 'x', cleanShutdown: false }, { host: 'h', port: 1, httpPort: 2, kafkaPort: 9 });
    expect(noKafkaHost).not.toHaveProperty('kafkaPort');
    expect(noKafkaHost).not.toHaveProperty('interBrokerPort');
  });

  it('keeps the broker epoch of the answer and submits once however often register is called', async () => {
    const s = setup([() => ({ brokerEpoch: 42 })]);
    expect(s.reg.brokerEpoch).toBe(-1);
    const a = s.reg.register(command, 1500);
    const b = s.reg.register(command, 1500);
    expect(b).toBe(a);
    await a;
    expect(s.reg.brokerEpoch).toBe(42);
    expect(s.submitted).toHaveLength(1);
    expect(s.registered()).toBe(1);
    expect(s.lines).toEqual(['info registered with the controller']);
  });

  it('retries DUPLICATE_BROKER_REGISTRATION for the session grace (a crashed run of its own), then fails for good', async () => {
    const s = setup([duplicate]);
    let outcome: unknown;
    s.reg.register(command, 1500).then(
      () => (outcome = 'registered'),
      (e: unknown) => (outcome = e),
    );
    // Grace plus 2 s: 3500 ms after the first refusal the id is still retried.
    await advance(s.time, 3500);
    expect(outcome).toBeUndefined();
    expect(s.lines.filter((l) => l.startsWith('warn'))).toHaveLength(1);
    await advance(s.time, 500);
    expect(outcome).toBeInstanceOf(MqError);
    expect((outcome as MqError).code).toBe('DUPLICATE_BROKER_REGISTRATION');
    expect((outcome as MqError).retriable).toBe(false);
    expect((outcome as MqError).message).toMatch(/broker id 7 is already registered by another running process .*broker.session.timeout.ms=1500/);
    expect(s.reg.brokerEpoch).toBe(-1);
  });

  it('registers once the previous run is fenced within the grace', async () => {
    const s = setup([duplicate, duplicate, () => ({ brokerEpoch: 9 })]);
    const p = s.reg.register(command, 1500);
    await advance(s.time, 1000);
    await p;
    expect(s.reg.brokerEpoch).toBe(9);
    expect(s.submitted).toHaveLength(3);
  });

  it('a voter (no grace) retries every refusal, until the node closes', async () => {
    const s = setup([duplicate]);
    let done = false;
    void s.reg.register(command, 0).then(() => (done = true));
    await advance(s.time, 20_000);
    expect(done).toBe(false);
    expect(s.lines.every((l) => l === 'warn registration with the controller failed; retrying')).toBe(true);
    s.closing.abort();
    await advance(s.time, 500);
    await s.reg.settled();
    expect(done).toBe(true);
    const attempts = s.submitted.length;
    await advance(s.time, 5000);
    expect(s.submitted.length).toBe(attempts);
  });
});
