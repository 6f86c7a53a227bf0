#!/usr/bin/env node
/**
 * Fuzzer of the broker's Kafka-protocol front door (issue 16), beside
 * tools/fuzz-frames.mjs for the WebSocket one and with its options:
 *   node tools/fuzz-kafka.mjs --seed 16 --frames 20000 --seconds 60
 * Needs the built packages (`npm run build`). Exits 1 on a violation,
 * printing the seed and the frames sent before it; `--seed` replays them.
 */
import { parseArgv, parseFuzzOptions } from './fuzz-frames/options.mjs';
import { runKafkaFuzz } from './fuzz-kafka/run.mjs';

for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => process.exit(130));

const options = parseFuzzOptions(parseArgv(process.argv.slice(2)));
options.log(`[fuzz-kafka] seed ${options.seed}: up to ${options.frames} frames in ${options.seconds} s over ${options.connections} connections`);
const report = await runKafkaFuzz(options);
console.log(JSON.stringify(report, null, 2));
if (report.violations.length) {
  console.error(`FAILED with seed ${report.seed} (replay: node tools/fuzz-kafka.mjs --seed ${report.seed} --frames ${report.frames})`);
  for (const v of report.violations) console.error(`- ${v.what}\n  ${v.recent.join('\n  ')}`);
  process.exit(1);
}
process.exit(0);
