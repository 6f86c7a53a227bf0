/**
 * A user's mistake gets one clear line on stderr and a non-zero exit code,
 * never a stack trace: unknown topic, broker not running, bad flag, invalid
 * value, existing topic.
 */
import { freePort } from '../tools/free-port.mjs';
import { cleanup, runCli, startBroker, uniqueName, type BrokerProcess } from './src/harness.js';

let broker: BrokerProcess;
let deadPort: number;

beforeAll(async () => {
  broker = await startBroker();
  deadPort = await freePort();
});
afterAll(async () => {
  await cleanup();
});

function expectOneLine(r: { code: number | null; stdout: string; stderr: string }, code: number, line: string | RegExp): void {
  expect(r.code).toBe(code);
  expect(r.stderr.endsWith('\n')).toBe(true);
  expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  if (typeof line === 'string') expect(r.stderr.trimEnd()).toBe(line);
  else expect(r.stderr.trimEnd()).toMatch(line);
}

describe('mq CLI errors', () => {
  const b = () => ['--bootstrap', broker.bootstrap];

  it.each([
    ['consume', (t: string) => ['consume', t]],
    ['produce', (t: string) => ['produce', t]],
    ['describe', (t: string) => ['topic', 'describe', t]],
    ['delete', (t: string) => ['topic', 'delete', t]],
  ])('unknown topic (%s)', async (_name, args) => {
    const topic = uniqueName('missing');
    const r = await runCli([...args(topic), ...b()], { input: 'x\n' });
    expectOneLine(r, 1, `mq: topic "${topic}" does not exist (create it with: mq topic create ${topic})`);
  });

  it('broker not running', async () => {
    const r = await runCli(['topic', 'list', '--bootstrap', `127.0.0.1:${deadPort}`]);
    expectOneLine(r, 1, `mq: cannot connect to broker at 127.0.0.1:${deadPort}: ECONNREFUSED (is the broker running? start one with: mq broker start)`);
  });

  it('unknown flag and unknown command', async () => {
    expectOneLine(await runCli(['topic', 'list', '--colour', 'red', ...b()]), 2, /^mq: Unknown arguments?: colour/);
    expectOneLine(await runCli(['frobnicate']), 2, /^mq: Unknown argument: frobnicate/);
    expectOneLine(await runCli([]), 2, 'mq: name a command (see: mq --help)');
  });

  it('invalid values', async () => {
    const topic = uniqueName('vals');
    await runCli(['topic', 'create', topic, ...b()]);
    expectOneLine(await runCli(['produce', topic, '--acks', '2', ...b()]), 2, /^mq: Invalid values:.*acks.*"2"/);
    expectOneLine(await runCli(['topic', 'create', uniqueName('p'), '--partitions', '0', ...b()]), 2, 'mq: --partitions must be an integer >= 1, got "0"');
    expectOneLine(await runCli(['consume', topic, '--max-messages', 'lots', ...b()]), 2, 'mq: --max-messages must be an integer >= 1, got "lots"');
    expectOneLine(await runCli(['consume', topic, '--offset', '5', ...b()]), 2, 'mq: --offset with a number needs --partition');
    expectOneLine(await runCli(['consume', topic, '--partition', '9', ...b()]), 2, `mq: partition 9 of topic "${topic}" does not exist (it has 1)`);
    expectOneLine(await runCli(['produce', topic, '--headers', 'novalue', ...b()], { input: 'x\n' }), 2, 'mq: --headers "novalue" is not key=value (use --headers k1=v1,k2=v2)');
    expectOneLine(await runCli(['produce', topic, '--key-separator', ':', ...b()], { input: 'nokey\n' }), 2, 'mq: line 1: no key separator ":" (nothing was produced)');
    expectOneLine(await runCli(['topic', 'create', 'bad/name', ...b()]), 1, /^mq: cannot create topic "bad\/name": .*/);
  });

  it('topic that already exists', async () => {
    const topic = uniqueName('dup');
    expect((await runCli(['topic', 'create', topic, ...b()])).code).toBe(0);
    expectOneLine(await runCli(['topic', 'create', topic, ...b()]), 1, `mq: topic "${topic}" already exists`);
  });

  it('a broker that cannot start (port in use) says so in one line', async () => {
    const r = await runCli(['broker', 'start', '--port', String(broker.port), '--http-port', '0', '--data-dir', `${broker.dataDir}-other`]);
    expect(r.code).toBe(1);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^mq: .*(in use|EADDRINUSE)/);
  });
});
