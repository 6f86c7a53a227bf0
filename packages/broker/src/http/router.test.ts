import { Ajv2020 } from 'ajv/dist/2020.js';
import { openApiDocument } from './openapi.js';
import type { RouteSpec } from './route-spec.js';
import { httpStatusFor, Router } from './router.js';
import { registerRecordRoutes } from './routes/records.js';
import { registerSystemRoutes } from './routes/system.js';
import { registerTopicRoutes } from './routes/topics.js';
import { registerConsumerRoutes } from './routes/consumers.js';
import { registerConsoleRoutes } from './routes/console.js';
import { registerScaleoutRoutes } from './routes/scaleout.js';
import { registerTokenRoutes } from './routes/tokens.js';
import { compileValidator } from './request-validator.js';
import { isDocumented } from './route-spec.js';
import type { ConsumerInstances } from './consumers/consumer-instances.js';
import type { BrokerContext } from '../context.js';
import type { TopicBackend } from './backends/types.js';
import { registerGroupRoutes } from '../group/broker-groups.js';
import { registerClusterRoutes } from '../cluster/routes.js';
import type { ClusterNode } from '../cluster/cluster-node.js';

const noop = async () => ({ status: 200 });
const spec = (params: string[] = []): RouteSpec => ({
  operationId: `op${params.join('')}`,
  summary: 'test',
  params: Object.fromEntries(params.map((p) => [p, { schema: { type: 'string' } }])),
  responses: { 200: { description: 'ok' } },
});

type Doc = { openapi: string; paths: Record<string, Record<string, Record<string, unknown>>>; components: { schemas: Record<string, unknown>; responses: Record<string, unknown> } };

describe('router', () => {
  it('matches path parameters, decodes them, and tells 405 from 404', () => {
    const r = new Router().add('GET', '/topics/{topic}', spec(['topic']), noop).add('DELETE', '/topics/{topic}', spec(['topic']), noop);
    const m = r.match('GET', '/topics/a%2Eb');
    expect(m).toMatchObject({ kind: 'found', params: { topic: 'a.b' }, route: { pattern: '/topics/{topic}' } });
    expect(r.match('POST', '/topics/x')).toEqual({ kind: 'method-not-allowed', allowed: ['GET', 'DELETE'] });
    expect(r.match('GET', '/nope')).toEqual({ kind: 'not-found' });
  });

  it('refuses a route whose declared path parameters are not its pattern’s', () => {
    expect(() => new Router().add('GET', '/topics/{topic}', spec(), noop)).toThrow(/declares path parameters \[\], its pattern has \[topic\]/);
    expect(() => new Router().add('GET', '/topics', spec(['topic']), noop)).toThrow(/declares path parameters \[topic\]/);
  });

  it('maps error codes to statuses', () => {
    expect(httpStatusFor('UNKNOWN_TOPIC_OR_PARTITION', true)).toBe(404);
    expect(httpStatusFor('TOPIC_ALREADY_EXISTS', false)).toBe(409);
    expect(httpStatusFor('RECORD_TOO_LARGE', false)).toBe(413);
    expect(httpStatusFor('INVALID_TOPIC', false)).toBe(400);
    expect(httpStatusFor('NOT_ENOUGH_REPLICAS', true)).toBe(503);
  });
});

describe('OpenAPI document', () => {
  const router = new Router();
  const ctx = {} as BrokerContext;
  const backend = {} as TopicBackend;
  registerTopicRoutes(router, ctx, backend);
  registerRecordRoutes(router, ctx, backend);
  registerSystemRoutes(router, ctx, { view: { topicCount: () => 0, partitions: () => [] } });
  registerConsumerRoutes(router, ctx, {} as ConsumerInstances);
  registerScaleoutRoutes(router, backend);
  registerTokenRoutes(router, () => ({ token: '', expires_at: '', principal: '' }));
  registerGroupRoutes(router, ctx, () => undefined);
  registerClusterRoutes(router, {} as ClusterNode);
  registerConsoleRoutes(router, () => ({ port: 9092, tls: false, authentication: false }), '/nonexistent');
  const doc = openApiDocument(router.list(), { version: '1.2.3' }) as Doc;

  it('has one operation per documented route, and none for the console', () => {
    const registered = router
      .list()
      .filter((r) => !r.pattern.startsWith('/console'))
      .map((r) => `${r.method} ${r.pattern}`)
      .sort();
    const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    expect(documented.sort()).toEqual(registered);
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/console'))).toBe(false);
    expect(doc.openapi).toBe('3.1.0');
  });

  it('names shared schemas once and refers to them, with only the components it uses', () => {
    const text = JSON.stringify(doc);
    expect(doc.paths['/topics/{topic}']!.get!.parameters).toEqual([{ name: 'topic', in: 'path', required: true, schema: { $ref: '#/components/schemas/TopicName' } }]);
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['TopicName', 'TopicDetail', 'ProduceRecord', 'Encoding', 'Error']));
    for (const name of Object.keys(doc.components.schemas)) expect(text).toContain(`"#/components/schemas/${name}"`);
    for (const name of Object.keys(doc.components.responses)) expect(text).toContain(`"#/components/responses/${name}"`);
    // The server's own errors: 400 where there is input, 404 where a path parameter's code is UNKNOWN_TOPIC_OR_PARTITION, none of 401/403 on /health.
    expect(Object.keys(doc.paths['/topics/{topic}/partitions/{partition}/watermarks']!.get!.responses as object)).toEqual(['200', '400', '401', '403', '404', '431', '503']);
    expect(Object.keys(doc.paths['/health']!.get!.responses as object)).toEqual(['200', '431', '503']);
  });

  it('every route’s schemas compile into its validator (ajv strict mode; routes compile them on first use)', () => {
    const specs = router
      .list()
      .map((r) => r.spec)
      .filter(isDocumented);
    expect(specs.length).toBeGreaterThan(20);
    for (const spec of specs) expect(() => compileValidator(spec)).not.toThrow();
  });

  it('is valid JSON Schema 2020-12 throughout (ajv compiles every schema in it)', () => {
    const ajv = new Ajv2020({ strict: false });
    ajv.addSchema(doc, 'doc');
    for (const [p, ops] of Object.entries(doc.paths)) {
      for (const [m, op] of Object.entries(ops)) {
        for (const [status, r] of Object.entries(op.responses as Record<string, { content?: Record<string, unknown> }>)) {
          if (!r.content) continue;
          const ptr = ['paths', p, m, 'responses', status, 'content'].map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
          for (const type of Object.keys(r.content)) expect(() => ajv.getSchema(`doc#/${ptr}/${type.replace(/\//g, '~1')}/schema`)).not.toThrow();
        }
      }
    }
  });
});
