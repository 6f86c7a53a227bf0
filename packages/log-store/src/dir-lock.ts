/**
 * The `.lock` file that keeps a second owner off a log directory. It holds
 * the owner's pid. Node has no flock(), so a lock left by a process that has
 * died (SIGKILL) is recognised as stale by checking that pid, and taken over.
 * Inside one process a registry refuses a second open of the same directory
 * on the same file system (a simulator runs many brokers' processes, each
 * with its own file-system component, in one Node process).
 */
import * as path from 'node:path';
import { MqError } from '@mq/protocol/errors';
import type { LogFileSystem } from './file-system.js';

export const LOCK_FILE = '.lock';

const heldByFileSystem = new WeakMap<LogFileSystem, Set<string>>();

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface DirLock {
  release(): Promise<void>;
}

export async function lockDir(dir: string, fs: LogFileSystem): Promise<DirLock> {
  const key = path.resolve(dir);
  let heldInProcess = heldByFileSystem.get(fs);
  if (!heldInProcess) heldByFileSystem.set(fs, (heldInProcess = new Set()));
  const held = heldInProcess;
  if (heldInProcess.has(key)) {
    throw new MqError('LOG_DIR_LOCKED', `log directory ${dir} is already open in this process (close it first)`, { dir });
  }
  const file = path.join(dir, LOCK_FILE);
  const content = Buffer.from(`${process.pid}\n`, 'utf8');
  heldInProcess.add(key);
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      if (await fs.createExclusive(file, content)) {
        return {
          async release() {
            held.delete(key);
            await fs.unlink(file);
          },
        };
      }
      const existing = await fs.readFile(file);
      const pid = existing === null ? NaN : Number.parseInt(existing.toString('utf8'), 10);
      // Our own pid here is a leftover of an earlier life of this pid: the registry says we do not hold it.
      if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && processAlive(pid)) {
        throw new MqError('LOG_DIR_LOCKED', `log directory ${dir} is locked by process ${pid} (stop it, or use another directory)`, {
          dir,
          pid,
        });
      }
      await fs.unlink(file); // stale: the owner is gone
    }
    throw new MqError('LOG_DIR_LOCKED', `could not take the lock on log directory ${dir}: another process keeps racing for it`, { dir });
  } catch (err) {
    held.delete(key);
    throw err;
  }
}
