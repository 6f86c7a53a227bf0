// The machine's own ceilings for tools/peer-bench.mjs: raw sequential file
// write of the same bytes a produce run writes, and raw WebSocket throughput
// (`ws`, binary messages) between two Node processes on loopback.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, open, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Writes `totalBytes` in `chunkBytes` writes; fsyncEach fsyncs after every write. */
export async function fileWriteCeiling({ totalBytes, chunkBytes, fsyncEach = false, dir = os.tmpdir() }) {
  const tmp = await mkdtemp(path.join(dir, 'bench-ceiling-'));
  const file = path.join(tmp, 'seq.bin');
  const chunk = Buffer.alloc(chunkBytes, 0x5a);
  const fh = await open(file, 'w');
  const t0 = performance.now();
  let written = 0;
  try {
    while (written < totalBytes) {
      await fh.write(chunk, 0, chunk.length);
      if (fsyncEach) await fh.datasync();
      written += chunk.length;
    }
  } finally {
    await fh.close();
  }
  const seconds = (performance.now() - t0) / 1000;
  await rm(tmp, { recursive: true, force: true });
  return { bytes: written, seconds, mbPerSec: written / 1e6 / seconds, chunkBytes, fsyncEach };
}

/** Client → server (produce direction) and server → client (consume direction) through `ws` on loopback. */
export async function wsCeiling({ totalBytes, messageBytes }) {
  const sink = spawn(process.execPath, [path.join(here, 'bench-ws-sink.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
  try {
    const [line] = await once(sink.stdout, 'data');
    const port = Number(line.toString().trim());
    const ws = new WebSocket(`ws://127.0.0.1:${port}`, { perMessageDeflate: false, maxPayload: 64 * 1024 * 1024 });
    await once(ws, 'open');
    const ask = () =>
      new Promise((resolve) => {
        ws.once('message', (d) => resolve(Number(d.toString())));
        ws.send('?');
      });
    // produce direction
    const chunk = Buffer.alloc(messageBytes, 0x33);
    let t0 = performance.now();
    let sent = 0;
    while (sent < totalBytes) {
      ws.send(chunk);
      sent += messageBytes;
      if (ws.bufferedAmount > 8 * 1024 * 1024) await new Promise((r) => setTimeout(r, 1));
    }
    const received = await ask();
    const up = { bytes: received, seconds: (performance.now() - t0) / 1000 };
    // consume direction
    let got = 0;
    t0 = performance.now();
    const done = new Promise((resolve) => {
      ws.on('message', (d, isBinary) => {
        if (isBinary) got += d.length;
        else if (d.toString() === 'done') resolve();
      });
    });
    ws.send(`send:${totalBytes}:${messageBytes}`);
    await done;
    const down = { bytes: got, seconds: (performance.now() - t0) / 1000 };
    ws.close();
    return {
      messageBytes,
      produceMbPerSec: up.bytes / 1e6 / up.seconds,
      consumeMbPerSec: down.bytes / 1e6 / down.seconds,
    };
  } finally {
    sink.stdin.end();
    await once(sink, 'exit').catch(() => undefined);
  }
}

/**
 * The floor under one-at-a-time produce latency for any design that speaks
 * `ws` between two Node processes: the client sends a `requestBytes` binary
 * message and waits for the server's `responseBytes` answer, `count` times
 * (after `warmup`). With `appendFile` the server first writes each request to
 * a file (writeSync, no fsync: what a broker with flush os must do before
 * its ack). Returns latency percentiles in microseconds.
 */
export async function wsRoundTripFloor({ count, warmup = 1000, requestBytes, responseBytes, appendFile = false }) {
  const sink = spawn(process.execPath, [path.join(here, 'bench-ws-sink.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const tmp = appendFile ? await mkdtemp(path.join(os.tmpdir(), 'bench-rtt-')) : null;
  try {
    const [line] = await once(sink.stdout, 'data');
    const port = Number(line.toString().trim());
    const ws = new WebSocket(`ws://127.0.0.1:${port}`, { perMessageDeflate: false });
    await once(ws, 'open');
    const ready = once(ws, 'message');
    ws.send(`echo:${responseBytes}${tmp ? `:${path.join(tmp, 'append.log')}` : ''}`);
    await ready;
    let resolveNext = () => undefined;
    ws.on('message', () => resolveNext());
    const request = Buffer.alloc(requestBytes, 0x44);
    const samples = new Float64Array(count);
    for (let i = -warmup; i < count; i++) {
      const t0 = performance.now();
      await new Promise((resolve) => {
        resolveNext = resolve;
        ws.send(request);
      });
      if (i >= 0) samples[i] = (performance.now() - t0) * 1000;
    }
    ws.close();
    samples.sort();
    const q = (p) => samples[Math.min(count - 1, Math.floor(count * p))];
    return { count, requestBytes, responseBytes, appendFile, p50Us: q(0.5), p90Us: q(0.9), p99Us: q(0.99), p999Us: q(0.999), maxUs: samples[count - 1] };
  } finally {
    sink.stdin.end();
    await once(sink, 'exit').catch(() => undefined);
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }
}
