/**
 * Issue 22 in CI: a bounded run of the structure-aware fuzzer
 * (tools/fuzz-frames.mjs) against a real `mq broker start`. 20,000 mutated
 * frames or 30 s, seed 22 (the run that once stopped on open files): the
 * broker stays up, every frame is answered or its connection closed, RSS and
 * open files stay in bounds, the well-behaved client's acknowledged records
 * read back intact and metadata changes only as clients were told.
 *
 * Open files: about 3 per hosted partition (the active segment's log, offset
 * index and time index) plus sockets, so they are bounded through the
 * partition budget: the broker runs with max.partition.replicas.per.broker
 * 250 (its own __consumer_offsets and the steady topic included) and the run
 * fails past 1,024. The p99 bound here is loose (CI runs two e2e files at
 * once on 2 cores); the 250 ms figure is from a dedicated run (broker README).
 */
// @ts-expect-error plain ESM tool, no types
import { runFuzz } from '../tools/fuzz-frames/run.mjs';
// @ts-expect-error plain ESM tool, no types
import { parseFuzzOptions } from '../tools/fuzz-frames/options.mjs';

interface FuzzReport {
  frames: number;
  openFilesMax: number;
  rssMaxMb: number;
  steady: { acked: number; intact: boolean; p99Ms: number };
  violations: Array<{ what: string; afterFrame?: { description: string } }>;
  brokerTail: string[];
}

describe('fuzzed frames against a real broker (bounded CI run)', () => {
  it('seed 22: no exit, no hang, open files and RSS bounded, acknowledged records intact, metadata as told', async () => {
    const lines: string[] = [];
    const options = parseFuzzOptions({
      seed: 22,
      frames: 20_000,
      seconds: 30,
      maxFds: 1024,
      maxRssMb: 1024,
      // A stall detector, not a speed check: 2,356 ms was seen at load 20 with nothing wrong.
      maxP99Ms: 5000,
      brokerConfig: ['max.partition.replicas.per.broker=250'],
      quiet: true,
      log: (line: string) => lines.push(line),
    });
    const report = (await runFuzz(options)) as FuzzReport;
    const explain = report.violations.map((v) => `${v.what} (after: ${v.afterFrame?.description ?? '-'})`).join('\n') + `\n${report.brokerTail.join('\n')}`;
    expect({ violations: report.violations.length, explain: report.violations.length ? explain : '' }).toEqual({ violations: 0, explain: '' });
    expect(report.frames).toBeGreaterThan(1000);
    expect(report.steady.acked).toBeGreaterThan(0);
    expect(report.steady.intact).toBe(true);
    expect(report.openFilesMax).toBeLessThanOrEqual(1024);
  }, 120_000);
});
