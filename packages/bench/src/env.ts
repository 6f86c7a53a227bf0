import { execFileSync } from 'node:child_process';
import os from 'node:os';

export interface BenchEnvironment {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  platform: string;
  kernel: string;
  node: string;
  commit: string | null;
  dirty: boolean | null;
  hostname: string;
  startedAt: string;
}

/** What a run ran on: printed with every result so figures can be compared honestly. */
export function collectEnvironment(cwd = process.cwd()): BenchEnvironment {
  const cpus = os.cpus();
  let commit: string | null = null;
  let dirty: boolean | null = null;
  try {
    commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
    const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd, stdio: ['ignore', 'pipe', 'ignore'] });
    dirty = status.length > 0;
  } catch {
    // not a git checkout (an installed package): leave both null
  }
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cores: os.availableParallelism?.() ?? cpus.length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    platform: `${os.platform()}-${os.arch()}`,
    kernel: os.release(),
    node: process.version,
    commit,
    dirty,
    hostname: os.hostname(),
    startedAt: new Date().toISOString(),
  };
}
