/**
 * The HTTP API's OpenAPI document against a real broker process: every documented operation is called (successes
 * and its documented errors), each answer's status must be one the document lists for that operation, and each
 * JSON body must validate (ajv, JSON Schema 2020-12) against the schema the document gives for that status.
 * Also the fixes the document's review found: partition_count 0 is refused, deleting an internal topic is a
 * documented 400, an unknown topic on the group offsets route is not retriable. And the same live document
 * passes `redocly lint` with the recommended ruleset (redocly.yaml at the root): no error, no warning.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { cleanup, makeTempDir, REPO_ROOT, startBroker, uniqueName, type BrokerProcess } from './src/harness.js';

const require = createRequire(import.meta.url);
interface Validator {
  (data: unknown): boolean;
  errors?: unknown[] | null;
}
interface AjvInstance {
  addSchema(schema: object, key: string): void;
  compile(schema: object): Validator;
}
const Ajv2020 = (require('ajv/dist/2020') as { default: new (options: object) => AjvInstance }).default;

type Doc = { paths: Record<string, Record<string, { responses: Record<string, { $ref?: string; content?: Record<string, unknown> }> }>>; components: { responses: Record<string, unknown> } };

let broker: BrokerProcess;
let doc: Doc;
let ajv: AjvInstance;
const called = new Set<string>();
const validators = new Map<string, Validator>();

beforeAll(async () => {
  broker = await startBroker({ args: ['--config-set', 'group.initial.rebalance.delay.ms=0'] });
  doc = (await (await fetch(`${broker.httpUrl}/openapi.json`)).json()) as Doc;
  ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(doc, 'mq-openapi');
}, 60_000);
afterAll(async () => {
  await cleanup();
});

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** Calls the API and checks the answer against the document: the status is listed, the JSON body fits its schema. */
async function call(method: string, pattern: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${broker.httpUrl}${path}`, {
    method,
    ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
  });
  const text = await res.text();
  const op = doc.paths[pattern]?.[method.toLowerCase()];
  if (!op) throw new Error(`${method} ${pattern} is not in the OpenAPI document`);
  called.add(`${method} ${pattern}`);
  const status = String(res.status);
  const documented = op.responses[status];
  if (!documented) throw new Error(`${method} ${path} answered ${status}, which the document does not list for ${method} ${pattern} (it lists ${Object.keys(op.responses).join(', ')}): ${text.slice(0, 300)}`);
  const json = text && res.headers.get('content-type')?.includes('application/json') ? JSON.parse(text) : undefined;
  const target = documented.$ref
    ? `mq-openapi#/${pointer('components', 'responses', documented.$ref.split('/').at(-1)!)}/content/${pointer('application/json')}/schema`
    : documented.content?.['application/json']
      ? `mq-openapi#/${pointer('paths', pattern, method.toLowerCase(), 'responses', status)}/content/${pointer('application/json')}/schema`
      : undefined;
  if (target && json !== undefined) {
    let validate = validators.get(target);
    if (!validate) validators.set(target, (validate = ajv.compile({ $ref: target })));
    if (!validate(json)) throw new Error(`${method} ${path} (${status}) does not fit the document: ${JSON.stringify(validate.errors).slice(0, 600)}\nbody: ${text.slice(0, 300)}`);
  }
  return { status: res.status, body: json ?? text };
}

describe('the OpenAPI document against a live broker', () => {
  it('every documented operation answers only documented statuses with bodies that fit their schemas', async () => {
    const topic = uniqueName('contract');
    const group = uniqueName('contract-g');
    const T = '/topics/{topic}';
    const P = '/topics/{topic}/partitions/{partition}';
    expect((await call('POST', '/topics', '/topics', { name: topic, partition_count: 2 })).status).toBe(201);
    expect((await call('POST', '/topics', '/topics', { name: topic, partition_count: 2 })).status).toBe(409);
    expect((await call('POST', '/topics', '/topics', { name: 'bad name!' })).status).toBe(400);
    const zero = await call('POST', '/topics', '/topics', { name: uniqueName('zero'), partition_count: 0 });
    expect([zero.status, zero.body.error.code]).toEqual([400, 'INVALID_PARTITIONS']);
    expect((await call('GET', '/topics', '/topics')).status).toBe(200);
    // The one validator (the document's own schemas): a body field it does not know is refused by name; a query
    // parameter it does not know is ignored.
    const typo = await call('POST', '/topics', '/topics', { name: uniqueName('typo'), partiton_count: 3 });
    expect([typo.status, typo.body.error.code, typo.body.error.message]).toEqual([400, 'INVALID_REQUEST', 'the body has an unknown field "partiton_count"']);
    const badQuery = await call('GET', `${P}/records`, `/topics/${topic}/partitions/0/records?max_records=none`);
    expect([badQuery.status, badQuery.body.error.message]).toEqual([400, 'query parameter "max_records" must be integer (got "none")']);
    expect((await call('GET', '/topics', '/topics?_=1700000000000')).status).toBe(200);
    expect((await call('GET', T, `/topics/${topic}`)).status).toBe(200);
    expect((await call('GET', T, '/topics/no-such-topic')).status).toBe(404);

    expect((await call('POST', `${T}/records`, `/topics/${topic}/records`, { key: 'k', value: { n: 1 } })).status).toBe(200);
    expect((await call('POST', `${T}/records`, `/topics/${topic}/records`, [{ value: 'a', partition: 0 }, { value: 'b', partition: 0 }])).status).toBe(200);
    expect((await call('POST', `${T}/records`, `/topics/${topic}/records`, { value: 'x', partition: 9 })).status).toBe(404);
    expect((await call('POST', `${T}/records`, `/topics/${topic}/records`, { nothing: true })).status).toBe(400);
    expect((await call('POST', `${T}/records`, `/topics/${topic}/records?acks=0`, { value: 'x' })).status).toBe(400);
    expect((await call('GET', `${P}/records`, `/topics/${topic}/partitions/0/records?offset=0&encoding=json`)).status).toBe(200);
    expect((await call('GET', `${P}/records`, `/topics/${topic}/partitions/0/records?max_bytes=0`)).status).toBe(400);
    expect((await call('GET', `${P}/records`, `/topics/${topic}/partitions/7/records`)).status).toBe(404);
    expect((await call('GET', `${P}/watermarks`, `/topics/${topic}/partitions/0/watermarks`)).status).toBe(200);
    expect((await call('GET', `${P}/watermarks`, `/topics/${topic}/partitions/7/watermarks`)).status).toBe(404);

    expect((await call('GET', '/health', '/health')).status).toBe(200);
    expect((await call('GET', '/openapi.json', '/openapi.json')).status).toBe(200);
    expect((await call('GET', '/metrics', '/metrics')).status).toBe(200);
    expect((await call('GET', '/cluster', '/cluster')).status).toBe(200);
    expect((await call('GET', '/log-dirs', '/log-dirs')).status).toBe(200);
    expect((await call('GET', '/log-dirs', `/log-dirs?topic=${topic}`)).status).toBe(200);
    expect((await call('GET', '/log-dirs', '/log-dirs?topic=bad%20name')).status).toBe(400);
    // Security is off on this broker: no credentials to make a token for (broker test/security.test.ts covers the 200).
    expect((await call('POST', '/tokens', '/tokens')).status).toBe(401);

    expect((await call('POST', '/groups/{group}/offsets', `/groups/${group}/offsets`, { topic, partition: 0, offset: 1 })).status).toBe(200);
    const unknownTopic = await call('POST', '/groups/{group}/offsets', `/groups/${group}/offsets`, { topic: 'no-such-topic', partition: 0, offset: 1 });
    expect([unknownTopic.status, unknownTopic.body.error.retriable]).toEqual([404, false]);
    expect((await call('POST', '/groups/{group}/offsets', `/groups/${group}/offsets`, { offsets: [] })).status).toBe(400);
    expect((await call('GET', '/groups', '/groups')).status).toBe(200);
    expect((await call('GET', '/groups/{group}', `/groups/${group}`)).status).toBe(200);
    expect((await call('GET', '/groups/{group}', `/groups/${uniqueName('none')}`)).status).toBe(404);
    expect((await call('DELETE', '/groups/{group}', `/groups/${group}`)).status).toBe(200);

    const C = '/consumers/{group}/instances/{instance}';
    const created = await call('POST', '/consumers/{group}', `/consumers/${group}`, { name: 'i1', auto_offset_reset: 'earliest' });
    expect(created.status).toBe(200);
    const base = created.body.base_uri as string;
    expect((await call('POST', '/consumers/{group}', `/consumers/${group}`, { auto_offset_reset: 'never' })).status).toBe(400);
    expect((await call('POST', `${C}/subscription`, `${base}/subscription`, { topics: [topic] })).status).toBe(204);
    expect((await call('POST', `${C}/subscription`, `${base}/subscription`, { topics: [] })).status).toBe(400);
    expect((await call('GET', `${C}/records`, `${base}/records?timeout_ms=500&encoding=json`)).status).toBe(200);
    expect((await call('GET', `${C}/assignments`, `${base}/assignments`)).status).toBe(200);
    expect((await call('POST', `${C}/offsets`, `${base}/offsets`)).status).toBe(204);
    expect((await call('POST', `${C}/offsets`, `${base}/offsets`, { offsets: 'all' })).status).toBe(400);
    expect((await call('DELETE', C, base)).status).toBe(204);
    expect((await call('GET', `${C}/records`, `${base}/records`)).status).toBe(404);
    expect((await call('DELETE', C, base)).status).toBe(404);

    // Scale-out: reassignments, preferred-leader election, decommission (one broker: nothing can move).
    const me = ((await call('GET', '/cluster', '/cluster')).body as { brokerId: number }).brokerId;
    expect((await call('GET', '/reassignments', '/reassignments')).status).toBe(200);
    const refusedMove = await call('POST', '/reassignments', '/reassignments', { partitions: [{ topic, partition: 0, replicas: [me, 99] }] });
    expect([refusedMove.status, refusedMove.body.results[0].error.code]).toEqual([200, 'INVALID_REPLICA_ASSIGNMENT']);
    expect((await call('POST', '/reassignments', '/reassignments', { partitions: 'all' })).status).toBe(400);
    const noMove = await call('DELETE', `${P}/reassignment`, `/topics/${topic}/partitions/0/reassignment`);
    expect([noMove.status, noMove.body.error.code]).toEqual([400, 'NO_REASSIGNMENT_IN_PROGRESS']);
    expect((await call('DELETE', `${P}/reassignment`, `/topics/no-such-topic/partitions/0/reassignment`)).status).toBe(404);
    expect((await call('POST', '/elect-leaders', '/elect-leaders', {})).status).toBe(200);
    expect((await call('POST', '/elect-leaders', '/elect-leaders', { topics: 'x' })).status).toBe(400);
    const lone = await call('POST', '/brokers/{broker}/decommission', `/brokers/${me}/decommission`, {});
    expect([lone.status, lone.body.error.code]).toEqual([400, 'INVALID_REPLICATION_FACTOR']);
    const unknownBroker = await call('POST', '/brokers/{broker}/decommission', '/brokers/99/decommission', {});
    expect([unknownBroker.status, unknownBroker.body.error.code]).toEqual([400, 'UNKNOWN_NODE']);
    // The controller quorum: this one-node cluster is its only voter and cannot grow until restarted with a Raft listener.
    const q = await call('GET', '/controller/quorum', '/controller/quorum');
    expect(q.status).toBe(200);
    expect(q.body.members.map((m: { id: number; voter: boolean }) => [m.id, m.voter])).toEqual([[q.body.leader_id, true]]);
    const grow = await call('POST', '/controller/voters', '/controller/voters', { id: 2, address: '127.0.0.1:19092' });
    expect([grow.status, grow.body.error.code]).toEqual([400, 'INVALID_REQUEST']);
    expect(grow.body.error.message).toMatch(/restart it with controller\.quorum\.voters=/);
    expect((await call('POST', '/controller/voters', '/controller/voters', { id: 0, address: 'x' })).status).toBe(400);
    const last = await call('DELETE', '/controller/voters/{id}', `/controller/voters/${q.body.leader_id}`);
    expect([last.status, last.body.error.code]).toEqual([400, 'INVALID_REQUEST']);
    const stranger = await call('DELETE', '/controller/voters/{id}', '/controller/voters/99');
    expect([stranger.status, stranger.body.error.code]).toEqual([400, 'UNKNOWN_NODE']);

    const internal = await call('DELETE', T, '/topics/__consumer_offsets');
    expect([internal.status, internal.body.error.code]).toEqual([400, 'INVALID_TOPIC']);
    expect((await call('DELETE', T, `/topics/${topic}`)).status).toBe(200);
    expect((await call('DELETE', T, `/topics/${topic}`)).status).toBe(404);

    // The checker itself refuses what does not fit (a schema reached through the document's own $refs).
    const detail = ajv.compile({ $ref: `mq-openapi#/${pointer('paths', T, 'get', 'responses', '200')}/content/${pointer('application/json')}/schema` });
    expect(detail({ name: 5, partition_count: 'two' })).toBe(false);

    // Every operation in the document was exercised.
    const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    expect(documented.filter((o) => !called.has(o))).toEqual([]);
  }, 120_000);

  it('passes redocly lint (recommended ruleset) with no error and no warning', async () => {
    const file = path.join(await makeTempDir('mq-openapi-'), 'openapi.json');
    await writeFile(file, await (await fetch(`${broker.httpUrl}/openapi.json`)).text());
    const redocly = path.join(REPO_ROOT, 'node_modules', '.bin', 'redocly');
    // Exit code 1 on errors; the JSON report also counts warnings.
    const run = await promisify(execFile)(redocly, ['lint', file, '--config', path.join(REPO_ROOT, 'redocly.yaml'), '--format', 'json'], {
      cwd: REPO_ROOT,
      timeout: 60_000,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    }).catch((err: { stdout?: string; stderr?: string; message: string }) => ({ stdout: err.stdout ?? '', stderr: `${err.stderr ?? ''}\n${err.message}` }));
    let report: { totals: { errors: number; warnings: number }; problems: Array<{ ruleId: string; message: string; location: Array<{ pointer: string }> }> };
    try {
      report = JSON.parse(run.stdout) as typeof report;
    } catch {
      throw new Error(`redocly lint gave no report: ${run.stdout.slice(0, 500)}\n${run.stderr.slice(-1500)}`);
    }
    const problems = report.problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`);
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 90_000);
});
