import { Writable } from 'node:stream';
import { isMqError } from '@mq/protocol/errors';
import { runBenchFromArgs, type BenchArgs } from './command.js';
import { majority } from './targets/mq.js';

function sink(): Writable & { text: () => string } {
  const chunks: string[] = [];
  const w = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  }) as Writable & { text: () => string };
  w.text = () => chunks.join('');
  return w;
}

const base = { target: 'memory', quiet: true } as const;

describe('runBenchFromArgs', () => {
  it('prints exactly one JSON object with --json', async () => {
    const out = sink();
    const result = await runBenchFromArgs({ ...base, workload: 'produce', records: 1000, size: 10, json: true } as BenchArgs, { out, err: sink() });
    const lines = out.text().trim().split('\n');
    expect(lines).toHaveLength(1);
    const parsed = JSON.parse(lines[0]);
    expect(parsed).toMatchObject({ workload: 'produce', target: 'memory', records: 1000, bytes: 10_000, errors: 0 });
    for (const k of ['p50', 'p90', 'p99', 'p999', 'max']) expect(typeof parsed.latencyMs[k]).toBe('number');
    expect(parsed.environment.node).toBe(process.version);
    expect(result.records).toBe(1000);
  });

  it('prints a table without --json', async () => {
    const out = sink();
    const err = sink();
    await runBenchFromArgs({ target: 'memory', workload: 'consume', records: 2000, quiet: true } as BenchArgs, { out, err });
    expect(out.text()).toMatch(/^workload\s+consume \(memory\)$/m);
    expect(out.text()).toMatch(/^records\/s\s+[\d,]+$/m);
    expect(out.text()).toMatch(/^environment\s+.+node v\d+/m);
  });

  it('runs e2e against the memory target', async () => {
    const out = sink();
    const r = await runBenchFromArgs({ ...base, workload: 'e2e', rate: 5000, records: 500, json: true } as BenchArgs, { out, err: sink() });
    expect(r.records).toBe(500);
    expect(r.targetRate).toBe(5000);
  });

  it('rejects a peer target without an address, and broker settings with --bootstrap', async () => {
    const rejectCode = async (args: Partial<BenchArgs>): Promise<string | undefined> => {
      try {
        await runBenchFromArgs({ quiet: true, workload: 'produce', ...args } as BenchArgs, { out: sink(), err: sink() });
      } catch (e) {
        return isMqError(e) ? e.code : String(e);
      }
      return undefined;
    };
    expect(await rejectCode({ target: 'nats' })).toBe('INVALID_ARGUMENT');
    expect(await rejectCode({ target: 'mq', bootstrap: '127.0.0.1:1', flush: 'always' })).toBe('INVALID_ARGUMENT');
    // --replicas: a whole number, and only where a cluster can hold the replicas (checked before connecting).
    expect(await rejectCode({ target: 'memory', replicas: 3 })).toBe('INVALID_ARGUMENT');
    expect(await rejectCode({ target: 'redis', 'peer-address': '127.0.0.1:1', replicas: 3 })).toBe('INVALID_ARGUMENT');
    expect(await rejectCode({ target: 'mq', replicas: 3 })).toBe('INVALID_ARGUMENT');
    expect(await rejectCode({ target: 'nats', 'peer-address': '127.0.0.1:1', replicas: 0 })).toBe('INVALID_ARGUMENT');
    expect(await rejectCode({ target: 'nats', 'peer-address': '127.0.0.1:1', replicas: 1.5 })).toBe('INVALID_ARGUMENT');
  });

  it('takes a replicated topic\'s min.insync.replicas as a majority of its replicas', () => {
    expect([1, 2, 3, 4, 5].map(majority)).toEqual([1, 2, 2, 3, 3]);
  });
});
