import { BrokerConfig } from '../config/broker-config.js';
import { Security, parseSecurityOptions } from './security.js';

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
