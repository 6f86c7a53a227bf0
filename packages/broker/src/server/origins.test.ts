import { isLoopbackHost, originVerdict, ownHttpOrigins, parseOriginList } from './origins.js';

describe('origin allow lists', () => {
  it('parses exact origins (normalised) and *; refuses anything that is not an origin', () => {
    expect(parseOriginList('k', '')).toEqual({ any: false, origins: new Set() });
    expect(parseOriginList('k', ' http://LOCALHOST:5173/ , https://a.test:443,*')).toEqual({ any: true, origins: new Set(['http://localhost:5173', 'https://a.test']) });
    for (const bad of ['localhost:5173', 'http://a.test/app', 'http://a.test?x=1', 'ftp://a.test', 'http://u:p@a.test', 'null']) {
      expect(() => parseOriginList('ws.allowed.origins', bad)).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringContaining(`ws.allowed.origins: "${bad}"`) }));
    }
  });

  it("the broker's own origins come from its host names, every loopback name when loopback, none for a wildcard", () => {
    expect(ownHttpOrigins(['127.0.0.1', '127.0.0.1'], 9080).sort()).toEqual(['http://127.0.0.1:9080', 'http://[::1]:9080', 'http://localhost:9080']);
    expect(ownHttpOrigins(['0.0.0.0', 'mq.example.com'], 9080)).toEqual(['http://mq.example.com:9080']);
    expect(ownHttpOrigins(['::', 'fd00::1'], 80)).toEqual(['http://[fd00::1]']);
  });

  it('decides a request: no Origin passes, listed or own origins pass, others (and null, repeated headers) are refused', () => {
    const list = parseOriginList('k', 'http://app.test:5173');
    const own = ownHttpOrigins(['127.0.0.1'], 9080);
    expect(originVerdict(list, own, undefined)).toBe('no-origin');
    expect(originVerdict(list, own, 'http://app.test:5173')).toBe('allowed');
    expect(originVerdict(list, own, 'http://localhost:9080')).toBe('allowed');
    expect(originVerdict(list, own, 'http://localhost:9081')).toBe('refused');
    expect(originVerdict(list, own, 'null')).toBe('refused');
    expect(originVerdict(list, own, ['http://app.test:5173', 'http://app.test:5173'])).toBe('refused');
    expect(originVerdict(parseOriginList('k', '*'), [], 'null')).toBe('allowed');
  });

  it('loopback hosts', () => {
    for (const h of ['localhost', 'LOCALHOST', 'a.localhost', '127.0.0.1', '127.1.2.3', '::1', '[::1]', '::ffff:127.0.0.1']) expect(isLoopbackHost(h)).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', 'example.com', '128.0.0.1', 'localhost.example.com']) expect(isLoopbackHost(h)).toBe(false);
  });
});
