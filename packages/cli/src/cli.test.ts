import { createServer } from 'node:net';
import { PassThrough, Readable } from 'node:stream';
import { MqError } from '@mq/protocol/errors';
import { run } from './cli.js';
import { parseHeaders } from './commands/produce.js';
import { recordJson } from './commands/consume.js';
import { UsageError, exitCodeOf, formatError } from './errors.js';
import { parseKeyValues } from './options.js';
import { table } from './output.js';

async function runIn(argv: string[], input = ''): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await run(argv, { stdin: Readable.from([input]), stdout, stderr, env: {} });
  return { code, stdout: out, stderr: err };
}

async function deadPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe('mq command line', () => {
  it.each([
    [['frobnicate'], /^mq: Unknown argument: frobnicate \(see: mq --help\)\n$/],
    [[], /^mq: name a command \(see: mq --help\)\n$/],
    [['topic', 'create'], /^mq: Not enough non-option arguments/],
    [['produce', 't', '--acks', '7'], /^mq: Invalid values:.*acks/],
    [['consume', 't', '--from-beginning', '--offset', '3'], /mutually exclusive/],
    [['broker', 'start', '--config-set', 'oops'], /^mq: --config-set "oops" is not key=value\n$/],
  ])('%j is a usage error: one line, exit 2', async (argv, line) => {
    const r = await runIn(argv as string[]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(line);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it('reports a broker that is not running in one line, exit 1', async () => {
    const port = await deadPort();
    const r = await runIn(['topic', 'list', '--bootstrap', `127.0.0.1:${port}`]);
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr: `mq: cannot connect to broker at 127.0.0.1:${port}: ECONNREFUSED (is the broker running? start one with: mq broker start)\n`,
    });
  });

  it('--help exits 0', async () => {
    const help = await runIn(['--help']);
    expect(help.code).toBe(0);
  });
});

describe('helpers', () => {
  it('formats errors as one line with the right exit code', () => {
    expect(formatError(new MqError('UNKNOWN_TOPIC_OR_PARTITION', 'topic "x" does not exist\n(create it)'))).toBe('mq: topic "x" does not exist (create it)');
    expect(formatError(new TypeError('boom'))).toBe('mq: unexpected error: boom (set MQ_DEBUG=1 for details)');
    expect(exitCodeOf(new UsageError('bad'))).toBe(2);
    expect(exitCodeOf(new MqError('INVALID_ARGUMENT', 'bad'))).toBe(2);
    expect(exitCodeOf(new MqError('CONNECTION_ERROR', 'down'))).toBe(1);
  });

  it('parses key=value flags and headers', () => {
    expect(parseKeyValues('--config', ['a=1', 'b=x=y'])).toEqual({ a: '1', b: 'x=y' });
    expect(() => parseKeyValues('--config', ['nope'])).toThrow('--config "nope" is not key=value');
    expect(parseHeaders('a=1,b=')).toEqual([{ key: 'a', value: '1' }, { key: 'b', value: '' }]);
    expect(parseHeaders(undefined)).toBeUndefined();
    expect(() => parseHeaders('x')).toThrow(UsageError);
  });

  it('aligns tables', () => {
    expect(table(['A', 'LONGER'], [['xyz', '1'], ['q', '22']])).toBe('A    LONGER\nxyz  1\nq    22');
  });

  it('prints records as JSON Lines with text or base64 payloads', () => {
    const r = { topic: 't', partition: 1, offset: 5, timestamp: 7, key: Buffer.from('k'), value: Buffer.from([0xff, 0x00]), headers: [{ key: 'h', value: null }] };
    expect(JSON.parse(recordJson(r, 'base64'))).toEqual({ topic: 't', partition: 1, offset: 5, timestamp: 7, key: 'aw==', value: '/wA=', headers: { h: null } });
    expect(JSON.parse(recordJson({ ...r, key: null, value: Buffer.from('hi') }, 'utf8'))).toMatchObject({ key: null, value: 'hi' });
  });
});
