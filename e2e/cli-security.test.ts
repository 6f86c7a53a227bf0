/**
 * Issue 17, security through the real CLI against a real broker process with
 * authentication.enabled and authorization.enabled: the first user created
 * from this machine without logging in (MQ_PASSWORD), then nothing without a
 * login; `mq user create|list|delete` (new passwords from stdin), `mq acl
 * add|list|remove`, and a principal's rights following its ACLs. No password
 * is ever on a command line.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { cleanup, makeTempDir, runCli, startBroker, uniqueName, type BrokerProcess, type CliResult } from './src/harness.js';

function ok(r: CliResult): CliResult {
  if (r.code !== 0) throw new Error(`mq exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

afterAll(async () => {
  await cleanup();
});

describe('mq user and mq acl against a secured broker', () => {
  let broker: BrokerProcess;
  const b = () => ['-b', broker.bootstrap];
  const asAdmin = { env: { MQ_USER: 'admin', MQ_PASSWORD: 'admin-pw' } };
  const asAlice = { env: { MQ_USER: 'alice', MQ_PASSWORD: 'alice-pw' } };

  beforeAll(async () => {
    const dir = await makeTempDir('mq-sec-');
    const config = path.join(dir, 'broker.properties');
    await writeFile(config, 'authentication.enabled=true\nauthorization.enabled=true\nsuper.users=User:admin\n');
    broker = await startBroker({ args: ['--config', config] });
  });

  it('bootstraps the first user from loopback, then requires a login', async () => {
    // Before any user exists, this machine sees the cluster without topics, and may create the first user.
    expect(ok(await runCli(['topic', 'list', ...b()])).stdout).toMatch(/no topics/);
    ok(await runCli(['user', 'create', 'admin', ...b()], { env: { MQ_PASSWORD: 'admin-pw' } }));
    const none = await runCli(['topic', 'list', ...b()]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/requires authentication/);
    // The second user needs a login.
    const second = await runCli(['user', 'create', 'mallory', ...b()], { env: { MQ_PASSWORD: 'x' } });
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/requires authentication/);
    // A wrong password is refused in one line.
    const wrong = await runCli(['topic', 'list', ...b()], { env: { MQ_USER: 'admin', MQ_PASSWORD: 'nope' } });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/invalid user name or password/);
    // --user without a password says where it comes from.
    const noPw = await runCli(['topic', 'list', '--user', 'admin', ...b()], { env: { MQ_PASSWORD: undefined as unknown as string } });
    expect(noPw.code).toBe(2);
    expect(noPw.stderr).toMatch(/MQ_PASSWORD/);
  });

  it('creates users from stdin, lists and deletes them; ACLs decide what a user may do', async () => {
    ok(await runCli(['user', 'create', 'alice', '--password-stdin', ...b()], { ...asAdmin, input: 'alice-pw\n' }));
    ok(await runCli(['user', 'create', 'temp', '--password-stdin', '--mechanism', 'SCRAM-SHA-512', ...b()], { ...asAdmin, input: 'temp-pw' }));
    const users = JSON.parse(ok(await runCli(['user', 'list', '--format', 'json', ...b()], asAdmin)).stdout) as Array<{ user: string; credentials: Array<{ mechanism: string }> }>;
    expect(users.map((u) => u.user)).toEqual(['admin', 'alice', 'temp']);
    expect(users.find((u) => u.user === 'temp')!.credentials.map((c) => c.mechanism)).toEqual(['SCRAM-SHA-512']);
    ok(await runCli(['user', 'delete', 'temp', ...b()], asAdmin));
    expect(ok(await runCli(['user', 'list', ...b()], asAdmin)).stdout).not.toMatch(/temp/);

    const topic = uniqueName('sec');
    ok(await runCli(['topic', 'create', topic, ...b()], asAdmin));
    // alice may not write yet: the typed error in one line, nothing written.
    const refused = await runCli(['produce', topic, ...b()], { ...asAlice, input: 'x\n' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/User:alice may not (write|describe) topic/);
    // alice does not even see the topic.
    expect(ok(await runCli(['topic', 'list', ...b()], asAlice)).stdout).not.toMatch(topic);

    ok(await runCli(['acl', 'add', '--allow', 'User:alice', '--operation', 'write', 'read', '--topic', topic, ...b()], asAdmin));
    ok(await runCli(['acl', 'add', '--allow', 'alice', '--operation', 'idempotent-write', '--cluster', ...b()], asAdmin));
    const listed = JSON.parse(ok(await runCli(['acl', 'list', '--principal', 'alice', '--format', 'json', ...b()], asAdmin)).stdout) as unknown[];
    expect(listed).toHaveLength(3);
    ok(await runCli(['produce', topic, ...b()], { ...asAlice, input: 'hello\n' }));
    expect(ok(await runCli(['consume', topic, '--from-beginning', '--exit-at-end', ...b()], asAlice)).stdout).toMatch(/hello/);
    expect(ok(await runCli(['topic', 'list', ...b()], asAlice)).stdout).toMatch(topic);

    // alice may not manage ACLs or users.
    const notAdmin = await runCli(['acl', 'list', ...b()], asAlice);
    expect(notAdmin.code).toBe(1);
    expect(notAdmin.stderr).toMatch(/CLUSTER_AUTHORIZATION_FAILED|may not describe the cluster/);

    // remove, and alice is refused again
    ok(await runCli(['acl', 'remove', '--principal', 'alice', '--topic', topic, ...b()], asAdmin));
    expect((await runCli(['produce', topic, ...b()], { ...asAlice, input: 'again\n' })).code).toBe(1);
    // every refusal left an audit line in the broker's log
    expect(broker.output.filter((l) => l.includes('authorization denied')).length).toBeGreaterThanOrEqual(3);
  });
});
