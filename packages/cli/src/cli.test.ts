import { PassThrough, Readable } from 'node:stream';
import { MqError } from '@mq/protocol/errors';
import { run } from './cli.js';
import { decodeField, parseHeaderFlags, parseHeaders, parseLine, type LineOptions } from './commands/produce.js';
import { compileFormat, parseStartOffset, recordJson } from './commands/consume.js';
import { UsageError, cliWording, exitCodeOf, formatError, refineError } from './errors.js';
import { intFlag, parseKeyValues } from './options.js';
import { table } from './output.js';
import { freePort as deadPort } from '../../../tools/free-port.mjs';
import { startFailure } from './commands/cluster.js';

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


describe('mq command line', () => {
  it.each([
    [['frobnicate'], /^mq: Unknown argument: frobnicate \(see: mq --help\)\n$/],
    [[], /^mq: name a command \(see: mq --help\)\n$/],
    [['topic', 'create'], /^mq: Not enough non-option arguments/],
    [['produce', 't', '--acks', '7'], /^mq: Invalid values:.*acks/],
    [['consume', 't', '--from-beginning', '--offset', '3'], /mutually exclusive/],
    [['broker', 'start', '--config-set', 'oops'], /^mq: --config-set "oops" is not key=value\n$/],
    [['topic', 'create', 't', '--partitions', 'abc'], /^mq: --partitions must be an integer >= 1, got "abc"\n$/],
    [['topic', 'alter', 't', '--partitions', 'abc'], /^mq: --partitions must be an integer >= 1, got "abc"\n$/],
    [['consume', 't', '--partition', '-1'], /^mq: --partition must be an integer >= 0, got "-1"\n$/],
    [['produce', 't', '--linger-ms', '5ms'], /^mq: --linger-ms must be an integer >= 0, got "5ms"\n$/],
    [['group', 'list', '--state', 'Bogus'], /^mq: Invalid values:.*"Bogus"/],
    [['consume', 't', '--offset', 'tomorrow'], /^mq: --offset must be earliest, latest, end, a number >= 0, -N/],
    [['consume', 't', '-f', '%x'], /^mq: --format-string has an unknown field "%x"/],
    [['completion', 'fish'], /^mq: mq completion supports bash and zsh, got "fish"\n$/],
    [['topic', 'reassign', 't', '--partition', '0', '--replicas', '1,x'], /^mq: --replicas: "x" is not a broker id/],
    [['topic', 'reassign', 't', '--replicas', '1,2'], /^mq: give the partition: --partition P\n$/],
    [['topic', 'reassign', 't', '--partition', '0'], /^mq: give the new replicas: --replicas 1,4,5/],
    [['topic', 'reassign', '--cancel', 't', '--partition', '0', '--replicas', '1'], /^mq: --cancel takes no --replicas/],
    [['cluster', 'elect-leaders', '--partition', '1'], /^mq: --partition needs --topic\n$/],
    [['cluster', 'rebalance', '--concurrency', '0'], /^mq: --concurrency must be an integer >= 1, got "0"\n$/],
    [['cluster', 'throttle', '-5'], /^mq: /],
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

  it('checks integer flags with the text the user gave', () => {
    expect(intFlag('--n', 1)('12')).toBe(12);
    expect(intFlag('--n', 1)(undefined)).toBeUndefined();
    expect(() => intFlag('--n', 1)('1e3')).toThrow('--n must be an integer >= 1, got "1e3"');
    expect(() => intFlag('--n', 0)('')).toThrow(UsageError);
    expect(() => intFlag('--n', 0)(['1', '2'])).toThrow('--n was given more than once');
  });

  it('names CLI flags in client messages', () => {
    expect(cliWording('record of about 9 bytes is over the largest request of 8 bytes (raise maxRequestBytes, or send smaller records)')).toBe(
      'record of about 9 bytes is over the largest request of 8 bytes (raise --max-request-bytes, or send smaller records)',
    );
    expect(cliWording("does not fit the producer's bufferMemory of 1 bytes (raise bufferMemory)")).toMatch(/\(raise --buffer-memory\)$/);
    expect(cliWording("needs acks 'all', got acks 1 (use acks: 'all', or idempotent: false)")).toMatch(/\(use --acks all, or leave out --idempotent\)$/);
    expect(formatError(new MqError('RECORD_TOO_LARGE', 'x (raise maxRequestBytes)'))).toBe('mq: x (raise --max-request-bytes)');
  });

  it('an unknown topic with an invalid name gets the name rule instead of a create suggestion', async () => {
    const unknown = (topic: string) => new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${topic}" does not exist (create it with: mq topic create ${topic})`, { topic });
    const valid = unknown('orders');
    expect(await refineError(valid)).toBe(valid);
    const refined = await refineError(unknown('bad/name'));
    expect(refined).toBeInstanceOf(UsageError);
    expect(formatError(refined)).toMatch(/^mq: topic name "bad\/name" has characters other than/);
    expect(formatError(await refineError(unknown('x'.repeat(300))))).toMatch(/the limit is 249/);
  });

  it('parses consume start offsets', () => {
    expect(parseStartOffset('earliest')).toEqual({ kind: 'earliest' });
    expect(parseStartOffset('beginning')).toEqual({ kind: 'earliest' });
    expect(parseStartOffset('end')).toEqual({ kind: 'latest' });
    expect(parseStartOffset('42')).toEqual({ kind: 'offset', offset: 42 });
    expect(parseStartOffset('-5')).toEqual({ kind: 'last', count: 5 });
    expect(parseStartOffset('@1700000000000')).toEqual({ kind: 'time', timestamp: 1700000000000 });
    expect(parseStartOffset('@2026-11-29T08:00:00Z')).toEqual({ kind: 'time', timestamp: Date.parse('2026-11-29T08:00:00Z') });
    for (const bad of ['-0', '1.5', '@', '@soon', 'x']) expect(() => parseStartOffset(bad)).toThrow(UsageError);
  });

  it('prints records with a kcat-style format string', () => {
    const r = { topic: 't', partition: 2, offset: 9, timestamp: 7, key: null, value: Buffer.from('v'), headers: [{ key: 'a', value: Buffer.from('1,2') }, { key: 'b', value: null }] };
    expect(compileFormat('%t %p %o [%k] %s %h %T %K %S 100%% tab\\there\\n', 'utf8')(r)).toBe('t 2 9 [] v a=1,2,b= 7 -1 1 100% tab\there\n');
    expect(compileFormat('%s', 'base64')(r)).toBe('dg==');
  });

  it('parses produce lines: text, base64, tombstones and JSON Lines', () => {
    const o: LineOptions = { input: 'text', encoding: 'utf8', headers: [], partitions: 2, nullEmpty: false };
    expect(parseLine('v', o)).toMatchObject({ value: 'v' });
    expect(parseLine('k:v', { ...o, separator: ':' })).toMatchObject({ key: 'k', value: 'v' });
    expect(parseLine('', { ...o, nullEmpty: true }).value).toBeNull();
    expect(parseLine('AAH/', { ...o, encoding: 'base64' }).value).toEqual(Buffer.from([0, 1, 255]));
    expect(() => decodeField('AAH', 'base64', 'the value')).toThrow('the value is not base64');
    const j = { ...o, input: 'json' as const };
    expect(parseLine('{"key":"k","value":null,"headers":{"h":["1","2"]},"partition":1,"timestamp":"1970-01-01T00:00:01Z"}', j)).toEqual({
      key: 'k',
      value: null,
      headers: [{ key: 'h', value: '1' }, { key: 'h', value: '2' }],
      partition: 1,
      timestamp: 1000,
    });
    expect(() => parseLine('{"value":"x","partition":2}', j)).toThrow('"partition" 2 does not exist (the topic has 2)');
    expect(() => parseLine('{"key":"k"}', j)).toThrow('no "value" (null for a tombstone)');
    expect(() => parseLine('[1]', j)).toThrow('not a JSON object');
    expect(() => parseLine('{"value":1}', j)).toThrow('"value" must be a string or null');
  });

  it('parses repeatable -H headers whose values hold commas', () => {
    expect(parseHeaderFlags(['a=1,2', 'a=x=y'])).toEqual([{ key: 'a', value: '1,2' }, { key: 'a', value: 'x=y' }]);
    expect(() => parseHeaderFlags(['=v'])).toThrow('-H "=v" is not key=value');
  });

  it('a cluster process that cannot listen names the port and the flags that move the cluster', () => {
    const reason = 'mq: cannot listen: listen EADDRINUSE: address already in use 127.0.0.1:9092 (is another broker running? pick another --port/--http-port)';
    expect(formatError(startFailure('broker 1', reason, '/d/broker.log'))).toBe(
      'mq: broker 1 cannot listen on port 9092: it is in use (is `mq broker start` or another cluster running? stop it, or move this cluster with --port, --http-port and --raft-port); see /d/broker.log',
    );
    expect(exitCodeOf(startFailure('broker 1', reason, 'x'))).toBe(1);
    expect(formatError(startFailure('controller 4', 'exited with code 1', '/d/l'))).toBe('mq: controller 4 did not start: exited with code 1; see /d/l');
  });

  it('aligns tables', () => {
    expect(table(['A', 'LONGER'], [['xyz', '1'], ['q', '22']])).toBe('A    LONGER\nxyz  1\nq    22');
  });

  it('prints records as JSON Lines with text or base64 payloads', () => {
    const r = { topic: 't', partition: 1, offset: 5, timestamp: 7, key: Buffer.from('k'), value: Buffer.from([0xff, 0x00]), headers: [{ key: 'h', value: null }] };
    expect(JSON.parse(recordJson(r, 'base64'))).toEqual({ topic: 't', partition: 1, offset: 5, timestamp: 7, key: 'aw==', value: '/wA=', headers: { h: null } });
    expect(JSON.parse(recordJson({ ...r, key: null, value: Buffer.from('hi') }, 'utf8'))).toMatchObject({ key: null, value: 'hi' });
  });

  it('regression: duplicate headers are a list in JSON, not collapsed to the last', () => {
    const h = (key: string, v: string | null) => ({ key, value: v === null ? null : Buffer.from(v) });
    const r = { topic: 't', partition: 0, offset: 0, timestamp: 0, key: null, value: null, headers: [h('a', '1'), h('b', 'x'), h('a', null), h('a', '3')] };
    expect(JSON.parse(recordJson(r, 'utf8')).headers).toEqual({ a: ['1', null, '3'], b: 'x' });
  });
});
