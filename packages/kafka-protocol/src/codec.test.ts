import fc from 'fast-check';
import { APIS, ApiVersionsApi, MetadataApi, ProduceApi } from './gen/messages.js';
import { decodeRequest, decodeResponse, encodeRequest, encodeResponse } from './codec.js';
import { FrameSplitter } from './frames.js';
import { MalformedKafkaError, Reader } from './reader.js';
import { Writer, ZERO_COPY_MIN_BYTES } from './writer.js';

const noUnsupported = () => {
  throw new Error('unexpected unsupported');
};

describe('generated codec', () => {
  it('round-trips every request and response of every API at every served version (defaults)', () => {
    for (const api of APIS) {
      for (let v = api.minVersion; v <= api.maxVersion; v++) {
        const frame = encodeRequest(api, v, 7, 'c', {});
        const decoded = decodeRequest(frame.subarray(4), noUnsupported)!;
        expect(decoded.header).toEqual({ apiKey: api.key, apiVersion: v, correlationId: 7, clientId: 'c' });
        expect(decodeRequest(encodeRequest(api, v, 7, 'c', decoded.body as never).subarray(4), noUnsupported)!.body).toEqual(decoded.body);
        const res = Buffer.concat(encodeResponse(api, v, 9, {}));
        const back = decodeResponse(api, v, res.subarray(4));
        expect(back.correlationId).toBe(9);
        expect(decodeResponse(api, v, Buffer.concat(encodeResponse(api, v, 9, back.body as never)).subarray(4)).body).toEqual(back.body);
      }
    }
  });

  it('writes a Metadata v9 request (flexible: compact arrays, tagged fields) as Kafka does', () => {
    const frame = encodeRequest(MetadataApi, 9, 1, 'k', { topics: [{ name: 'ab' }], allowAutoTopicCreation: true, includeTopicAuthorizedOperations: false });
    // size | key 3 | v9 | corr 1 | client id "k" (int16 length even in header v2) | header tags 0 | topics: 1+1, name 2+1 "ab", topic tags 0 | auto true | cluster ops false | topic ops false | tags 0
    expect(frame.toString('hex')).toBe(
      ['00000015', '0003', '0009', '00000001', '0001', '6b', '00', '02', '03', '6162', '00', '01', '00', '00', '00'].join(''),
    );
    const back = decodeRequest(frame.subarray(4), noUnsupported)!;
    expect(back.body).toEqual({ topics: [{ name: 'ab' }], allowAutoTopicCreation: true, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false });
  });

  it('keeps null distinct from empty where the version allows null (Metadata v1+: all topics)', () => {
    const all = decodeRequest(encodeRequest(MetadataApi, 1, 1, null, { topics: null }).subarray(4), noUnsupported)!.body as { topics: unknown };
    const none = decodeRequest(encodeRequest(MetadataApi, 1, 1, null, { topics: [] }).subarray(4), noUnsupported)!.body as { topics: unknown };
    expect(all.topics).toBeNull();
    expect(none.topics).toEqual([]);
  });

  it('answers ApiVersions with a v0 response header even at v3 (so any client reads it)', () => {
    const res = Buffer.concat(encodeResponse(ApiVersionsApi, 3, 5, { errorCode: 0, apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 3 }] }));
    // size | corr 5 | error 0 | compact array of 1 | key, min, max, tags | throttle | tags
    expect(res.subarray(4).toString('hex')).toBe('00000005' + '0000' + '02' + '0012' + '0000' + '0003' + '00' + '00000000' + '00');
  });

  it('references large record batches instead of copying them (zero copy), and copies small ones', () => {
    const big = Buffer.alloc(ZERO_COPY_MIN_BYTES, 7);
    const small = Buffer.alloc(ZERO_COPY_MIN_BYTES - 1, 8);
    const parts = encodeResponse(ProduceApi, 8, 1, {});
    const w = new Writer();
    w.int32(1);
    w.nullableBytes(big, false);
    w.nullableBytes(small, false);
    const out = w.finish();
    expect(out.some((p) => p === big)).toBe(true);
    expect(out.some((p) => p === small)).toBe(false);
    expect(Buffer.concat(out).length).toBe(4 + 4 + big.length + 4 + small.length);
    expect(parts.length).toBe(1);
  });

  it('reads the request header of an unknown API and reports it, without reading the body', () => {
    const frame = Buffer.from('7fff0001000000090000deadbeef', 'hex');
    let seen: unknown;
    expect(decodeRequest(frame, (h) => (seen = h))).toBeUndefined();
    expect(seen).toEqual({ apiKey: 0x7fff, apiVersion: 1, correlationId: 9, clientId: '' });
  });

  it('refuses bytes left after a body', () => {
    const frame = Buffer.concat([encodeRequest(ApiVersionsApi, 0, 1, 'x', {}).subarray(4), Buffer.from([0])]);
    expect(() => decodeRequest(frame, noUnsupported)).toThrow(MalformedKafkaError);
  });

  it('throws only MalformedKafkaError on any random request frame (lying lengths, truncation)', () => {
    const keys = APIS.map((a) => a.key);
    fc.assert(
      fc.property(fc.constantFrom(...keys), fc.integer({ min: 0, max: 12 }), fc.uint8Array({ maxLength: 200 }), (key, version, body) => {
        const head = Buffer.alloc(10);
        head.writeInt16BE(key, 0);
        head.writeInt16BE(version, 2);
        head.writeInt32BE(1, 4);
        head.writeInt16BE(-1, 8);
        try {
          decodeRequest(Buffer.concat([head, Buffer.from(body)]), () => undefined);
        } catch (err) {
          expect(err).toBeInstanceOf(MalformedKafkaError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('Reader', () => {
  it('refuses an array longer than the bytes left (no huge allocation from a lying length)', () => {
    const b = Buffer.from('7fffffff', 'hex');
    expect(() => new Reader(b).arrayLength(false)).toThrow(MalformedKafkaError);
  });

  it('refuses an int64 beyond 2^53', () => {
    expect(() => new Reader(Buffer.from('7fffffffffffffff', 'hex')).int64()).toThrow(MalformedKafkaError);
    expect(new Reader(Buffer.from('ffffffffffffffff', 'hex')).int64()).toBe(-1);
  });

  it('refuses a varint longer than 5 bytes', () => {
    expect(() => new Reader(Buffer.from('ffffffffff01', 'hex')).uvarint()).toThrow(MalformedKafkaError);
  });
});

describe('FrameSplitter', () => {
  it('cuts frames out of chunks split anywhere', () => {
    const frames = [Buffer.from('a'), Buffer.alloc(0), Buffer.from('hello')];
    const stream = Buffer.concat(frames.map((f) => Buffer.concat([Buffer.from([0, 0, 0, f.length]), f])));
    for (let cut = 0; cut <= stream.length; cut++) {
      const s = new FrameSplitter(100);
      const got = [...s.push(stream.subarray(0, cut)), ...s.push(stream.subarray(cut))];
      expect(got.map((g) => g.toString())).toEqual(['a', '', 'hello']);
      expect(s.pendingBytes).toBe(0);
    }
  });

  it('refuses a frame size above the bound or negative', () => {
    expect(() => new FrameSplitter(100).push(Buffer.from('00000065', 'hex'))).toThrow(MalformedKafkaError);
    expect(() => new FrameSplitter(100).push(Buffer.from('ffffffff', 'hex'))).toThrow(MalformedKafkaError);
  });
});
