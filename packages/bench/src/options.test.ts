import { isMqError } from '@mq/protocol/errors';
import { DEFAULT_RECORDS, DEFAULT_WINDOW, parseAcks, parseConsumeOptions, parseE2eOptions, parseProduceOptions } from './options.js';

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return isMqError(err) ? err.code : 'not an MqError';
  }
  return undefined;
}

describe('parseProduceOptions', () => {
  it('fills defaults and keeps the exact parameters', () => {
    const o = parseProduceOptions({ topic: 't1' });
    expect(o).toMatchObject({ topic: 't1', records: DEFAULT_RECORDS, duration: null, size: 100, partitions: 1, acks: 1, window: DEFAULT_WINDOW, rate: null, keys: { kind: 'none' } });
  });

  it('accepts CLI strings and acks=all', () => {
    const o = parseProduceOptions({ records: '5' as unknown as number, acks: 'all', keys: 'uniform:7', compression: 'lz4' });
    expect(o.records).toBe(5);
    expect(o.acks).toBe(-1);
    expect(o.keys).toEqual({ kind: 'uniform', count: 7 });
    expect(o.compression).toBe('lz4');
  });

  it('rejects contradictions and bad values with INVALID_ARGUMENT', () => {
    expect(code(() => parseProduceOptions({ records: 10, duration: 5 }))).toBe('INVALID_ARGUMENT');
    expect(code(() => parseProduceOptions({ size: 0 }))).toBe('INVALID_ARGUMENT');
    expect(code(() => parseProduceOptions({ keys: 'uniform:0' }))).toBe('INVALID_ARGUMENT');
    expect(code(() => parseProduceOptions({ keys: 'zipf' }))).toBe('INVALID_ARGUMENT');
    expect(code(() => parseProduceOptions({ compression: 'brotli' }))).toBe('INVALID_ARGUMENT');
    expect(code(() => parseProduceOptions({ topic: 'a b' }))).toBe('INVALID_ARGUMENT');
    expect(code(() => parseAcks('2'))).toBe('INVALID_ARGUMENT');
  });

  it('gives a duration run no record limit', () => {
    const o = parseProduceOptions({ duration: 2 });
    expect(o.records).toBeNull();
    expect(o.duration).toBe(2);
  });
});

describe('parseConsumeOptions / parseE2eOptions', () => {
  it('needs a group for several consumers', () => {
    expect(code(() => parseConsumeOptions({ consumers: 3 }))).toBe('INVALID_ARGUMENT');
    expect(parseConsumeOptions({ consumers: 3, group: true }).group).toMatch(/^bench-consume-group-/);
  });

  it('reading an existing topic needs its name', () => {
    expect(code(() => parseConsumeOptions({ prepare: false }))).toBe('INVALID_ARGUMENT');
    expect(parseConsumeOptions({ prepare: false, topic: 'x', records: 3 })).toMatchObject({ prepare: false, topic: 'x', records: 3 });
  });

  it('derives the e2e record count from rate and duration and needs room for the stamp', () => {
    expect(parseE2eOptions({ rate: 500, duration: 3 }).records).toBe(1500);
    expect(code(() => parseE2eOptions({ size: 4 }))).toBe('INVALID_ARGUMENT');
  });
});
