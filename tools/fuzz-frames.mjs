#!/usr/bin/env node
/**
 * Structure-aware fuzzer of the broker's WebSocket+protobuf front door (issue 22).
 *   node tools/fuzz-frames.mjs --seed 42 --frames 20000 --seconds 60
 *   node tools/fuzz-frames.mjs --record        (refresh the recorded corpus)
 * Needs the built packages (`npm run build`). Exits 1 on a violation, printing
 * the seed and the frame that preceded it; `--seed` replays the same frames.
 */
import { parseArgv, parseFuzzOptions } from './fuzz-frames/options.mjs';
import { recordCorpus } from './fuzz-frames/record-corpus.mjs';
import { runFuzz } from './fuzz-frames/run.mjs';

// The first SIGINT/SIGTERM stops sending and ends the run as usual (drain, read back, report: a long run stopped by
// hand still gives its figures); a second one, or the run not ending within STOP_GRACE_MS, exits at once. Either
// way the 'exit' handlers kill the broker processes and remove their data directories.
const STOP_GRACE_MS = 150_000;
let stopRequested = false;
const onSignal = (sig) => {
  if (stopRequested) process.exit(130);
  stopRequested = true;
  process.stderr.write(`[fuzz] ${sig}: stopping after the frames in flight (again to exit at once)\n`);
  setTimeout(() => process.exit(130), STOP_GRACE_MS).unref();
};
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, onSignal);

const args = parseArgv(process.argv.slice(2));
if (args.record) {
  console.log(JSON.stringify(await recordCorpus(), null, 2));
  process.exit(0);
}
const options = { ...parseFuzzOptions(args), stopRequested: () => stopRequested };
options.log(`[fuzz] seed ${options.seed}: up to ${options.frames} frames in ${options.seconds} s over ${options.connections} connections`);
const report = await runFuzz(options);
console.log(JSON.stringify(report, null, 2));
if (report.violations.length) {
  console.error(`FAILED with seed ${report.seed} (replay: node tools/fuzz-frames.mjs --seed ${report.seed} --frames ${report.frames})`);
  for (const v of report.violations) console.error(`- ${v.what}\n  after frame #${v.afterFrame?.index}: ${v.afterFrame?.description}\n  bytes (base64): ${v.afterFrame?.frame}`);
  process.exit(1);
}
process.exit(stopRequested ? 130 : 0);
