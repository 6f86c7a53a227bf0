import { bytes, count, hex, rate, showBytes } from './format';

const utf8 = (s: string) => new TextEncoder().encode(s);

describe('console formatting', () => {
  it('shows bytes as text, JSON or hex; non-UTF-8 falls back to hex', () => {
    expect(showBytes(utf8('héllo'), 'text')).toBe('héllo');
    expect(showBytes(utf8('{"a":1}'), 'json')).toBe('{\n  "a": 1\n}');
    expect(showBytes(utf8('not json'), 'json')).toBe('not json');
    expect(showBytes(utf8('AB'), 'hex')).toBe('41 42');
    expect(showBytes(new Uint8Array([0xff, 0xfe]), 'text')).toBe('ff fe');
    expect(showBytes(null, 'text')).toBe('null');
    expect(hex(new Uint8Array(20), 16)).toBe('00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00\n… 4 more bytes');
  });

  it('counts, sizes and rates', () => {
    expect(count(1234567)).toBe('1,234,567');
    expect(count(null)).toBe('–');
    expect(bytes(512)).toBe('512 B');
    expect(bytes(1536)).toBe('1.5 KiB');
    expect(rate(undefined, { at: 1000, high: 5 })).toBeNull();
    expect(rate({ at: 0, high: 0 }, { at: 2000, high: 100 })).toBe(50);
  });
});
