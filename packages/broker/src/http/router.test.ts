import { CONSUMER_OPERATIONS, openApiDocument, OPERATIONS } from './openapi.js';
import { httpStatusFor, Router } from './router.js';
import { registerRecordRoutes } from './routes/records.js';
import { registerSystemRoutes } from './routes/system.js';
import { registerTopicRoutes } from './routes/topics.js';
import { registerConsumerRoutes } from './routes/consumers.js';
import type { ConsumerInstances } from './consumers/consumer-instances.js';
import type { BrokerContext } from '../context.js';
import type { TopicBackend } from './backends/types.js';

const noop = async () => ({ status: 200 });

describe('router', () => {
  it('matches path parameters, decodes them, and tells 405 from 404', () => {
    const r = new Router().add('GET', '/topics/{topic}', noop).add('DELETE', '/topics/{topic}', noop);
    const m = r.match('GET', '/topics/a%2Eb');
    expect(m).toMatchObject({ kind: 'found', params: { topic: 'a.b' } });
    expect(r.match('POST', '/topics/x')).toEqual({ kind: 'method-not-allowed', allowed: ['GET', 'DELETE'] });
    expect(r.match('GET', '/nope')).toEqual({ kind: 'not-found' });
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
  it('describes exactly the routes the broker registers', () => {
    const router = new Router();
    const ctx = {} as BrokerContext;
    const backend = {} as TopicBackend;
    registerTopicRoutes(router, ctx, backend);
    registerRecordRoutes(router, ctx, backend);
    registerSystemRoutes(router, ctx, { view: { topicCount: () => 0, partitions: () => [] } });
    registerConsumerRoutes(router, ctx, {} as ConsumerInstances);
    const registered = router.list().map((r) => `${r.method} ${r.pattern}`).sort();
    expect(registered).toEqual([...Object.keys(OPERATIONS), ...Object.keys(CONSUMER_OPERATIONS)].sort());
    const doc = openApiDocument(router) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths['/topics/{topic}/records']!)).toEqual(['post']);
    expect(JSON.stringify(doc)).toContain('base64');
  });

  it('lists a route added later with a minimal entry', () => {
    const router = new Router().add('GET', '/widgets', noop);
    const doc = openApiDocument(router) as { paths: Record<string, Record<string, { summary: string }>> };
    expect(doc.paths['/widgets']!.get!.summary).toBe('GET /widgets');
  });
});
