/**
 * Issue 22: a bounded run of the structure-aware frame fuzzer
 * (tools/fuzz-frames.mjs) against a real broker process it starts itself. The
 * tool fails on a broker exit, a frame neither answered nor closed, RSS or open
 * files past their bounds, an acknowledged record that does not read back
 * intact, or metadata changed by anything but what clients were told; the
 * seed is fixed here so a failure replays with the same command.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from './src/harness.js';

const SEED = 22;
const FRAMES = 20_000;
const SECONDS = 30;
/** The well-behaved client's p99 under fuzzing on a shared 2-core CI machine (the 250 ms target is measured by the long run). */
const CI_MAX_P99_MS = 10_000;
/**
 * Open files: the bound. On main at the time of writing this fails: the
 * broker's open files grow from ~190 to 1,159 after 5,328 frames and 4,191 after
 * 6,241 (fuzzed CreateTopics create topics and partitions with no budget).
 */
const CI_MAX_FDS = 1024;

function runTool(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'tools', 'fuzz-frames.mjs'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('frame fuzzer against a real broker', () => {
  it(
    'survives seeded mutated frames with the well-behaved client served intact and metadata unchanged',
    async () => {
      const r = await runTool(['--seed', String(SEED), '--frames', String(FRAMES), '--seconds', String(SECONDS), '--max-p99-ms', String(CI_MAX_P99_MS), '--max-fds', String(CI_MAX_FDS), '--quiet']);
      if (r.code !== 0) throw new Error(`fuzz-frames failed (exit ${r.code}):\n${r.stderr}\n${r.stdout.slice(0, 8000)}`);
      const report = JSON.parse(r.stdout) as { frames: number; violations: unknown[]; steady: { acked: number; intact: boolean } };
      expect(report.violations).toEqual([]);
      expect(report.frames).toBeGreaterThan(500);
      expect(report.steady.acked).toBeGreaterThan(0);
      expect(report.steady.intact).toBe(true);
    },
    SECONDS * 1000 + 60_000,
  );
});
