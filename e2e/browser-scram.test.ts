/**
 * SCRAM from a real browser (issue 17): headless Chromium (Debian's package)
 * runs an esbuild bundle of @mq/client (`--platform=browser`, no stubs)
 * against a real `mq broker start` process with authentication.enabled and
 * authorization.enabled. The client's SCRAM runs on the browser's WebCrypto
 * (the same code as in Node):
 *
 * - alice (SCRAM-SHA-256) and bob (SCRAM-SHA-512) log in from the page,
 *   produce and consume on the topic their ACLs allow, and get
 *   TOPIC_AUTHORIZATION_FAILED on one they do not;
 * - a wrong password, and an unknown user, get SASL_AUTHENTICATION_FAILED
 *   (not retriable), with one audit line on the broker each;
 * - the super user creates a user from the page (the credential is derived
 *   in the browser); that user then logs in from Node.
 */
import { MqClient, type Acl, type ClientOptions } from '@mq/client';
import { freePort } from '../tools/free-port.mjs';
import { openBundlePage, type BrowserPage } from './src/browser.js';
import { cleanup, startBroker, uniqueName, type BrokerProcess } from './src/harness.js';

const ENTRY = `
import { MqClient, isMqError } from '@mq/client';
globalThis.mq = { MqClient, isMqError };
globalThis.mqReady = true;
`;

const ADMIN = { username: 'admin', password: 'admin-secret' };
const ALICE = { username: 'alice', password: 'alice: sêcret, with = signs' };
const BOB = { username: 'bob', password: 'bob-secret' };

let broker: BrokerProcess;
let browser: BrowserPage;
let adminOptions: ClientOptions;
const topic = uniqueName('bscram');
const forbidden = uniqueName('bscram-forbidden');

const allow = (principal: string, resourceType: Acl['resourceType'], resourceName: string, operation: Acl['operation']): Acl => ({ principal, resourceType, resourceName, operation, permission: 'allow' });

async function asAdmin<T>(fn: (c: MqClient) => Promise<T>): Promise<T> {
  const c = new MqClient(adminOptions);
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
}

/** Runs `fn` in the page; on failure the page's console is part of the error. */
async function inPage<A, R>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<R> {
  try {
    return (await browser.page.evaluate(fn as (arg: unknown) => Promise<unknown>, arg)) as R;
  } catch (err) {
    throw new Error(`${(err as Error).message}\npage log:\n${browser.log.join('\n')}`);
  }
}

/** The broker's JSON log lines. */
function logLines(): Array<Record<string, unknown>> {
  return broker.output.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
}

beforeAll(async () => {
  const pagePort = await freePort();
  broker = await startBroker({
    args: [
      ...[
        'authentication.enabled=true',
        'authorization.enabled=true',
        'super.users=User:admin',
        'sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512',
        `ws.allowed.origins=http://127.0.0.1:${pagePort}`,
      ].flatMap((c) => ['--config-set', c]),
    ],
  });
  // The first user from this machine without logging in (the bootstrap exception), then the others as it.
  const first = new MqClient({ bootstrap: broker.bootstrap });
  await first.admin().createUser(ADMIN.username, ADMIN.password);
  await first.close();
  adminOptions = { bootstrap: broker.bootstrap, sasl: { mechanism: 'SCRAM-SHA-512', ...ADMIN } };
  await asAdmin(async (c) => {
    await c.admin().createUser(ALICE.username, ALICE.password, { mechanisms: ['SCRAM-SHA-256'] });
    await c.admin().createUser(BOB.username, BOB.password, { mechanisms: ['SCRAM-SHA-512'] });
    await c.admin().createTopic(topic, { numPartitions: 1 });
    await c.admin().createTopic(forbidden, { numPartitions: 1 });
    await c.admin().createAcls(
      ['User:alice', 'User:bob'].flatMap((p) => [allow(p, 'topic', topic, 'write'), allow(p, 'topic', topic, 'read')]),
    );
  });
  browser = await openBundlePage(ENTRY, pagePort);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await cleanup();
});

describe('SCRAM from headless Chromium (WebCrypto) against a broker with ACLs', () => {
  it.each([
    ['SCRAM-SHA-256', 'alice', ALICE],
    ['SCRAM-SHA-512', 'bob', BOB],
  ] as const)('%s: %s logs in, produces and consumes where the ACLs allow, TOPIC_AUTHORIZATION_FAILED where they do not', async (mechanism, _name, user) => {
    const result = await inPage(
      async ({ bootstrap, topic, forbidden, sasl }) => {
        const g = globalThis as any;
        const client = new g.mq.MqClient({ bootstrap, clientId: 'chromium-scram', sasl, retry: { retries: 0 } });
        try {
          const producer = client.producer({ lingerMs: 0 });
          const sent = await producer.send(topic, { key: sasl.username, value: `from chromium as ${sasl.username} (${sasl.mechanism})` });
          const consumer = client.consumer({ autoOffsetReset: 'earliest' });
          consumer.assign([{ topic, partition: 0, offset: sent.offset }]);
          const values: string[] = [];
          const deadline = Date.now() + 15_000;
          while (values.length < 1 && Date.now() < deadline) for (const r of await consumer.poll(500)) values.push(r.value.toString());
          await consumer.close();
          let refused: { code?: string; retriable?: boolean } = {};
          try {
            await producer.send(forbidden, { value: 'not allowed' });
          } catch (err: any) {
            refused = { code: err.code, retriable: err.retriable };
          }
          return { values, refused, subtle: typeof crypto.subtle?.deriveBits === 'function', hasNodeBuffer: typeof g.Buffer !== 'undefined' };
        } finally {
          await client.close();
        }
      },
      { bootstrap: broker.bootstrap, topic, forbidden, sasl: { mechanism, ...user } },
    );
    expect(result.hasNodeBuffer).toBe(false); // a real page: no Node globals
    expect(result.subtle).toBe(true);
    expect(result.values).toEqual([`from chromium as ${user.username} (${mechanism})`]);
    expect(result.refused).toEqual({ code: 'TOPIC_AUTHORIZATION_FAILED', retriable: false });
    expect(logLines().some((l) => l.msg === 'authenticated' && l.principal === `User:${user.username}` && l.mechanism === mechanism)).toBe(true);
  });

  it.each([
    ['a wrong password', { username: 'alice', password: 'guess' }],
    ['an unknown user', { username: 'mallory', password: 'guess' }],
  ])('%s gets SASL_AUTHENTICATION_FAILED (not retriable), one audit line, nothing written', async (_what, creds) => {
    const before = logLines().filter((l) => l.msg === 'authentication failed' && l.user === creds.username).length;
    const result = await inPage(
      async ({ bootstrap, topic, sasl }) => {
        const g = globalThis as any;
        const client = new g.mq.MqClient({ bootstrap, clientId: 'chromium-scram-wrong', sasl, retry: { retries: 0 } });
        try {
          await client.producer({ lingerMs: 0 }).send(topic, { value: 'should not land' });
          return { code: 'NONE', retriable: undefined };
        } catch (err: any) {
          return { code: err.code, retriable: err.retriable };
        } finally {
          await client.close();
        }
      },
      { bootstrap: broker.bootstrap, topic, sasl: { mechanism: 'SCRAM-SHA-256', ...creds } },
    );
    expect(result).toEqual({ code: 'SASL_AUTHENTICATION_FAILED', retriable: false });
    const after = logLines().filter((l) => l.msg === 'authentication failed' && l.user === creds.username);
    expect(after.length).toBe(before + 1);
    expect(after.at(-1)!.code).toBe('SASL_AUTHENTICATION_FAILED');
    const values = await asAdmin(async (c) => {
      const consumer = c.consumer({ autoOffsetReset: 'earliest' });
      consumer.assign([{ topic, partition: 0 }]);
      const seen: string[] = [];
      for (let i = 0; i < 4; i++) for (const r of await consumer.poll(300)) seen.push(r.value!.toString());
      await consumer.close();
      return seen;
    });
    expect(values).not.toContain('should not land');
  });

  it('the super user creates a user from the page (credential derived by WebCrypto); it logs in from Node', async () => {
    const carol = { username: uniqueName('carol'), password: 'carol-pw' };
    await inPage(
      async ({ bootstrap, admin, carol }) => {
        const g = globalThis as any;
        const client = new g.mq.MqClient({ bootstrap, clientId: 'chromium-admin', sasl: { mechanism: 'SCRAM-SHA-256', ...admin } });
        try {
          await client.admin().createUser(carol.username, carol.password, { iterations: 4096 });
        } finally {
          await client.close();
        }
      },
      { bootstrap: broker.bootstrap, admin: ADMIN, carol },
    );
    for (const mechanism of ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const) {
      const c = new MqClient({ bootstrap: broker.bootstrap, sasl: { mechanism, ...carol }, retry: { retries: 0 } });
      try {
        // Logged in (carol has no ACLs: a topic she may not describe is TOPIC_AUTHORIZATION_FAILED, not a login failure).
        await expect(c.producer({ lingerMs: 0 }).send(topic, { value: 'x' })).rejects.toMatchObject({ code: 'TOPIC_AUTHORIZATION_FAILED' });
      } finally {
        await c.close();
      }
    }
    expect(logLines().filter((l) => l.msg === 'authenticated' && l.principal === `User:${carol.username}`).length).toBe(2);
  });
});
