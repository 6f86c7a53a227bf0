/**
 * One fuzz run: starts a broker, a well-behaved client beside it, and sends
 * seeded mutations of recorded frames over several connections, bounded by
 * frame count and time. Every mutated frame must get an answer or a close of
 * its connection within the answer timeout; the broker must stay up inside its
 * RSS and open-file bounds; every acknowledged record must read back intact;
 * metadata must change only as clients were told. Returns the report.
 */
import { readFile, writeFile } from 'node:fs/promises';
import WebSocket from 'ws';
import { MqClient } from '@mq/client';
import { errorNumber } from '@mq/protocol/errors';
import { decodeResponse } from '@mq/protocol/wire';
import { CORPUS_FILE } from './record-corpus.mjs';
import { createRng } from './rng.mjs';
import { mutateFrame } from './mutate-frame.mjs';
import { decodeFrame } from './schema.mjs';
import { startBrokerProcess, startClusterProcess, sampleProcess } from './broker-target.mjs';
import { STEADY_PARTITIONS, startSteadyClient } from './steady-client.mjs';
import { compareMetadata, snapshotMetadata } from './metadata-watch.mjs';
import { syntheticFrames } from './synthetic-frames.mjs';

const REQUEST_TIMED_OUT = errorNumber('REQUEST_TIMED_OUT');

/** The recorded frames, then frames no client session sends (ControllerForward, OffsetForLeaderEpoch) naming `steadyTopic`. */
export async function loadCorpus(steadyTopic = 'fz-steady') {
  const list = JSON.parse(await readFile(CORPUS_FILE, 'utf8'));
  const recorded = list.map((e) => ({ api: e.api, bytes: Buffer.from(e.frame, 'base64') }));
  return [...recorded, ...syntheticFrames(recorded, steadyTopic)];
}

/** The fuzzer's own loop yields to the event loop (answers, signals, the sampler) after this long. */
const SLICE_MS = 20;

function openConnection(url) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

export async function runFuzz(options) {
  const o = options;
  const steadyTopic = `fz-steady-${o.seed}`;
  const corpus = await loadCorpus(steadyTopic);
  const rng = createRng(o.seed);
  // --brokers N > 1: a real cluster; fuzzing connections go to every broker in turn.
  const broker = o.brokers > 1 ? await startClusterProcess({ brokers: o.brokers, config: o.brokerConfig }) : await startBrokerProcess({ config: o.brokerConfig });
  const sampler = sampleProcess(broker.pids);
  const violations = [];
  const recent = [];
  const counts = { sent: 0, answered: 0, closed: 0, errorAnswers: 0, reconnects: 0 };
  const closeCodes = {};
  // What the fuzzer was told about the topics its frames named: created/deleted when answered OK or never answered.
  const created = new Set();
  const deleted = new Set();
  const refused = new Map();
  let brokerStopping = false;
  const started = Date.now();
  const violate = (what) => {
    // The first violation also names the last 40 frames sent (a window of answers may be pending behind it).
    const before = violations.length === 0 ? { sentBefore: recent.slice(-40).map((r) => `#${r.index} ${r.description.slice(0, 200)}`) } : {};
    if (violations.length < 20) violations.push({ what, afterFrame: recent.at(-1), recent: recent.slice(-3), ...before });
  };

  const watcher = new MqClient({ bootstrap: broker.bootstrap, clientId: 'fuzz-watcher' });
  let frameIndex = 0;
  // The last frames' descriptions, to name what was being sent while an acknowledgment was slow.
  const described = new Map();
  const steady = await startSteadyClient(broker.bootstrap, steadyTopic, () => frameIndex, { trace: Boolean(o.trace) });
  // --trace: every frame's send time, to lay beside the acknowledgments and the broker's event-loop gaps.
  const sentLog = [];
  const before = await snapshotMetadata(watcher.admin());
  void broker.exited.then((code) => {
    if (!brokerStopping) violate(`broker exited (${code})`);
  });

  const conns = [];
  let stopping = false;
  let wake;
  const wakeUp = () => wake?.();

  const attach = async (slot) => {
    const ws = await openConnection(broker.urls[slot % broker.urls.length]);
    const conn = { ws, pending: new Map(), open: true };
    ws.on('message', (data) => {
      let frame;
      try {
        frame = decodeResponse(data);
      } catch (err) {
        violate(`undecodable response: ${err.message}`);
        return;
      }
      // Pending frames are keyed by the correlation id the broker decodes from them (a mutation may change it).
      let entry = conn.pending.get(frame.correlationId);
      // An id no pending frame carries (damage the fuzzer's own decoder did not see the same way): the answer is
      // some frame's, but whose is unknown, so the oldest's creates and deletes may or may not have happened.
      const guessed = !entry;
      if (!entry) entry = conn.pending.values().next().value;
      if (!entry) return;
      conn.pending.delete(entry.key);
      counts.answered++;
      if (frame.errorCode) counts.errorAnswers++;
      const told = (results, set) => {
        for (const r of results ?? []) {
          // REQUEST_TIMED_OUT (43) leaves the outcome unknown, as in Kafka: the command may still commit after the answer.
          if (!r.errorCode || r.errorCode === REQUEST_TIMED_OUT) set.add(r.name);
          else refused.set(r.name, `${r.errorCode} ${r.errorMessage ?? ''}`.trim());
        }
      };
      told(frame.createTopics?.results, created);
      told(frame.deleteTopics?.results, deleted);
      if (guessed) {
        for (const n of entry.creates) created.add(n);
        for (const n of entry.deletes) deleted.add(n);
      } else if (frame.errorCode) {
        for (const n of entry.creates) refused.set(n, `frame error ${frame.errorCode} ${frame.errorMessage ?? ''}`.trim());
        for (const n of entry.deletes) refused.set(n, `frame error ${frame.errorCode} ${frame.errorMessage ?? ''}`.trim());
      }
      wakeUp();
    });
    ws.on('close', (code) => {
      conn.open = false;
      closeCodes[code] = (closeCodes[code] ?? 0) + 1;
      counts.closed += conn.pending.size;
      // Unanswered creates and deletes may or may not have happened, as after any lost connection.
      for (const e of conn.pending.values()) {
        for (const n of e.creates) created.add(n);
        for (const n of e.deletes) deleted.add(n);
      }
      conn.pending.clear();
      if (!stopping && broker.exitCode === undefined) {
        counts.reconnects++;
        attach(slot).catch((err) => violate(`cannot reconnect: ${err.message}`));
      }
      wakeUp();
    });
    ws.on('error', () => undefined);
    conns[slot] = conn;
    wakeUp();
  };
  for (let i = 0; i < o.connections; i++) await attach(i);

  let windowFrom = 0;
  const hangTimer = setInterval(() => {
    const now = Date.now();
    for (const c of conns)
      for (const e of c?.pending.values() ?? [])
        if (e.expectsAnswer && now - e.sentAt > o.answerTimeoutMs && !e.reported) {
          e.reported = true;
          violate(`frame #${e.index} neither answered nor its connection closed within ${o.answerTimeoutMs} ms: ${e.description}`);
        }
    const s = sampler.stats;
    if (s.rssMaxMb > o.maxRssMb && !violations.some((v) => v.what.startsWith('RSS'))) violate(`RSS ${s.rssMaxMb} MiB over the ${o.maxRssMb} MiB bound`);
    if (s.fdsMax > o.maxFds && !violations.some((v) => v.what.startsWith('open files'))) violate(`open files ${s.fdsMax} over the ${o.maxFds} bound`);
    if (!o.quiet) {
      // The steady client's acknowledgments since the last line: a p99 per window shows whether it held throughout.
      const window = steady.latencies.slice(windowFrom).sort((a, b) => a - b);
      windowFrom = steady.latencies.length;
      const p99 = window.length ? window[Math.min(window.length - 1, Math.floor(0.99 * window.length))].toFixed(0) : '-';
      o.log(`[fuzz] ${((now - started) / 1000).toFixed(0)}s sent=${counts.sent} answered=${counts.answered} closed=${counts.closed} rss=${s.rssMaxMb}MiB fds=${s.fdsMax} rssNow=${s.rssNowMb}MiB fdsNow=${s.fdsNow} acks=${window.length} p99=${p99}ms fuzzerRss=${Math.round(process.memoryUsage().rss / 2 ** 20)}MiB`);
    }
  }, o.quiet ? 1000 : 10_000);

  const deadline = started + o.seconds * 1000;
  // --frames 0: a baseline, the well-behaved client alone for --seconds.
  if (o.frames === 0) while (Date.now() < deadline && violations.length === 0 && !o.stopRequested?.()) await new Promise((r) => setTimeout(r, 100));
  let sliceStart = performance.now();
  while (frameIndex < o.frames && Date.now() < deadline && violations.length === 0 && !o.stopRequested?.()) {
    const conn = conns.find((c) => c?.open && c.ws.readyState === WebSocket.OPEN && c.pending.size < o.window);
    if (!conn) {
      await new Promise((r) => {
        wake = r;
        setTimeout(r, 50);
      });
      continue;
    }
    const index = frameIndex++;
    const source = corpus[rng.int(corpus.length)];
    const cid = (index + 1) >>> 0;
    const m = mutateFrame(rng, source.bytes, cid);
    // What the frame really says once encoded (wire damage included): an acks=0 produce expects no answer.
    let sent;
    try {
      sent = decodeFrame(m.bytes);
    } catch {
      sent = undefined;
    }
    // The broker answers with the correlation id it decodes: the mutated one when the mutation hit it (an earlier
    // run attributed such an answer to the oldest pending frame, a CreateTopics, whose real success then went to
    // another frame: a topic "appeared" that the fuzzer believed refused).
    const decodedCid = sent?.correlationId ?? cid;
    const key = conn.pending.has(decodedCid) ? cid : decodedCid;
    const entry = {
      key,
      cid,
      index,
      description: m.description,
      sentAt: Date.now(),
      frame: m.bytes.subarray(0, 3000).toString('base64') + (m.bytes.length > 3000 ? `…(${m.bytes.length} bytes)` : ''),
      expectsAnswer: !(sent?.produce && !sent.produce.acks),
      creates: (sent?.createTopics?.topics ?? []).map((t) => t.name),
      deletes: sent?.deleteTopics?.topics ?? [],
    };
    recent.push({ index, description: m.description, frame: entry.frame });
    if (recent.length > 40) recent.shift();
    described.set(index, m.description.slice(0, 160));
    described.delete(index - 5000);
    conn.pending.set(key, entry);
    counts.sent++;
    conn.ws.send(m.bytes);
    if (o.trace) sentLog.push([Date.now(), index, m.bytes.length, m.description.slice(0, 140)]);
    if (performance.now() - sliceStart > SLICE_MS) {
      await new Promise((r) => setImmediate(r));
      sliceStart = performance.now();
    }
  }
  const stoppedEarly = Boolean(o.stopRequested?.());

  // Drain: every frame sent gets its answer or close.
  const drainDeadline = Date.now() + o.answerTimeoutMs + 1000;
  const waiting = () => conns.some((c) => [...(c?.pending.values() ?? [])].some((e) => e.expectsAnswer));
  while (waiting() && Date.now() < drainDeadline && broker.exitCode === undefined) await new Promise((r) => setTimeout(r, 50));
  stopping = true;
  clearInterval(hangTimer);
  for (const c of conns)
    for (const e of c?.pending.values() ?? []) if (e.expectsAnswer) violate(`frame #${e.index} never answered nor closed: ${e.description}`);
  const elapsedS = (Date.now() - started) / 1000;
  if (o.trace) await writeFile(o.trace, JSON.stringify({ acks: steady.acks, sent: sentLog }));

  let steadyReport = { slowest: [], acked: 0, bad: [], errors: [], p50Ms: NaN, p99Ms: NaN, maxMs: NaN };
  // A broker that stopped serving (the violation above) cannot be read back: that is reported, not thrown.
  if (broker.exitCode === undefined) {
    try {
      steadyReport = await steady.finish();
      if (steadyReport.bad.length) violate(`${steadyReport.bad.length} acknowledged records did not read back intact, first: ${steadyReport.bad[0]}`);
      if (steadyReport.acked === 0) violate('the well-behaved client got no acknowledgment at all');
      if (!(steadyReport.p99Ms <= o.maxP99Ms)) violate(`well-behaved p99 ack latency ${steadyReport.p99Ms.toFixed(1)} ms over ${o.maxP99Ms} ms`);
      const after = await snapshotMetadata(watcher.admin());
      const steadyActual = (await watcher.admin().describeTopic(steadyTopic).catch(() => ({ partitions: [] }))).partitions.length;
      for (const p of compareMetadata(before, after, { created, deleted, refused, steadyTopic, steadyPartitions: STEADY_PARTITIONS, steadyActual })) violate(`metadata: ${p}`);
    } catch (err) {
      violate(`the broker could not be read back after the run: ${err.message}`);
    }
  }
  for (const c of conns) c?.ws.terminate();
  await watcher.close({ timeoutMs: 1000 }).catch(() => undefined);
  await sampler.stop();
  brokerStopping = true;
  const brokerTail = violations.length ? broker.output.slice(-30) : [];
  await broker.stop();
  return {
    seed: o.seed,
    ...(stoppedEarly ? { stoppedBySignal: true } : {}),
    frames: counts.sent,
    seconds: Number(elapsedS.toFixed(1)),
    framesPerSecond: Math.round(counts.sent / elapsedS),
    answered: counts.answered,
    answeredWithFrameError: counts.errorAnswers,
    closedUnanswered: counts.closed,
    closeCodes,
    reconnects: counts.reconnects,
    rssMaxMb: sampler.stats.rssMaxMb,
    openFilesMax: sampler.stats.fdsMax,
    steady: {
      acked: steadyReport.acked,
      p50Ms: Number(steadyReport.p50Ms.toFixed(1)),
      p99Ms: Number(steadyReport.p99Ms.toFixed(1)),
      maxMs: Number(steadyReport.maxMs.toFixed(1)),
      intact: steadyReport.bad.length === 0,
      errors: steadyReport.errors.slice(0, 5),
      slowest: steadyReport.slowest.map((s) => ({
        ms: Math.round(s.ms),
        frames: `#${s.fromFrame}..#${s.toFrame}`,
        sentMeanwhile: Array.from({ length: Math.min(12, s.toFrame - s.fromFrame + 1) }, (_, i) => described.get(s.fromFrame + i)).filter(Boolean),
      })),
    },
    topicsCreatedByFuzzer: created.size,
    violations,
    brokerTail,
  };
}
