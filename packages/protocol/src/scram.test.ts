import { createHash, createHmac, pbkdf2Sync } from 'node:crypto';
import { MqError } from './errors.js';
import { SCRAM_SHA1_FOR_TESTS, ScramClient, ScramServer, decodeSaslName, encodeSaslName, scramCredential, unknownUserCredentials, type ScramCredential } from './scram.js';

describe('SCRAM', () => {
  it('RFC 7677 section 3: the SCRAM-SHA-256 example exchange, byte for byte (WebCrypto client)', async () => {
    const client = new ScramClient('SCRAM-SHA-256', 'user', 'pencil', { nonce: 'rOprNGfwEbeRWgbNEkqO' });
    expect(client.first()).toBe('n,,n=user,r=rOprNGfwEbeRWgbNEkqO');
    const serverFirst = 'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096';
    expect(await client.final(serverFirst)).toBe('c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=');
    expect(() => client.verify('v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=')).not.toThrow();

    // The broker's side with the credential stored for that password and salt answers the same messages.
    const cred = await scramCredential('SCRAM-SHA-256', 'pencil', { salt: Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64'), iterations: 4096 });
    const server = new ScramServer('SCRAM-SHA-256', (u) => (u === 'user' ? cred : undefined), { nonce: '%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0', unknownUser: unknownUserCredentials('SCRAM-SHA-256') });
    expect(server.first('n,,n=user,r=rOprNGfwEbeRWgbNEkqO')).toBe(serverFirst);
    const { serverFinal, user } = server.final('c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=');
    expect(serverFinal).toBe('v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=');
    expect(user).toBe('user');
  });

  it('RFC 5802 section 5: the SCRAM-SHA-1 example exchange (the same code with SHA-1)', async () => {
    const client = new ScramClient(SCRAM_SHA1_FOR_TESTS, 'user', 'pencil', { nonce: 'fyko+d2lbbFgONRv9qkxdawL' });
    expect(client.first()).toBe('n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL');
    expect(await client.final('r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096')).toBe(
      'c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=',
    );
    expect(() => client.verify('v=rmF9pqV8S7suAoZWja4dJRkFsKQ=')).not.toThrow();
    expect(() => client.verify('v=rmF9pqV8S7suAoZWja4dJRkFsKA=')).toThrow(/signature is wrong/);
  });

  async function exchange(cred: ScramCredential | undefined, user: string, password: string, mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512') {
    const client = new ScramClient(mechanism, user, password);
    const server = new ScramServer(mechanism, (u) => (u === 'alice' ? cred : undefined), { unknownUser: unknownUserCredentials(mechanism) });
    const serverFirst = server.first(client.first());
    const clientFinal = await client.final(serverFirst);
    const { serverFinal } = server.final(clientFinal);
    client.verify(serverFinal);
    return server.username;
  }

  it.each(['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const)('%s: the right password logs in, a wrong one or an unknown user fails with the same error', async (m) => {
    const cred = await scramCredential(m, 'sêcret, with = signs', { iterations: 4096 });
    expect(cred.storedKey.length).toBe(m === 'SCRAM-SHA-256' ? 32 : 64);
    expect(await exchange(cred, 'alice', 'sêcret, with = signs', m)).toBe('alice');
    const wrong = await captureError(() => exchange(cred, 'alice', 'guess', m));
    const unknown = await captureError(() => exchange(cred, 'mallory', 'guess', m));
    expect(wrong.code).toBe('SASL_AUTHENTICATION_FAILED');
    expect(unknown.code).toBe('SASL_AUTHENTICATION_FAILED');
    expect(unknown.message).toBe(wrong.message);
  });

  it.each(['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const)('%s: the WebCrypto derivation gives the keys node:crypto gives', async (m) => {
    const hash = m === 'SCRAM-SHA-256' ? 'sha256' : 'sha512';
    const salt = Buffer.from('a salt of some length');
    const cred = await scramCredential(m, 'pässword', { salt, iterations: 4096 });
    const sp = pbkdf2Sync(Buffer.from('pässword', 'utf8'), salt, 4096, m === 'SCRAM-SHA-256' ? 32 : 64, hash);
    expect(Buffer.from(cred.storedKey)).toEqual(createHash(hash).update(createHmac(hash, sp).update('Client Key').digest()).digest());
    expect(Buffer.from(cred.serverKey)).toEqual(createHmac(hash, sp).update('Server Key').digest());
  });

  it('a credential of another mechanism does not log in', async () => {
    const cred = await scramCredential('SCRAM-SHA-512', 'pw', { iterations: 4096 });
    expect((await captureError(() => exchange(cred, 'alice', 'pw', 'SCRAM-SHA-256'))).code).toBe('SASL_AUTHENTICATION_FAILED');
  });

  it('an unknown user gets a stable salt (no tell that it does not exist) and the same iterations as the default', () => {
    const unknown = unknownUserCredentials('SCRAM-SHA-256');
    const s1 = new ScramServer('SCRAM-SHA-256', () => undefined, { unknownUser: unknown });
    const s2 = new ScramServer('SCRAM-SHA-256', () => undefined, { unknownUser: unknown });
    const salt = (m: string) => /s=([^,]+)/.exec(m)![1];
    expect(salt(s1.first('n,,n=ghost,r=abc'))).toBe(salt(s2.first('n,,n=ghost,r=def')));
  });

  it('a replayed client-final message fails against a fresh server nonce', async () => {
    const cred = await scramCredential('SCRAM-SHA-256', 'pw', { iterations: 4096 });
    const lookup = () => cred;
    const unknownUser = unknownUserCredentials('SCRAM-SHA-256');
    const client = new ScramClient('SCRAM-SHA-256', 'alice', 'pw');
    const clientFirst = client.first();
    const first = new ScramServer('SCRAM-SHA-256', lookup, { unknownUser });
    const clientFinal = await client.final(first.first(clientFirst));
    first.final(clientFinal);
    const again = new ScramServer('SCRAM-SHA-256', lookup, { unknownUser });
    again.first(clientFirst);
    expect(captureError(() => again.final(clientFinal)).message).toMatch(/nonce mismatch/);
  });

  it("librdkafka's client-final (its client nonce again before the whole nonce, as kcat sends it) logs in; a replay of it does not", async () => {
    const cred = await scramCredential('SCRAM-SHA-256', 'pw', { iterations: 4096 });
    const lookup = () => cred;
    const unknownUser = unknownUserCredentials('SCRAM-SHA-256');
    const cnonce = 'librdkafkaNonce';
    const clientFirst = `n,,n=alice,r=${cnonce}`;
    /** The client-final librdkafka 2.x builds: c=biws,r=<cnonce><server's r>, with the proof over that message. */
    const rdkafkaFinal = (serverFirst: string) => {
      const withoutProof = `c=biws,r=${cnonce}${/^r=([^,]+)/.exec(serverFirst)![1]}`;
      const sp = pbkdf2Sync('pw', cred.salt, 4096, 32, 'sha256');
      const clientKey = createHmac('sha256', sp).update('Client Key').digest();
      const storedKey = createHash('sha256').update(clientKey).digest();
      const signature = createHmac('sha256', storedKey).update(`n=alice,r=${cnonce},${serverFirst},${withoutProof}`).digest();
      return `${withoutProof},p=${Buffer.from(clientKey.map((b, i) => b ^ signature[i]!)).toString('base64')}`;
    };
    const server = new ScramServer('SCRAM-SHA-256', lookup, { unknownUser });
    const clientFinal = rdkafkaFinal(server.first(clientFirst));
    expect(server.final(clientFinal).user).toBe('alice');
    const again = new ScramServer('SCRAM-SHA-256', lookup, { unknownUser });
    again.first(clientFirst);
    expect(captureError(() => again.final(clientFinal)).message).toMatch(/nonce mismatch/);
  });

  it('refuses malformed messages, channel binding, out-of-order steps and low iteration counts', async () => {
    const unknownUser = unknownUserCredentials('SCRAM-SHA-256');
    const s = () => new ScramServer('SCRAM-SHA-256', () => undefined, { unknownUser });
    expect(captureError(() => s().first('p=tls-unique,,n=u,r=x')).message).toMatch(/channel binding/);
    expect(captureError(() => s().first('garbage')).code).toBe('SASL_AUTHENTICATION_FAILED');
    expect(captureError(() => s().first('n,,n=u,r=a,b')).code).toBe('SASL_AUTHENTICATION_FAILED');
    expect(captureError(() => s().first('n,,n=bad=name,r=abc')).code).toBe('SASL_AUTHENTICATION_FAILED');
    expect(captureError(() => s().first(Buffer.alloc(5000, 0x61))).message).toMatch(/longer than/);
    expect(captureError(() => s().final('c=biws,r=x,p=AAAA')).code).toBe('ILLEGAL_SASL_STATE');
    const twice = s();
    twice.first('n,,n=u,r=abc');
    expect(captureError(() => twice.first('n,,n=u,r=abc')).code).toBe('ILLEGAL_SASL_STATE');
    const client = new ScramClient('SCRAM-SHA-256', 'u', 'p', { nonce: 'abc' });
    client.first();
    expect((await captureError(() => client.final('r=abcdef,s=AAAA,i=1'))).message).toMatch(/iterations/);
    expect((await captureError(() => client.final('r=zzz,s=AAAA,i=4096'))).message).toMatch(/nonce/);
    expect((await captureError(() => client.final('r=abcdef,s=A,i=4096'))).message).toMatch(/base64/);
    await expect(scramCredential('SCRAM-SHA-256', 'p', { iterations: 100 })).rejects.toThrow(/iterations/);
  });

  it('escapes , and = in user names', () => {
    expect(encodeSaslName('a,b=c')).toBe('a=2Cb=3Dc');
    expect(decodeSaslName('a=2Cb=3Dc')).toBe('a,b=c');
  });
});

function captureError(fn: () => Promise<unknown>): Promise<MqError>;
function captureError(fn: () => unknown): MqError;
function captureError(fn: () => unknown): MqError | Promise<MqError> {
  let result: unknown;
  try {
    result = fn();
  } catch (err) {
    return err as MqError;
  }
  if (result instanceof Promise) {
    return result.then(
      () => {
        throw new Error('expected a rejection');
      },
      (err: unknown) => err as MqError,
    );
  }
  throw new Error('expected a throw');
}
