import { MqError } from '@mq/protocol/errors';
import { refusalLevel, toMqError } from './errors.js';

describe('toMqError and refusalLevel', () => {
  it('regression (issue 12): a request abandoned through an AbortSignal is ABORTED, logged at debug, not an internal error', () => {
    const ac = new AbortController();
    ac.abort();
    const e = toMqError(ac.signal.reason);
    expect(e.code).toBe('ABORTED');
    expect(refusalLevel(e)).toBe('debug');
  });

  it('a closed client connection is CONNECTION_CLOSED at debug; internal and disk errors are errors; refusals warn', () => {
    expect(refusalLevel(toMqError(new MqError('CONNECTION_CLOSED', 'gone')))).toBe('debug');
    expect(refusalLevel(toMqError(new Error('boom')))).toBe('error');
    expect(toMqError(new Error('boom'))).toMatchObject({ code: 'UNKNOWN', message: 'internal error: boom' });
    expect(refusalLevel(new MqError('STORAGE_ERROR', 'disk'))).toBe('error');
    expect(refusalLevel(new MqError('NOT_ENOUGH_REPLICAS', 'isr'))).toBe('warn');
  });
});
