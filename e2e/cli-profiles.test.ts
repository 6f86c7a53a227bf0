/**
 * Issue 19, habits: `mq profile create|use|list|delete` saves a bootstrap address (and timeouts) under a
 * name in $XDG_CONFIG_HOME/mq/profiles.json; a client command without --bootstrap uses --profile, then
 * MQ_PROFILE, then the profile in use. --bootstrap and MQ_BOOTSTRAP still win.
 */
import { statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import path from 'node:path';
import { freePort } from '../tools/free-port.mjs';
import { cleanup, makeTempDir, runCli, startBroker, uniqueName, type BrokerProcess, type CliResult } from './src/harness.js';

let broker: BrokerProcess;
let env: NodeJS.ProcessEnv;
let config: string;
const mq = (args: string[], extra: NodeJS.ProcessEnv = {}): Promise<CliResult> => runCli(args, { env: { ...env, ...extra } });

beforeAll(async () => {
  broker = await startBroker();
  config = await makeTempDir('mq-profiles-');
  env = { XDG_CONFIG_HOME: config, HOME: config, MQ_BOOTSTRAP: '', MQ_PROFILE: '' };
});
afterAll(async () => {
  await cleanup();
});

function expectOneLine(r: CliResult, code: number, line: RegExp): void {
  expect({ code: r.code, stderr: r.stderr }).toMatchObject({ code, stderr: expect.stringMatching(line) });
  expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
}

it('create, use, list and delete profiles; client commands without --bootstrap follow the profile in use', async () => {
  expect((await mq(['profile', 'list'])).stdout).toMatch(/^no profiles/);
  const dead = `127.0.0.1:${await freePort()}`;

  const created = await mq(['profile', 'create', 'local', '--bootstrap', broker.bootstrap]);
  expect(created.code).toBe(0);
  const file = path.join(config, 'mq', 'profiles.json');
  expect(created.stdout).toContain(file);
  expect(statSync(file).mode & 0o777).toBe(0o600);

  const topic = uniqueName('prof');
  expect((await mq(['topic', 'create', topic])).code).toBe(0);
  expect((await mq(['topic', 'list'])).stdout).toContain(topic);

  // A second profile, saved but not used.
  expect((await mq(['profile', 'create', 'dead', '--bootstrap', dead, '--no-use'])).code).toBe(0);
  const list = JSON.parse((await mq(['profile', 'list', '--format', 'json'])).stdout);
  expect(list).toMatchObject({ current: 'local', profiles: { local: { bootstrap: broker.bootstrap }, dead: { bootstrap: dead } } });
  expect((await mq(['profile', 'list'])).stdout).toMatch(/^\*\s+local\s/m);

  // --profile and MQ_PROFILE pick another; --bootstrap and MQ_BOOTSTRAP win over any profile.
  expectOneLine(await mq(['topic', 'list', '--profile', 'dead']), 1, new RegExp(`cannot connect to broker at ${dead}`));
  expectOneLine(await mq(['topic', 'list'], { MQ_PROFILE: 'dead' }), 1, new RegExp(`cannot connect to broker at ${dead}`));
  expect((await mq(['topic', 'list', '--profile', 'dead', '--bootstrap', broker.bootstrap])).stdout).toContain(topic);
  expect((await mq(['topic', 'list'], { MQ_BOOTSTRAP: broker.bootstrap, MQ_PROFILE: 'dead' })).stdout).toContain(topic);

  // use switches; delete of the one in use leaves none in use.
  expect((await mq(['profile', 'use', 'dead'])).code).toBe(0);
  expectOneLine(await mq(['topic', 'list']), 1, new RegExp(`cannot connect to broker at ${dead}`));
  expect((await mq(['profile', 'use', 'local'])).code).toBe(0);
  expect((await mq(['topic', 'list'])).stdout).toContain(topic);
  expect((await mq(['profile', 'delete', 'local'])).stdout).toMatch(/no profile is in use now/);
  expect(JSON.parse((await mq(['profile', 'list', '--format', 'json'])).stdout)).toMatchObject({ current: null, profiles: { dead: { bootstrap: dead } } });

  // Mistakes: one line each, exit 2.
  expectOneLine(await mq(['topic', 'list', '--profile', 'nope']), 2, /^mq: --profile names "nope", which does not exist/);
  expectOneLine(await mq(['profile', 'create', 'dead', '--bootstrap', dead]), 2, /^mq: profile "dead" exists \(replace it with --force/);
  expectOneLine(await mq(['profile', 'create', '../x', '--bootstrap', dead]), 2, /^mq: profile name "\.\.\/x" must be/);
  expectOneLine(await mq(['profile', 'create', 'x', '--bootstrap', 'no-port']), 2, /^mq: --bootstrap must be host:port/);
  expectOneLine(await mq(['profile', 'use', 'nope']), 2, /^mq: no profile "nope"/);
});

describe('timeouts from a profile', () => {
  let silent: Server;
  let port = 0;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    port = await freePort();
    silent = createServer((s) => void sockets.push(s));
    await new Promise<void>((r) => silent.listen(port, '127.0.0.1', () => r()));
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => silent.close(() => r()));
  });

  it('--connect-timeout-ms saved in a profile bounds the wait on a host that never answers', async () => {
    expect((await mq(['profile', 'create', 'slow', '--bootstrap', `127.0.0.1:${port}`, '--connect-timeout-ms', '700', '--force'])).code).toBe(0);
    const started = Date.now();
    const r = await mq(['topic', 'list']);
    expectOneLine(r, 1, /within 700 ms/);
    expect(Date.now() - started).toBeLessThan(8000);
  });
});

it('a damaged profiles file is one line naming the file, exit 1', async () => {
  const dir = await makeTempDir('mq-profiles-bad-');
  const bad = { XDG_CONFIG_HOME: dir, HOME: dir, MQ_BOOTSTRAP: '', MQ_PROFILE: '' };
  await runCli(['profile', 'create', 'a', '--bootstrap', broker.bootstrap], { env: bad });
  await writeFile(path.join(dir, 'mq', 'profiles.json'), '{ not json');
  const r = await runCli(['topic', 'list'], { env: bad });
  expectOneLine(r, 1, /profiles\.json is damaged/);
});
