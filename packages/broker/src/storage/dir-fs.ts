/**
 * The directory operations the cluster's storage housekeeping needs beyond a
 * partition log's own files (moving deleted replicas aside and removing them,
 * the start-up sweep): node:fs/promises in production, an in-memory file
 * system in the simulator (@mq/sim).
 */
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';

export interface DirFileSystem {
  mkdir(dir: string, options: { recursive: true }): Promise<unknown>;
  readdir(dir: string): Promise<string[]>;
  rename(from: string, to: string): Promise<void>;
  /** Removes a file or, with `recursive`, a directory; `force`: a missing path is not an error. */
  rm(target: string, options: { recursive?: boolean; force?: boolean }): Promise<void>;
  /** Rejects (ENOENT) when the path does not exist. */
  stat(file: string): Promise<unknown>;
}

export const nodeDirFileSystem: DirFileSystem = { mkdir, readdir, rename, rm, stat };
