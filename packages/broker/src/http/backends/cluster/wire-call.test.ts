import { errorNumber, MqError } from '@mq/protocol/errors';
import { NO_RESPONSE } from '../../../handlers/types.js';
import type { RequestContext } from '../../../context.js';
import { fakeDeps, fakeMetadata, flush } from '../../../test-support/http-backend-fakes.js';
import { httpRequestContexts, wireCall, wireFailure } from './wire-call.js';

describe('HTTP backend: the one request path', () => {
  const o = { timeoutMs: 1000, signal: new AbortController().signal };

  function setup() {
    const events: string[] = [];
    const contexts: RequestContext[] = [];
    const { d, time } = fakeDeps(fakeMetadata('t', [1]), {
      handlers: {
        listOffsets: async (req: unknown, ctx: RequestContext) => {
          contexts.push(ctx);
          events.push(`local ${JSON.stringify(req)}`);
          return { topics: [] };
        },
        deleteTopics: async () => NO_RESPONSE,
      } as never,
      peers: {
        request: async (id: number, body: string) => {
          events.push(`peer ${id} ${body}`);
          return { topics: [] };
        },
      },
      authorize: (body, payload) => {
        events.push(`authorize ${body}`);
        if ((payload as { topics?: Array<{ name: string }> }).topics?.[0]?.name === 'secret') throw new MqError('TOPIC_AUTHORIZATION_FAILED', 'no');
      },
      quotas: {
        before: (body, _req, ctx) => {
          events.push(`before ${body}`);
          ctx.throttleMs = 250;
        },
        after: (body) => void events.push(`after ${body}`),
      },
    });
    const call = wireCall(1, d.c, d.timers, httpRequestContexts(d.c));
    return { call, events, contexts, time };
  }

  it("authorizes and records quotas as the HTTP caller, then answers from this broker's handler or the peer's", async () => {
    const { call, events, contexts, time } = setup();
    const local = call(1, 'listOffsets', { topics: [{ name: 't' }] } as never, o);
    await flush();
    // Over the quota: answered 250 ms later.
    let answered = false;
    void local.then(() => (answered = true));
    time.advance(249);
    await flush();
    expect(answered).toBe(false);
    time.advance(1);
    await local;
    const remote = call(2, 'listOffsets', { topics: [{ name: 't' }] } as never, o);
    await flush();
    time.advance(250);
    await remote;
    expect(events).toEqual(['authorize listOffsets', 'before listOffsets', 'local {"topics":[{"name":"t"}]}', 'after listOffsets', 'authorize listOffsets', 'before listOffsets', 'peer 2 listOffsets', 'after listOffsets']);
    expect(contexts[0]!.connection).toMatchObject({ id: -1, remote: 'http', clientId: 'http-api' });
  });

  it('sends nothing anywhere when the caller is refused', async () => {
    const { call, events } = setup();
    await expect(call(2, 'listOffsets', { topics: [{ name: 'secret' }] } as never, o)).rejects.toMatchObject({ code: 'TOPIC_AUTHORIZATION_FAILED' });
    expect(events).toEqual(['authorize listOffsets']);
  });

  it('says so when this process does not serve the request, or its handler does not answer', async () => {
    const { call } = setup();
    await expect(call(1, 'createTopics', {} as never, o)).rejects.toMatchObject({ code: 'INVALID_REQUEST', message: "this process does not serve createTopics (it is not a broker); use a broker's HTTP port" });
    await expect(call(1, 'deleteTopics', {} as never, o)).rejects.toMatchObject({ code: 'UNKNOWN', message: 'the deleteTopics handler did not answer' });
  });

  it('turns an entry error code into its MqError', () => {
    expect(wireFailure(0, '', 'Produce')).toBeUndefined();
    expect(wireFailure(undefined, undefined, 'Produce')).toBeUndefined();
    const e = wireFailure(errorNumber('UNKNOWN_TOPIC_OR_PARTITION'), '', 'Fetch')!;
    expect([e.code, e.message, e.retriable]).toEqual(['UNKNOWN_TOPIC_OR_PARTITION', 'Fetch failed with UNKNOWN_TOPIC_OR_PARTITION', false]);
  });
});
