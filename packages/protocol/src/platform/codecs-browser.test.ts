import { gzipSync } from 'node:zlib';
import { checkCodecAvailable, loadSyncCodec, loadZstdCodec } from './codecs-browser.js';

describe('browser codecs', () => {
  it('refuse every codec but none with UNSUPPORTED_COMPRESSION, saying what to do', () => {
    expect(() => checkCodecAvailable('none')).not.toThrow();
    for (const codec of ['gzip', 'snappy', 'lz4', 'zstd']) {
      expect(() => checkCodecAvailable(codec)).toThrow(expect.objectContaining({ code: 'UNSUPPORTED_COMPRESSION', retriable: false }));
    }
    expect(() => loadSyncCodec('gzip')).toThrow(/gzip compression is not available in browsers \(produce with compression: 'none'/);
    expect(() => loadZstdCodec()).toThrow(expect.objectContaining({ code: 'UNSUPPORTED_COMPRESSION' }));
  });

  it('the Node build of the same seam has them all', async () => {
    const node = await import('./node.js');
    for (const codec of ['none', 'gzip', 'snappy', 'lz4', 'zstd']) expect(() => node.checkCodecAvailable(codec)).not.toThrow();
    const gz = node.loadSyncCodec('gzip');
    expect(gz.decompress(gzipSync(Buffer.from('x')), 10).toString()).toBe('x');
  });
});
