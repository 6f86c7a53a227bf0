/**
 * Issue 19, CLI: what kcat / rpk users reach for, against a real broker process: numbers checked by the
 * parser, errors that name flags, format strings, relative/time/end offsets, --exit-at-end, several
 * topics and a regex, a group that does not eat --timeout-ms, JSON Lines produce with headers,
 * tombstones, base64 and timestamps, an exact report on a bad line, a bounded connect, completion.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { cleanup, runCli, startBroker, uniqueName, type BrokerProcess, type CliResult } from './src/harness.js';

let broker: BrokerProcess;
const b = () => ['--bootstrap', broker.bootstrap];

beforeAll(async () => {
  broker = await startBroker();
});
afterAll(async () => {
  await cleanup();
});

function expectOneLine(r: CliResult, code: number, line: string | RegExp): void {
  expect(r.code).toBe(code);
  expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  if (typeof line === 'string') expect(r.stderr.trimEnd()).toBe(line);
  else expect(r.stderr.trimEnd()).toMatch(line);
}

/** A topic with `partitions` partitions and the records `k<i>:v<i>` for i in 1..count. */
async function topicWith(prefix: string, partitions: number, count: number): Promise<string> {
  const topic = uniqueName(prefix);
  expect((await runCli(['topic', 'create', topic, '--partitions', String(partitions), ...b()])).code).toBe(0);
  const input = Array.from({ length: count }, (_, i) => `k${i + 1}:v${i + 1}\n`).join('');
  if (count > 0) expect((await runCli(['produce', topic, '--key-separator', ':', ...b()], { input })).code).toBe(0);
  return topic;
}

function jsonLines(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('errors (issue 19)', () => {
  it('numbers are checked by the parser: --partitions abc is a usage error naming the flag, before any broker is asked', async () => {
    expectOneLine(await runCli(['topic', 'create', uniqueName('n'), '--partitions', 'abc', ...b()]), 2, 'mq: --partitions must be an integer >= 1, got "abc"');
    expectOneLine(await runCli(['topic', 'alter', uniqueName('n'), '--partitions', 'abc', ...b()]), 2, 'mq: --partitions must be an integer >= 1, got "abc"');
    expectOneLine(await runCli(['topic', 'create', uniqueName('n'), '--replication-factor', '1.5', ...b()]), 2, 'mq: --replication-factor must be an integer >= 1, got "1.5"');
    expectOneLine(await runCli(['consume', 't', '--max-messages', 'lots', ...b()]), 2, 'mq: --max-messages must be an integer >= 1, got "lots"');
    expectOneLine(await runCli(['topic', 'list', '--request-timeout-ms', 'soon', ...b()]), 2, 'mq: --request-timeout-ms must be an integer >= 1, got "soon"');
  });

  it('group list --state Bogus is an error, not "no consumer groups"', async () => {
    expectOneLine(await runCli(['group', 'list', '--state', 'Bogus', ...b()]), 2, /^mq: Invalid values:.*state.*"Bogus"/);
  });

  it('an invalid topic name gets the name rule, not a "create it with: mq topic create NAME" that would fail', async () => {
    const r = await runCli(['consume', 'bad/name', ...b()]);
    expectOneLine(r, 2, /^mq: topic name "bad\/name" has characters other than/);
    expect(r.stderr).not.toMatch(/mq topic create/);
  });

  it('errors name CLI flags, not client option names', async () => {
    const topic = await topicWith('big', 1, 0);
    const r = await runCli(['produce', topic, '--max-request-bytes', '1024', ...b()], { input: `${'x'.repeat(5000)}\n` });
    expectOneLine(r, 1, /raise --max-request-bytes/);
    expect(r.stderr).not.toMatch(/maxRequestBytes/);
    expectOneLine(await runCli(['produce', topic, '--idempotent', '--acks', '1', ...b()], { input: 'x\n' }), 2, 'mq: --idempotent needs --acks all, got --acks 1');
  });
});

describe('consume (issue 19)', () => {
  it('a kcat-style --format-string shows topic, partition, offset, key, value, headers and timestamp', async () => {
    const topic = await topicWith('fmt', 1, 0);
    await runCli(['produce', topic, '--key', 'k', '-H', 'a=1', '-H', 'b=x,y', '--timestamp', '1700000000000', ...b()], { input: 'hello\n' });
    const r = await runCli(['consume', topic, '--from-beginning', '--exit-at-end', '-f', '%t|%p|%o|%k|%s|%h|%T\\n', ...b()]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${topic}|0|0|k|hello|a=1,b=x,y|1700000000000\n`);
  });

  it('--offset -N reads the last N records of each partition; --exit-at-end stops at the end', async () => {
    const topic = await topicWith('last', 3, 30);
    const all = jsonLines((await runCli(['consume', topic, '--offset', 'beginning', '--exit-at-end', '--format', 'json', ...b()])).stdout);
    expect(all).toHaveLength(30);
    const r = await runCli(['consume', topic, '--offset', '-2', '--exit-at-end', '--format', 'json', ...b()]);
    expect(r.code).toBe(0);
    const got = jsonLines(r.stdout);
    expect(got).toHaveLength(6);
    for (const p of [0, 1, 2]) {
      const mine = all.filter((x) => x.partition === p).map((x) => x.offset as number);
      expect(got.filter((x) => x.partition === p).map((x) => x.offset)).toEqual(mine.slice(-2));
    }
  });

  it('--offset end with --exit-at-end prints nothing and exits at once', async () => {
    const topic = await topicWith('end', 2, 5);
    const r = await runCli(['consume', topic, '--offset', 'end', '--exit-at-end', ...b()]);
    expect(r).toMatchObject({ code: 0, stdout: '' });
    expect(r.stderr).toBe('consumed 0 records\n');
  });

  it('--offset @TIME starts at the first record at or after that time (ListOffsets by timestamp)', async () => {
    const topic = await topicWith('time', 1, 0);
    const input = ['{"value":"old","timestamp":1000}', '{"value":"mid","timestamp":"1970-01-01T00:00:02Z"}', '{"value":"new","timestamp":3000}'].join('\n');
    expect((await runCli(['produce', topic, '--input', 'json', ...b()], { input })).code).toBe(0);
    const at = (o: string) => runCli(['consume', topic, '--offset', o, '--exit-at-end', ...b()]);
    expect((await at('@2000')).stdout).toBe('mid\nnew\n');
    expect((await at('@1970-01-01T00:00:02.500Z')).stdout).toBe('new\n');
    expect((await at('@9999999999999')).stdout).toBe('');
    expectOneLine(await at('@yesterday'), 2, /^mq: --offset @ must be ISO 8601/);
  });

  it('several topics and a regex', async () => {
    const prefix = uniqueName('multi');
    const t1 = `${prefix}-a`;
    const t2 = `${prefix}-b`;
    for (const t of [t1, t2]) {
      await runCli(['topic', 'create', t, ...b()]);
      await runCli(['produce', t, ...b()], { input: `in-${t}\n` });
    }
    const both = await runCli(['consume', t1, t2, '--from-beginning', '--exit-at-end', '-f', '%t %s\\n', ...b()]);
    expect(both.stdout.split('\n').filter(Boolean).sort()).toEqual([`${t1} in-${t1}`, `${t2} in-${t2}`]);
    const re = await runCli(['consume', `${prefix}-.*`, '--regex', '--from-beginning', '--exit-at-end', '-f', '%t\\n', ...b()]);
    expect(re.stdout.split('\n').filter(Boolean).sort()).toEqual([t1, t2]);
    expectOneLine(await runCli(['consume', `${prefix}-nothing.*`, '--regex', ...b()]), 2, /^mq: no topic matches/);
  });

  it('regression: the group join does not eat --timeout-ms (15 records, --group g --from-beginning --timeout-ms 2000)', async () => {
    const topic = await topicWith('grp', 1, 15);
    const r = await runCli(['consume', topic, '--group', uniqueName('g'), '--from-beginning', '--timeout-ms', '2000', ...b()], { timeoutMs: 60_000 });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('consumed 15 records\n');
    expect(r.stdout.split('\n').filter(Boolean)).toHaveLength(15);
  });

  it('duplicate headers are a list in JSON, not collapsed to the last', async () => {
    const topic = await topicWith('dup', 1, 0);
    await runCli(['produce', topic, '-H', 'h=1', '-H', 'h=2', '-H', 'o=x', ...b()], { input: 'v\n' });
    const [rec] = jsonLines((await runCli(['consume', topic, '--from-beginning', '-e', '--format', 'json', ...b()])).stdout);
    expect(rec!.headers).toEqual({ h: ['1', '2'], o: 'x' });
  });
});

describe('produce (issue 19)', () => {
  it('--input json: key, value, headers, partition, timestamp; null value is a tombstone; consume --format json round-trips', async () => {
    const topic = await topicWith('jsonl', 2, 0);
    const input = [
      '{"key":"a","value":"one","headers":{"h":["1","2"],"x":null},"partition":1,"timestamp":1700000000000}',
      '',
      '{"key":"a","value":null,"partition":1}',
      '{"value":"plain","headers":[{"key":"k","value":"v,w"}],"partition":0}',
    ].join('\n');
    const p = await runCli(['produce', topic, '--input', 'json', '--format', 'json', ...b()], { input });
    expect(p.code).toBe(0);
    expect(jsonLines(p.stdout).map((m) => [m.partition, m.offset])).toEqual([[1, 0], [1, 1], [0, 0]]);
    const got = jsonLines((await runCli(['consume', topic, '--from-beginning', '-e', '--format', 'json', ...b()])).stdout);
    const byPart = (n: number) => got.filter((g) => g.partition === n);
    expect(byPart(1)).toEqual([
      expect.objectContaining({ offset: 0, key: 'a', value: 'one', timestamp: 1700000000000, headers: { h: ['1', '2'], x: null } }),
      expect.objectContaining({ offset: 1, key: 'a', value: null }),
    ]);
    expect(byPart(0)).toEqual([expect.objectContaining({ key: null, value: 'plain', headers: { k: 'v,w' } })]);
  });

  it('base64 input and --null-empty tombstones in text mode', async () => {
    const topic = await topicWith('b64', 1, 0);
    const bytes = Buffer.from([0, 1, 2, 255]);
    const input = `${bytes.toString('base64')}\n\n`;
    expect((await runCli(['produce', topic, '--value-encoding', 'base64', '--null-empty', ...b()], { input })).code).toBe(0);
    const got = jsonLines((await runCli(['consume', topic, '--from-beginning', '-e', '--format', 'json', '--value-encoding', 'base64', ...b()])).stdout);
    expect(got.map((g) => g.value)).toEqual([bytes.toString('base64'), null]);
  });

  it('a bad line is never sent: the command stops there and says exactly what was produced', async () => {
    const topic = await topicWith('bad', 1, 0);
    const r = await runCli(['produce', topic, '--input', 'json', ...b()], { input: '{"value":"a"}\n{"value":"b"}\n{"value":\n{"value":"d"}\n' });
    expectOneLine(r, 2, new RegExp(`^mq: line 3: not JSON: .* \\(the 2 records before it were produced to "${topic}", nothing after it\\)$`));
    const values = (await runCli(['consume', topic, '--from-beginning', '-e', ...b()])).stdout;
    expect(values).toBe('a\nb\n');
    expectOneLine(await runCli(['produce', topic, '--input', 'json', ...b()], { input: '{"valu":"x"}\n' }), 2, /^mq: line 1: unknown field "valu" .*\(nothing was produced\)$/);
    expectOneLine(await runCli(['produce', topic, '--value-encoding', 'base64', ...b()], { input: 'not base64!\n' }), 2, 'mq: line 1: the value is not base64 (nothing was produced)');
  });
});

describe('habits (issue 19)', () => {
  let silent: Server;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    silent = createServer((s) => sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => silent.close(() => r()));
  });

  it('regression: a host that accepts but never answers fails within --connect-timeout-ms (it took 21.6 s)', async () => {
    const port = (silent.address() as { port: number }).port;
    const started = Date.now();
    const r = await runCli(['topic', 'list', '--bootstrap', `127.0.0.1:${port}`, '--connect-timeout-ms', '1000']);
    const took = Date.now() - started;
    expectOneLine(r, 1, `mq: no answer from the cluster at 127.0.0.1:${port} within 1000 ms (is that a broker's WebSocket port? wait longer with --connect-timeout-ms)`);
    // Process start-up on a loaded machine is most of the rest; without the bound it was 4 x 5 s.
    expect(took).toBeLessThan(8000);
  });

  it('mq cluster start while a broker holds its port says so in one line, naming the port and the flags', async () => {
    const free = async () => {
      const srv = createServer();
      await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
      const port = (srv.address() as { port: number }).port;
      await new Promise<void>((r) => srv.close(() => r()));
      return String(port);
    };
    const args = ['--brokers', '1', '--port', String(broker.port), '--http-port', await free(), '--raft-port', await free(), '--data-dir', `${broker.dataDir}-cluster`];
    const r = await runCli(['cluster', 'start', ...args], { timeoutMs: 60_000 });
    expectOneLine(r, 1, new RegExp(`^mq: broker 1 cannot listen on port ${broker.port}: it is in use \\(is \`mq broker start\` or another cluster running\\? stop it, or move this cluster with --port, --http-port and --raft-port\\); see `));
  });

  it('mq completion bash|zsh prints a script; mq answers its completion queries', async () => {
    const bash = await runCli(['completion', 'bash']);
    expect(bash.code).toBe(0);
    expect(bash.stdout).toMatch(/complete -o bashdefault -o default -F _mq_yargs_completions mq/);
    const zsh = await runCli(['completion', 'zsh']);
    expect(zsh.stdout).toMatch(/^#compdef mq/);
    expectOneLine(await runCli(['completion', 'fish']), 2, 'mq: mq completion supports bash and zsh, got "fish"');
    const words = (await runCli(['--get-yargs-completions', 'mq', 'topic', ''])).stdout.split('\n');
    expect(words).toEqual(expect.arrayContaining(['create', 'list', 'describe', 'alter', 'delete']));
  });
});
