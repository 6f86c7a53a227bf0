/**
 * Removing the logs of deleted topic incarnations from a broker's
 * cluster-logs/ (as Kafka does): a replica's directory is first renamed
 * into cluster-logs/.deleted/ (one rename, so nothing can open it under its
 * partition name again and the metadata loop is not held up by a large
 * log), then removed in the background. What a crash leaves behind, and the
 * directories of incarnations deleted while this broker was down, go on the
 * next sweep: every entry of cluster-logs/ whose topic id the metadata no
 * longer has, and everything under .deleted/.
 */
import path from 'node:path';
import type { Logger } from 'pino';
import { SINGLE_BROKER_TOPICS_FILE } from '../storage/migrate-single-broker.js';
import { parsePartitionDirName, SIBLING_SUFFIXES } from './partition-dir.js';
import { nodeDirFileSystem, type DirFileSystem } from '../storage/dir-fs.js';

/**
 * Whether a single broker's data directory is being migrated (its topic list
 * is still there): its logs are in cluster-logs/ before their topics are in
 * the metadata, so nothing may be swept yet.
 */
export async function singleBrokerMigrationPending(dataDir: string, fs: DirFileSystem = nodeDirFileSystem): Promise<boolean> {
  try {
    await fs.stat(path.join(dataDir, SINGLE_BROKER_TOPICS_FILE));
    return true;
  } catch {
    return false;
  }
}

/** The folder of cluster-logs/ that holds directories waiting for removal (never a partition directory's name). */
export const DELETED_DIR = '.deleted';

export class DeletedLogs {
  private readonly pending = new Set<Promise<void>>();
  private seq = 0;

  constructor(
    private readonly logDir: string,
    private readonly logger: Logger,
    private readonly fs: DirFileSystem = nodeDirFileSystem,
  ) {}

  /**
   * Removes the files beside a replica's log directory (the `.hw`
   * checkpoint), moves the directory out of cluster-logs/ at once and
   * removes it in the background.
   */
  async remove(dir: string): Promise<void> {
    for (const suffix of SIBLING_SUFFIXES) await this.fs.rm(`${dir}${suffix}`, { force: true });
    const trash = path.join(this.logDir, DELETED_DIR);
    // Short whatever the topic name's length: the partition and topic id name the incarnation.
    const entry = parsePartitionDirName(path.basename(dir));
    const target = path.join(trash, `${entry ? `${entry.partition}.${entry.topicId}` : 'log'}.${process.pid}-${++this.seq}`);
    try {
      await this.fs.mkdir(trash, { recursive: true });
      // A name left by an earlier run with the same pid would make the rename fail.
      await this.fs.rm(target, { recursive: true, force: true });
      await this.fs.rename(dir, target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      // Not renamed (another file system, permissions): remove it in place before going on.
      this.logger.warn({ dir, err: (err as Error).message }, 'could not move a deleted log aside; removing it in place');
      await this.fs.rm(dir, { recursive: true, force: true });
      return;
    }
    this.background(target);
  }

  /**
   * Removes what belongs to no live incarnation: every entry of cluster-logs/
   * naming a topic id not in `liveTopicIds`, and everything under .deleted/.
   * Returns the partition directories removed (not counting .deleted/).
   */
  /**
   * `kept` (scaleout): of a live topic id, whether this broker keeps that partition's replica; one it no longer
   * keeps (the partition was reassigned away while this broker was down) goes too. Absent: every live one is kept.
   */
  async sweep(liveTopicIds: ReadonlySet<string>, kept?: (topicId: string, partition: number) => boolean): Promise<string[]> {
    let names: string[];
    try {
      names = await this.fs.readdir(this.logDir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const removed: string[] = [];
    for (const name of names) {
      if (name === DELETED_DIR) {
        for (const left of await this.fs.readdir(path.join(this.logDir, DELETED_DIR)).catch(() => [] as string[])) {
          this.background(path.join(this.logDir, DELETED_DIR, left));
        }
        continue;
      }
      const entry = parsePartitionDirName(name);
      if (!entry || (liveTopicIds.has(entry.topicId) && (!kept || kept(entry.topicId, entry.partition)))) continue;
      const full = path.join(this.logDir, name);
      if (name === entry.dir) {
        removed.push(name);
        await this.remove(full);
      } else {
        await this.fs.rm(full, { force: true });
      }
    }
    if (removed.length > 0) {
      this.logger.info({ dirs: removed }, `removing the logs of ${removed.length} partition replica(s) of deleted topics or moved off this broker`);
    }
    return removed;
  }

  /** Waits for the background removals started so far. */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private background(target: string): void {
    const p = this.fs.rm(target, { recursive: true, force: true })
      .catch((err: unknown) => this.logger.error({ dir: target, err }, 'removing a deleted log failed; retried at the next start'))
      .finally(() => this.pending.delete(p));
    this.pending.add(p);
  }
}
