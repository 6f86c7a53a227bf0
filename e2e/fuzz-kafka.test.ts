/**
 * Issue 16 in CI: a bounded run of the Kafka-protocol fuzzer
 * (tools/fuzz-kafka.mjs) against a real `mq broker start` with a Kafka port:
 * mutated frames of every served API (flipped bytes, truncations, lying
 * sizes and lengths, unknown keys and versions, garbage, split writes) among
 * valid ones, 15 s, seed 16. The broker stays up, every probe after a window
 * of frames is answered or its connection closed, RSS and open files stay in
 * bounds, and the well-behaved client's acknowledged records read back intact.
 */
// @ts-expect-error plain ESM tool, no types
import { runKafkaFuzz } from '../tools/fuzz-kafka/run.mjs';
// @ts-expect-error plain ESM tool, no types
import { parseFuzzOptions } from '../tools/fuzz-frames/options.mjs';

interface KafkaFuzzReport {
  frames: number;
  connectionsClosedByBroker: number;
  answers: number;
  openFilesMax: number;
  steady: { acked: number; intact: boolean };
  violations: Array<{ what: string; recent: string[] }>;
  brokerTail: string[];
}

it('seed 16: no exit, no hang, bounded RSS and open files, acknowledged records intact', async () => {
  const options = parseFuzzOptions({ seed: 16, frames: 20_000, seconds: 15, maxFds: 1024, maxRssMb: 1024, maxP99Ms: 5000, answerTimeoutMs: 15_000, quiet: true, log: () => undefined });
  const report = (await runKafkaFuzz(options)) as KafkaFuzzReport;
  const explain = report.violations.map((v) => `${v.what}\n  ${v.recent.join('\n  ')}`).join('\n') + `\n${report.brokerTail.join('\n')}`;
  expect({ violations: report.violations.length, explain: report.violations.length ? explain : '' }).toEqual({ violations: 0, explain: '' });
  expect(report.frames).toBeGreaterThan(300);
  expect(report.connectionsClosedByBroker).toBeGreaterThan(0);
  expect(report.answers).toBeGreaterThan(0);
  expect(report.steady.acked).toBeGreaterThan(0);
  expect(report.steady.intact).toBe(true);
}, 90_000);
