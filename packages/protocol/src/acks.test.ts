import { describe, expect, it } from '@jest/globals';
import { parseAcks } from './acks.js';
import { isMqError } from './errors.js';

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (err) {
    return isMqError(err) ? err.code : 'not an MqError';
  }
  return undefined;
};

describe('parseAcks', () => {
  it('reads 0, 1 and all from numbers and strings', () => {
    expect([0, '0', 1, '1', -1, '-1', 'all'].map((v) => parseAcks(v))).toEqual([0, 0, 1, 1, -1, -1, -1]);
  });

  it('refuses anything else with INVALID_REQUIRED_ACKS, or the code the caller names', () => {
    for (const v of [2, -2, '2', 'ALL', '', 1.5, null, undefined, '1.0', true]) expect(codeOf(() => parseAcks(v))).toBe('INVALID_REQUIRED_ACKS');
    expect(codeOf(() => parseAcks('some', 'INVALID_ARGUMENT'))).toBe('INVALID_ARGUMENT');
  });
});
