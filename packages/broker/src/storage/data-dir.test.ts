import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadOrCreateMeta, lockDataDir, takeCleanShutdownMarker, writeCleanShutdownMarker } from './data-dir.js';

describe('data directory', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'mq-broker-dd-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('creates meta.properties once and keeps the cluster id', async () => {
    const a = await loadOrCreateMeta(dir, 3);
    const b = await loadOrCreateMeta(dir, undefined);
    expect(b).toEqual(a);
    expect(a.brokerId).toBe(3);
    expect(await readFile(path.join(dir, 'meta.properties'), 'utf8')).toContain(`cluster.id=${a.clusterId}`);
  });

  it('gives a new directory broker id 1 (Raft node ids start at 1)', async () => {
    expect((await loadOrCreateMeta(dir, undefined, { oneNode: true })).brokerId).toBe(1);
  });

  it("renumbers an old single broker's directory (broker 0) to 1 in a one-node cluster, keeping its cluster id", async () => {
    await writeFile(path.join(dir, 'meta.properties'), 'version=1\nbroker.id=0\ncluster.id=abc\n');
    // A cluster member with broker 0 is left to the voter checks.
    expect(await loadOrCreateMeta(dir, undefined)).toEqual({ brokerId: 0, clusterId: 'abc' });
    expect(await loadOrCreateMeta(dir, undefined, { oneNode: true })).toEqual({ brokerId: 1, clusterId: 'abc', renumberedFrom: 0 });
    expect(await readFile(path.join(dir, 'meta.properties'), 'utf8')).toContain('broker.id=1');
    expect(await loadOrCreateMeta(dir, 1, { oneNode: true })).toEqual({ brokerId: 1, clusterId: 'abc' });
  });

  it('refuses broker id 0 for a one-node cluster with INVALID_CONFIG', async () => {
    await expect(loadOrCreateMeta(dir, 0, { oneNode: true })).rejects.toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringMatching(/broker.id 0 cannot be used/) });
  });

  it('refuses a different broker id for the same data', async () => {
    await loadOrCreateMeta(dir, 1);
    await expect(loadOrCreateMeta(dir, 2)).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
  });

  it('locks the directory against a second broker and takes over a dead owner\'s lock', async () => {
    const lock = await lockDataDir(dir);
    await expect(lockDataDir(dir)).rejects.toMatchObject({ code: 'LOG_DIR_LOCKED' });
    await lock.release();
    await writeFile(path.join(dir, '.lock'), '999999999');
    const again = await lockDataDir(dir);
    await again.release();
  });

  it('tracks clean shutdowns', async () => {
    expect(await takeCleanShutdownMarker(dir)).toBe(false);
    await writeCleanShutdownMarker(dir);
    expect(await takeCleanShutdownMarker(dir)).toBe(true);
    expect(await takeCleanShutdownMarker(dir)).toBe(false);
  });
});
