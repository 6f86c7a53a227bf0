/**
 * Small text checkpoint files in the log directory, Kafka style: a version
 * line, then whitespace-separated integers. Written atomically (temp file,
 * fsync, rename, fsync of the directory), so a reader sees the old or the
 * new content, never a mix.
 */
import * as path from 'node:path';
import type { LogFileSystem } from './file-system.js';

export const CHECKPOINT_VERSION = 0;

export class CheckpointFile {
  readonly file: string;

  constructor(
    dir: string,
    name: string,
    private readonly fs: LogFileSystem,
  ) {
    this.file = path.join(dir, name);
  }

  async write(lines: number[][]): Promise<void> {
    const text = [String(CHECKPOINT_VERSION), ...lines.map((l) => l.join(' '))].join('\n') + '\n';
    await this.fs.writeFileAtomic(this.file, Buffer.from(text, 'utf8'));
  }

  /**
   * The lines after the version line; null when the file is missing.
   * Throws an Error naming the problem when it is malformed.
   */
  async read(): Promise<number[][] | null> {
    const data = await this.fs.readFile(this.file);
    if (data === null) return null;
    const text = data.toString('utf8');
    if (!text.endsWith('\n')) throw new Error(`${this.file} does not end with a newline (torn)`);
    const lines = text.slice(0, -1).split('\n');
    if (lines[0] !== String(CHECKPOINT_VERSION)) throw new Error(`${this.file} has unknown version ${JSON.stringify(lines[0])}`);
    return lines.slice(1).map((line, i) => {
      const parts = line.trim().split(/\s+/).map(Number);
      if (parts.some((n) => !Number.isSafeInteger(n))) throw new Error(`${this.file} line ${i + 2} is not integers: ${JSON.stringify(line)}`);
      return parts;
    });
  }
}
