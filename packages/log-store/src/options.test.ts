import { DEFAULT_INDEX_INTERVAL_BYTES, DEFAULT_SEGMENT_BYTES, parseLogOptions } from './options.js';

test('defaults, a frozen copy, and interval defaults', () => {
  const input = { flush: { policy: 'interval' as const } };
  const o = parseLogOptions(input);
  expect(o.segmentBytes).toBe(DEFAULT_SEGMENT_BYTES);
  expect(o.indexIntervalBytes).toBe(DEFAULT_INDEX_INTERVAL_BYTES);
  expect(o.flush).toEqual({ policy: 'interval', intervalMs: 1000, intervalBytes: -1 });
  expect(o.retentionBytes).toBe(-1);
  expect(Object.isFrozen(o)).toBe(true);
  expect(parseLogOptions().flush).toEqual({ policy: 'os' });
});

test.each([
  [{ segmentBytes: 100 }, /segmentBytes/],
  [{ segmentBytes: 2 ** 31 }, /segmentBytes/],
  [{ retentionMs: -2 }, /retentionMs/],
  [{ maxBatchBytes: 1.5 }, /maxBatchBytes/],
  [{ flush: { policy: 'interval', intervalMs: 0 } }, /intervalMs/],
  [{ flush: { policy: 'never' } }, /unknown flush policy/],
])('rejects %j', (input, message) => {
  expect(() => parseLogOptions(input as never)).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringMatching(message) }));
});
