/**
 * One fuzz run of the Kafka listener: a real `mq broker start` with a Kafka
 * port, a well-behaved @mq/client beside it (fuzz-frames/steady-client.mjs),
 * and seeded mutations of valid Kafka frames over several connections,
 * bounded by frame count and time. Each connection sends `window` mutated
 * frames and then an ApiVersions probe: the probe must be answered, or the
 * connection closed, within the answer timeout (Kafka answers in order, so
 * the probe's answer means every frame before it was answered or needed
 * none). The broker must stay up inside its RSS and open-file bounds, and
 * the well-behaved client's acknowledged records must read back intact.
 */
import net from 'node:net';
import { MqClient } from '@mq/client';
import { ApiVersionsApi, FrameSplitter, encodeRequest } from '@mq/kafka-protocol';
import { createRng } from '../fuzz-frames/rng.mjs';
import { sampleProcess, startBrokerProcess } from '../fuzz-frames/broker-target.mjs';
import { startSteadyClient } from '../fuzz-frames/steady-client.mjs';
import { kafkaCorpus } from './corpus.mjs';
import { mutateKafkaFrame } from './mutate.mjs';

/** Broker settings of a run: a Kafka port, a small frame bound, idle connections closed after 1 s (a frame whose size lies waits no longer). */
export const KAFKA_FUZZ_BROKER_CONFIG = ['kafka.listener.port=0', 'max.frame.bytes=1048576', 'connections.max.idle.ms=1000', 'group.initial.rebalance.delay.ms=0', 'offsets.topic.num.partitions=1'];

/** The share of frames mutated; the rest are valid corpus frames. */
export const MUTATED_SHARE = 0.2;

function connect(port) {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s));
    s.setNoDelay(true);
    s.once('error', reject);
  });
}

export async function runKafkaFuzz(o) {
  const corpus = kafkaCorpus();
  const rng = createRng(o.seed);
  const broker = await startBrokerProcess({ config: [...KAFKA_FUZZ_BROKER_CONFIG, ...o.brokerConfig] });
  if (!broker.kafkaPort) throw new Error('the broker logged no Kafka port');
  const sampler = sampleProcess(broker.pids);
  const violations = [];
  const counts = { sent: 0, probes: 0, answered: 0, closed: 0 };
  const started = Date.now();
  let brokerStopping = false;
  const violate = (what, recent = []) => {
    if (violations.length < 20) violations.push({ what, recent });
  };
  void broker.exited.then((code) => {
    if (!brokerStopping) violate(`broker exited (${code})`);
  });
  const watcher = new MqClient({ bootstrap: broker.bootstrap, clientId: 'fuzz-kafka-watcher' });
  for (const t of ['fzk-t1', 'fzk-t2']) await watcher.admin().createTopic(t, { numPartitions: 2 });
  let frameIndex = 0;
  const steady = await startSteadyClient(broker.bootstrap, `fzk-steady-${o.seed}`, () => frameIndex);
  const deadline = started + o.seconds * 1000;
  let correlation = 1;

  const worker = async (slot) => {
    while (frameIndex < o.frames && Date.now() < deadline && violations.length === 0) {
      let socket;
      try {
        socket = await connect(broker.kafkaPort);
      } catch (err) {
        violate(`connection ${slot} could not connect: ${err.message}`);
        return;
      }
      const splitter = new FrameSplitter(64 * 1024 * 1024);
      let closed = false;
      const waiters = new Set();
      const answered = new Set();
      socket.on('data', (d) => {
        let frames = [];
        try {
          frames = splitter.push(d);
        } catch {
          socket.destroy();
        }
        for (const f of frames) {
          counts.answered++;
          if (f.length >= 4) answered.add(f.readInt32BE(0));
        }
        for (const w of waiters) w();
      });
      socket.on('error', () => undefined);
      socket.once('close', () => {
        closed = true;
        for (const w of waiters) w();
      });
      while (!closed && frameIndex < o.frames && Date.now() < deadline && violations.length === 0) {
        const recent = [];
        for (let i = 0; i < o.window && !closed; i++) {
          // Most frames go out valid, so a connection lives long enough to reach the paths behind the decoder.
          const seed = rng.pick(corpus);
          const m = rng.chance(MUTATED_SHARE) ? mutateKafkaFrame(rng, seed) : { bytes: Buffer.from(seed.bytes), description: `${seed.api} v${seed.version}: valid` };
          if (m.bytes.length >= 12) m.bytes.writeInt32BE(correlation++, 8);
          recent.push(`#${frameIndex} ${m.description}`);
          frameIndex++;
          counts.sent++;
          // Now and then a frame goes out in two writes, split anywhere.
          if (rng.chance(0.2) && m.bytes.length > 1) {
            const cut = 1 + rng.int(m.bytes.length - 1);
            socket.write(m.bytes.subarray(0, cut));
            socket.write(m.bytes.subarray(cut));
          } else socket.write(m.bytes);
        }
        if (closed) break;
        const probe = correlation++;
        counts.probes++;
        socket.write(encodeRequest(ApiVersionsApi, 0, probe, 'fuzz-probe', {}));
        const ok = await new Promise((resolve) => {
          const check = () => {
            if (answered.has(probe) || closed) done(true);
          };
          const timer = setTimeout(() => done(false), o.answerTimeoutMs);
          function done(v) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(v);
          }
          waiters.add(check);
          check();
        });
        if (!ok) {
          violate(`connection ${slot}: the probe after ${recent.length} mutated frames was neither answered nor the connection closed within ${o.answerTimeoutMs} ms`, recent);
          break;
        }
        answered.clear();
      }
      if (closed) counts.closed++;
      socket.destroy();
    }
  };
  await Promise.all(Array.from({ length: o.connections }, (_, i) => worker(i)));
  const elapsedS = (Date.now() - started) / 1000;

  let steadyReport = { acked: 0, bad: [], errors: [], p99Ms: NaN };
  if (broker.exitCode === undefined) {
    steadyReport = await steady.finish();
    if (steadyReport.bad.length) violate(`${steadyReport.bad.length} acknowledged records did not read back intact, first: ${steadyReport.bad[0]}`);
    if (steadyReport.acked === 0) violate('the well-behaved client got no acknowledgment at all');
    if (!(steadyReport.p99Ms <= o.maxP99Ms)) violate(`well-behaved p99 ack latency ${steadyReport.p99Ms.toFixed(1)} ms over ${o.maxP99Ms} ms`);
  }
  await watcher.close({ timeoutMs: 1000 }).catch(() => undefined);
  await sampler.stop();
  if (sampler.stats.rssMaxMb > o.maxRssMb) violate(`broker RSS reached ${sampler.stats.rssMaxMb} MB (bound ${o.maxRssMb})`);
  if (sampler.stats.fdsMax > o.maxFds) violate(`broker open files reached ${sampler.stats.fdsMax} (bound ${o.maxFds})`);
  brokerStopping = true;
  const brokerTail = violations.length ? broker.output.slice(-30) : [];
  const badFrameLines = broker.output.filter((l) => l.includes('bad kafka frame')).length;
  await broker.stop();
  return {
    seed: o.seed,
    frames: counts.sent,
    probes: counts.probes,
    seconds: Number(elapsedS.toFixed(1)),
    framesPerSecond: Math.round(counts.sent / elapsedS),
    answers: counts.answered,
    connectionsClosedByBroker: counts.closed,
    badFrameLogLinesInTail: badFrameLines,
    rssMaxMb: sampler.stats.rssMaxMb,
    openFilesMax: sampler.stats.fdsMax,
    steady: { acked: steadyReport.acked, intact: steadyReport.bad.length === 0, p99Ms: Number((steadyReport.p99Ms ?? NaN).toFixed?.(1) ?? NaN), errors: (steadyReport.errors ?? []).slice(0, 5) },
    violations,
    brokerTail,
  };
}
