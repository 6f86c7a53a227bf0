import { Writable } from 'node:stream';
import { pino } from 'pino';
import { checkExposure } from './exposure.js';

function capture() {
  const lines: Array<{ level: number; msg: string }> = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _e, cb) {
        lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
        cb();
      },
    }),
  );
  return { lines, logger };
}

describe('checkExposure', () => {
  it('refuses a listener beyond loopback without authentication unless allow.insecure', () => {
    const { logger } = capture();
    expect(() => checkExposure([{ what: 'client', host: '0.0.0.0' }], false, logger)).toThrow(/allow.insecure/);
    expect(() => checkExposure([{ what: 'client', host: '0.0.0.0', authenticated: false }], false, logger)).toThrow(/allow.insecure/);
  });

  it('lets an authenticated listener out, warning while it has no TLS; an unauthenticated one beside it still needs allow.insecure', () => {
    const plain = capture();
    checkExposure([{ what: 'client', host: '0.0.0.0', authenticated: true }], false, plain.logger);
    expect(plain.lines.some((l) => l.level === 40 && /not encrypted/.test(l.msg))).toBe(true);
    const tls = capture();
    checkExposure([{ what: 'client', host: '0.0.0.0', authenticated: true, encrypted: true }], false, tls.logger);
    expect(tls.lines.some((l) => l.level >= 40)).toBe(false);
    expect(() => checkExposure([{ what: 'client', host: '0.0.0.0', authenticated: true }, { what: 'Raft', host: '10.0.0.1' }], false, plain.logger)).toThrow(/Raft on 10.0.0.1/);
  });
});
