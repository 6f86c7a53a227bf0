/** Node's CRC-32C: the `@node-rs/crc32` addon (hardware CRC) when it loads, else the pure-JS one. */
import { createRequire } from 'node:module';
import { crc32cJs } from './crc32c-js.js';

export type Crc32c = (data: Uint8Array, initial?: number) => number;

/** `load` is how the addon is required (a test passes one that fails, as on a platform without a prebuilt addon). */
export function loadCrc32c(load: (id: string) => unknown = createRequire(import.meta.url)): Crc32c {
  try {
    return (load('@node-rs/crc32') as { crc32c: Crc32c }).crc32c;
  } catch {
    return crc32cJs;
  }
}
