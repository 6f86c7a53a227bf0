import { crc32c as nativeCrc32c } from '@node-rs/crc32';
import { crc32cJs } from './crc32c-js.js';
import { crc32c } from './node.js';
import { loadCrc32c } from './crc32c-node.js';

describe('crc32cJs', () => {
  it('matches the CRC-32C check value and the RFC 3720 vectors', () => {
    expect(crc32cJs(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32cJs(new Uint8Array(32))).toBe(0x8a9136aa);
    expect(crc32cJs(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43);
    expect(crc32cJs(Uint8Array.from({ length: 32 }, (_, i) => i))).toBe(0x46dd794e);
    expect(crc32cJs(new Uint8Array(0))).toBe(0);
  });

  it('gives the native addon answer for every length and alignment', () => {
    const data = Buffer.alloc(4096);
    for (let i = 0; i < data.length; i++) data[i] = (i * 2654435761) >>> 24;
    for (const len of [1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4095]) {
      for (const off of [0, 1, 3]) {
        const slice = data.subarray(off, off + len);
        expect(crc32cJs(slice)).toBe(nativeCrc32c(slice) >>> 0);
      }
    }
  });

  it('continues from an initial value like the addon', () => {
    const a = Buffer.from('hello, ');
    const b = Buffer.from('world');
    expect(crc32cJs(b, crc32cJs(a))).toBe(crc32cJs(Buffer.concat([a, b])));
    expect(crc32cJs(b, crc32cJs(a))).toBe(nativeCrc32c(b, nativeCrc32c(a)) >>> 0);
  });

  it('agrees with the node platform crc32c (the addon, or this one where the addon does not load)', () => {
    const data = Buffer.from('mq batch bytes');
    expect(crc32c(data)).toBe(crc32cJs(data));
  });

  it('is what Node uses where the addon does not load', () => {
    const fallback = loadCrc32c(() => {
      throw new Error("Cannot find module '@node-rs/crc32-linux-arm-musleabihf'");
    });
    expect(fallback).toBe(crc32cJs);
    expect(loadCrc32c()).not.toBe(crc32cJs); // here the addon loads
  });
});
