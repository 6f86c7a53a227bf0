/**
 * The browser codecs, run on Node (which has the same CompressionStream and
 * DecompressionStream globals); e2e/browser-client runs them in Chromium.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { checkCodecAvailable, loadAsyncCodec, loadSyncCodec } from './codecs-browser.js';

describe('browser codecs', () => {
  it('refuse snappy, lz4 and zstd with UNSUPPORTED_COMPRESSION, saying what to do', () => {
    expect(() => checkCodecAvailable('none')).not.toThrow();
    expect(() => checkCodecAvailable('gzip')).not.toThrow();
    for (const codec of ['snappy', 'lz4', 'zstd']) {
      expect(() => checkCodecAvailable(codec)).toThrow(expect.objectContaining({ code: 'UNSUPPORTED_COMPRESSION', retriable: false }));
    }
    expect(() => loadSyncCodec('lz4')).toThrow(/lz4 compression is not available in browsers \(produce with compression: 'none' or 'gzip'/);
    expect(() => loadSyncCodec('gzip')).toThrow(/only asynchronously/);
    expect(() => loadAsyncCodec('zstd')).toThrow(expect.objectContaining({ code: 'UNSUPPORTED_COMPRESSION' }));
    expect(loadAsyncCodec('snappy')).toBeUndefined();
  });

  it('gzip through the streams: what zlib reads, and reads what zlib writes', async () => {
    const gzip = loadAsyncCodec('gzip')!;
    const data = Buffer.from('mq '.repeat(10_000));
    const packed = await gzip.compress(data);
    expect(packed.length).toBeLessThan(data.length / 10);
    expect(gunzipSync(packed).equals(data)).toBe(true);
    const unpacked = await gzip.decompress(gzipSync(data), 1 << 20);
    expect(Buffer.from(unpacked).equals(data)).toBe(true);
  });

  it('gzip stops decompressing past the limit (a compression bomb) and fails on corrupt data', async () => {
    const gzip = loadAsyncCodec('gzip')!;
    const bomb = gzipSync(Buffer.alloc(8 << 20));
    await expect(gzip.decompress(bomb, 1 << 20)).rejects.toMatchObject({ code: 'ERR_BUFFER_TOO_LARGE' });
    await expect(gzip.decompress(Buffer.from('not gzip at all'), 1 << 20)).rejects.toThrow();
  });

  it('the Node build of the same seam has every codec', async () => {
    const node = await import('./node.js');
    for (const codec of ['none', 'gzip', 'snappy', 'lz4', 'zstd']) expect(() => node.checkCodecAvailable(codec)).not.toThrow();
    const gz = node.loadSyncCodec('gzip');
    expect(gz.decompress(gzipSync(Buffer.from('x')), 10).toString()).toBe('x');
    expect(node.loadAsyncCodec('gzip')).toBeUndefined(); // synchronous on Node
  });
});
