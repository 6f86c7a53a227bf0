import { BrokerConfig } from '../config/broker-config.js';
import { Security, parseSecurityOptions } from './security.js';
import { saslAuthenticate } from '../handlers/sasl-authenticate.js';
import { newSession } from './session.js';

const parse = (config: Record<string, string>) => parseSecurityOptions(new BrokerConfig(config));

function refusal(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('expected a refusal');
}

describe('parseSecurityOptions: sasl.enabled.mechanisms', () => {
  it('SCRAM by default; PLAIN when listed, offered only to TLS connections', () => {
    expect(parse({})).toMatchObject({ mechanisms: ['SCRAM-SHA-256', 'SCRAM-SHA-512'], plain: false });
    const withPlain = parse({ 'sasl.enabled.mechanisms': 'SCRAM-SHA-512, PLAIN' });
    expect(withPlain).toMatchObject({ mechanisms: ['SCRAM-SHA-512'], plain: true });
    const sec = new Security(withPlain, {} as never, {} as never);
    expect(sec.mechanismsFor(false)).toEqual(['SCRAM-SHA-512']);
    expect(sec.mechanismsFor(true)).toEqual(['SCRAM-SHA-512', 'PLAIN']);
  });

  it('refuses an unknown mechanism, and PLAIN without a SCRAM mechanism (users are SCRAM credentials)', () => {
    expect(refusal(() => parse({ 'sasl.enabled.mechanisms': 'SCRAM-SHA-256,GSSAPI' }))).toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringMatching(/"GSSAPI" is not supported/) });
    expect(refusal(() => parse({ 'sasl.enabled.mechanisms': 'PLAIN' }))).toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringMatching(/PLAIN checks passwords against the users' SCRAM credentials/) });
  });
});

describe('delegated logins (SASL OAUTHBEARER with a token the broker gave its own client)', () => {
  const sec = new Security(parse({ 'authentication.enabled': 'true' }), {} as never, {} as never);
  const lines: string[] = [];
  const logger = { info: (_o: unknown, m: string) => lines.push(m), warn: (_o: unknown, m: string) => lines.push(m) };
  async function login(bytes: string) {
    const session = newSession('127.0.0.1');
    const ctx = { connection: { id: 1, remote: '127.0.0.1:1', session }, logger, broker: { clock: () => 0 } };
    try {
      const r = (await saslAuthenticate(sec)({ mechanism: 'OAUTHBEARER', authBytes: Buffer.from(bytes) } as never, ctx as never)) as { principal?: string };
      return { principal: r.principal, session: session.principal };
    } catch (err) {
      return { code: (err as { code: string }).code, ended: session.saslEnded };
    }
  }
  const msg = (token: string) => `n,,\u0001auth=Bearer ${token}\u0001\u0001`;

  it('logs in as the delegated principal; a revoked, unknown or malformed token is SASL_AUTHENTICATION_FAILED with one line', async () => {
    const token = await sec.delegate('User:alice');
    expect(await login(msg(token))).toEqual({ principal: 'User:alice', session: 'User:alice' });
    lines.length = 0;
    expect(await login(msg('not-a-token'))).toEqual({ code: 'SASL_AUTHENTICATION_FAILED', ended: true });
    expect(await login(`n,,auth=Bearer ${token}`)).toEqual({ code: 'SASL_AUTHENTICATION_FAILED', ended: true });
    expect(await login(`p=x,,\u0001auth=Bearer ${token}\u0001\u0001`)).toEqual({ code: 'SASL_AUTHENTICATION_FAILED', ended: true });
    sec.revokeDelegation(token);
    expect(await login(msg(token))).toEqual({ code: 'SASL_AUTHENTICATION_FAILED', ended: true });
    expect(lines).toEqual(Array(4).fill('authentication failed'));
  });
});
