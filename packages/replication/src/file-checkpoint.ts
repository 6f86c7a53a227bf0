/**
 * A partition's high watermark in a small file beside its log, written
 * atomically (temp file, fsync, rename, fsync of the directory) so a crash
 * leaves either the old or the new value, never a torn one.
 */
import { open, readFile, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { MqError } from '@mq/protocol/errors';
import type { HighWatermarkCheckpoint } from './types.js';

const VERSION = 1;

export class FileCheckpoint implements HighWatermarkCheckpoint {
  readonly path: string;

  constructor(path: string) {
    this.path = path;
  }

  async load(): Promise<number | undefined> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new MqError('STORAGE_ERROR', `cannot read the high watermark checkpoint ${this.path}`, { cause: err });
    }
    const [version, value] = text.trim().split(/\s+/);
    const hw = Number(value);
    if (Number(version) !== VERSION || !Number.isSafeInteger(hw) || hw < 0) {
      throw new MqError('STORAGE_ERROR', `high watermark checkpoint ${this.path} is corrupt: ${JSON.stringify(text.slice(0, 40))}`);
    }
    return hw;
  }

  async save(highWatermark: number): Promise<void> {
    const tmp = `${this.path}.tmp`;
    try {
      const fh = await open(tmp, 'w');
      try {
        await fh.writeFile(`${VERSION} ${highWatermark}\n`);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, this.path);
      const dir = await open(dirname(this.path), 'r');
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
    } catch (err) {
      throw new MqError('STORAGE_ERROR', `cannot write the high watermark checkpoint ${this.path}`, { cause: err });
    }
  }
}
