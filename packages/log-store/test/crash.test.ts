/**
 * Crash tests with a real child process: it appends in a loop (several
 * appends in flight) and is killed with SIGKILL at a random moment. After
 * reopening, every batch up to the recovered end is intact (CRC), offsets
 * are contiguous, and every append the child saw resolve is there, under
 * every flush policy. The kill time comes from a seeded generator; the seed
 * is printed in a failure message so a run can be replayed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeBatchSync, iterateBatches } from '@mq/protocol/batch';
import { openLog } from '../src/log.js';
import { tempDir } from './helpers.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const SEED = Number(process.env.MQ_CRASH_SEED ?? Date.now() % 100_000);
const ROUNDS = 3;

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 0x1_0000_0000;
  };
}

interface Ack {
  seq: number;
  base: number;
  last: number;
}

const children = new Set<ChildProcess>();
afterEach(() => {
  for (const c of children) c.kill('SIGKILL');
  children.clear();
});

/** Runs the writer until `killAfterMs` after it opened the log, then SIGKILLs it. */
function runWriter(dir: string, policy: string, startSeq: number, killAfterMs: number): Promise<{ acks: Ack[]; opened: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', path.join(here, 'fixtures/ts-loader.mjs'), path.join(here, 'fixtures/crash-writer.ts'), dir, policy, '8', String(startSeq)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    const acks: Ack[] = [];
    let opened = '';
    let pending = '';
    let stderr = '';
    let timer: NodeJS.Timeout | null = null;
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        const [kind, a, b, c] = line.split(' ');
        if (kind === 'ack') acks.push({ seq: Number(a), base: Number(b), last: Number(c) });
        else if (kind === 'open') {
          opened = line;
          timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
        }
      }
    });
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code, signal) => {
      children.delete(child);
      if (timer) clearTimeout(timer);
      if (signal !== 'SIGKILL') reject(new Error(`writer exited with ${code ?? signal} before the kill: ${stderr}`));
      else resolve({ acks, opened });
    });
  });
}

describe.each(['always', 'interval', 'os'])('SIGKILL under flush %s', (policy) => {
  test(`every resolved append survives, offsets stay contiguous and batches intact (seed ${SEED})`, async () => {
    const random = rng(SEED + policy.length);
    const { dir, cleanup } = tempDir('mq-crash-');
    try {
      const acked = new Map<number, Ack>();
      for (let round = 0; round < ROUNDS; round++) {
        const { acks } = await runWriter(dir, policy, round * 1_000_000, 50 + Math.floor(random() * 400));
        for (const a of acks) acked.set(a.seq, a);
        expect(acks.length).toBeGreaterThan(0);

        const log = await openLog(dir, { segmentBytes: 64 * 1024, indexIntervalBytes: 1024, checkpointIntervalMs: 0 });
        try {
          expect(log.recovery.clean).toBe(false);
          // Read everything back; each batch must pass its CRC and follow the previous one.
          const seen = new Map<number, { seq: number; last: number }>();
          let next = log.logStartOffset;
          while (next < log.logEndOffset) {
            const r = await log.read(next, 256 * 1024);
            for (const span of iterateBatches(r.records)) {
              expect(span.header.baseOffset).toBe(next);
              const decoded = decodeBatchSync(r.records, span.position); // verifies the CRC
              decoded.records.forEach((rec, i) => {
                expect(rec.offset).toBe(next + i);
                expect(rec.value!.toString().startsWith(`s${rec.key!.toString().slice(1)}-${i}-`)).toBe(true);
              });
              seen.set(span.header.baseOffset, { seq: Number(decoded.records[0]!.key!.toString().slice(1)), last: span.header.baseOffset + span.header.lastOffsetDelta });
              next = span.header.baseOffset + span.header.lastOffsetDelta + 1;
            }
          }
          expect(next).toBe(log.logEndOffset);
          for (const a of acked.values()) {
            const got = seen.get(a.base);
            if (!got || got.seq !== a.seq || got.last !== a.last) {
              throw new Error(`acked append seq ${a.seq} at [${a.base}, ${a.last}] is missing after recovery (round ${round}, seed ${SEED}); found ${JSON.stringify(got)}`);
            }
          }
        } finally {
          await log.close();
        }
      }
    } finally {
      cleanup();
    }
  }, 40_000);
});
