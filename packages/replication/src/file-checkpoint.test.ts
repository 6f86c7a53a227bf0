import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileCheckpoint } from './file-checkpoint.js';

describe('FileCheckpoint', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mq-hw-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads nothing before the first save, then the last value saved', async () => {
    const cp = new FileCheckpoint(join(dir, 'high-watermark'));
    expect(await cp.load()).toBeUndefined();
    await cp.save(42);
    await cp.save(43);
    expect(await new FileCheckpoint(join(dir, 'high-watermark')).load()).toBe(43);
    expect(await readFile(join(dir, 'high-watermark'), 'utf8')).toBe('1 43\n');
  });

  it('refuses a corrupt file with STORAGE_ERROR', async () => {
    await writeFile(join(dir, 'high-watermark'), '1 banana\n');
    await expect(new FileCheckpoint(join(dir, 'high-watermark')).load()).rejects.toMatchObject({ code: 'STORAGE_ERROR' });
  });

  it('reports a write it cannot make with STORAGE_ERROR', async () => {
    await expect(new FileCheckpoint(join(dir, 'missing', 'high-watermark')).save(1)).rejects.toMatchObject({ code: 'STORAGE_ERROR' });
  });
});
