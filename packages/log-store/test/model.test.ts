/**
 * Property test: random sequences of append / read / truncate / roll /
 * deleteRecordsBefore / flush / reopen (clean and after a simulated crash)
 * run against the real log and against a simple in-memory model; after
 * every step the two must agree.
 */
import fc from 'fast-check';
import { iterateBatches } from '@mq/protocol/batch';
import { openLog, type Log } from '../src/log.js';
import type { LogOptions } from '../src/options.js';
import { batch, tempDir, values } from './helpers.js';

interface ModelBatch {
  base: number;
  last: number;
  values: string[];
  bytes: number;
}

class Model {
  batches: ModelBatch[] = [];
  start = 0;
  end = 0;

  append(vals: string[], bytes: number): void {
    this.batches.push({ base: this.end, last: this.end + vals.length - 1, values: vals, bytes });
    this.end += vals.length;
  }

  truncateTo(offset: number): void {
    if (offset >= this.end) return;
    if (offset < this.start) {
      this.batches = [];
      this.start = this.end = offset;
      return;
    }
    const i = this.batches.findIndex((b) => b.last >= offset);
    if (this.batches[i]!.base < this.start) {
      // The batch holding the log start goes whole: the log restarts empty at its start.
      this.batches = [];
      this.end = this.start;
      return;
    }
    this.end = this.batches[i]!.base;
    this.batches.splice(i);
  }

  deleteBefore(offset: number): void {
    if (offset > this.start) this.start = offset;
  }

  /** Values the log must hold from the log start on (whole batches containing offsets >= start). */
  visible(): string[] {
    return this.batches.filter((b) => b.last >= this.start).flatMap((b) => b.values);
  }
}

type Op =
  | { op: 'append'; counts: number[]; pad: number }
  | { op: 'read'; at: number; maxBytes: number }
  | { op: 'truncate'; at: number }
  | { op: 'deleteBefore'; at: number }
  | { op: 'roll' }
  | { op: 'flush' }
  | { op: 'reopen'; crash: boolean };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('append' as const), counts: fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 3 }), pad: fc.integer({ min: 0, max: 120 }) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('read' as const), at: fc.double({ min: 0, max: 1, noNaN: true }), maxBytes: fc.integer({ min: 0, max: 2000 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('truncate' as const), at: fc.double({ min: 0, max: 1.1, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('deleteBefore' as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.constant({ op: 'roll' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'flush' as const }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('reopen' as const), crash: fc.boolean() }) },
);

async function readAll(log: Log): Promise<string[]> {
  const out: string[] = [];
  let next = log.logStartOffset;
  while (next < log.logEndOffset) {
    const r = await log.read(next, 700);
    expect(r.records.length).toBeGreaterThan(0);
    out.push(...values(r.records).map((v) => v.value));
    next = r.nextOffset;
  }
  return out;
}

test('property: the log behaves like the in-memory model across random operation sequences', async () => {
  let counter = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 5, maxLength: 30 }), fc.constantFrom(0, 100, 1000), async (ops, indexIntervalBytes) => {
      const { dir, cleanup } = tempDir();
      const options: LogOptions = { segmentBytes: 1500, indexIntervalBytes, checkpointIntervalMs: 0, retentionMs: -1 };
      let log = await openLog(dir, options);
      const model = new Model();
      try {
        for (const o of ops) {
          const span = model.end - model.start;
          switch (o.op) {
            case 'append': {
              const bufs = o.counts.map((n) => batch(`v${counter++}`, n, { valueBytes: o.pad }));
              const res = await log.append(Buffer.concat(bufs));
              expect(res.baseOffset).toBe(model.end);
              bufs.forEach((b, i) => model.append(values(b).map((v) => v.value), b.length + 0 * i));
              break;
            }
            case 'read': {
              const at = model.start + Math.floor(o.at * span);
              const r = await log.read(at, o.maxBytes);
              if (at === model.end) {
                expect(r.records.length).toBe(0);
                break;
              }
              const spans = [...iterateBatches(r.records)];
              expect(spans.length).toBeGreaterThan(0);
              if (spans.length > 1) expect(r.records.length).toBeLessThanOrEqual(o.maxBytes);
              const first = model.batches.findIndex((b) => b.last >= at);
              spans.forEach((s, i) => {
                const m = model.batches[first + i]!;
                expect([s.header.baseOffset, s.header.baseOffset + s.header.lastOffsetDelta]).toEqual([m.base, m.last]);
              });
              expect(r.nextOffset).toBe(model.batches[first + spans.length - 1]!.last + 1);
              break;
            }
            case 'truncate': {
              const at = Math.floor(o.at * model.end);
              await log.truncateTo(at);
              model.truncateTo(at);
              break;
            }
            case 'deleteBefore': {
              const at = model.start + Math.floor(o.at * span);
              await log.deleteRecordsBefore(at);
              model.deleteBefore(at);
              break;
            }
            case 'roll':
              await log.roll();
              break;
            case 'flush':
              await log.flush();
              break;
            case 'reopen':
              if (o.crash) await (log as unknown as { abandon(): Promise<void> }).abandon();
              else await log.close();
              log = await openLog(dir, options);
              expect(log.recovery.clean).toBe(!o.crash);
              expect(log.recovery.truncated).toBeNull();
              break;
          }
          expect(log.logEndOffset).toBe(model.end);
          expect(log.logStartOffset).toBe(model.start);
        }
        expect(await readAll(log)).toEqual(model.visible());
      } finally {
        await log.close().catch(() => undefined);
        cleanup();
      }
    }),
    { numRuns: 40, seed: 1234 },
  );
}, 60_000);
