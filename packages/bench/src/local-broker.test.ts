import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BROKER_HEAP_FLAGS, startLocalBroker } from './local-broker.js';

// A stand-in for `mq broker start`: prints the broker's "listening" log line
// with the port it was given (or 4242 for --port 0) and runs until SIGTERM.
const FAKE = `
const args = process.argv.slice(2);
const dataDir = args[args.indexOf('--data-dir') + 1];
if (process.env.FAKE_MODE === 'crash') { console.error('cannot open ' + dataDir); process.exit(3); }
const sets = args.filter((a, i) => args[i - 1] === '--config-set');
console.log('not json: starting');
const heap = process.execArgv;
console.log(JSON.stringify({ level: 30, msg: 'broker listening', port: 4242, httpPort: 4243, sets, heap }));
process.on('SIGTERM', () => process.exit(0));
setInterval(() => {}, 1000);
`;

describe('startLocalBroker', () => {
  let dir: string;
  let script: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'bench-lb-test-'));
    script = path.join(dir, 'fake-mq.mjs');
    await writeFile(script, FAKE);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    delete process.env.FAKE_MODE;
  });

  it('reads the port from the "broker listening" line and removes its temporary data dir on close', async () => {
    const lines: string[] = [];
    const broker = await startLocalBroker({
      command: [process.execPath, script],
      config: { 'log.flush.policy': 'always' },
      log: { write: (c: Buffer | string) => lines.push(c.toString()) } as unknown as NodeJS.WritableStream,
    });
    expect(broker.port).toBe(4242);
    expect(broker.bootstrap).toBe('127.0.0.1:4242');
    expect(existsSync(broker.dataDir)).toBe(true);
    expect(lines.join('')).toContain('"sets":["log.flush.policy=always"]');
    await broker.close();
    expect(existsSync(broker.dataDir)).toBe(false);
  });

  it('runs the broker with BROKER_HEAP_FLAGS by default, with V8 defaults when heapFlags is empty', async () => {
    const heapOf = async (options: { heapFlags?: string[] }): Promise<string[]> => {
      const lines: string[] = [];
      const broker = await startLocalBroker({
        command: [process.execPath, script],
        ...options,
        log: { write: (c: Buffer | string) => lines.push(c.toString()) } as unknown as NodeJS.WritableStream,
      });
      await broker.close();
      const line = lines.join('').split('\n').find((l) => l.includes('broker listening'))!;
      return (JSON.parse(line) as { heap: string[] }).heap;
    };
    expect(BROKER_HEAP_FLAGS).toContain('--initial-old-space-size=128');
    expect(await heapOf({})).toEqual([...BROKER_HEAP_FLAGS]);
    expect(await heapOf({ heapFlags: [] })).toEqual([]);
  });

  it('leaves no temporary data dir behind when the broker cannot be spawned or dies before listening', async () => {
    const privateTmp = await mkdtemp(path.join(dir, 'tmp-'));
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = privateTmp;
    try {
      await expect(startLocalBroker({ command: [path.join(dir, 'no-such-node')] })).rejects.toThrow(/ENOENT/);
      process.env.FAKE_MODE = 'crash';
      await expect(startLocalBroker({ command: [process.execPath, script] })).rejects.toMatchObject({ code: 'BROKER_NOT_AVAILABLE' });
      expect(await readdir(privateTmp)).toEqual([]);
    } finally {
      delete process.env.FAKE_MODE;
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  });

  it('fails with the broker output when the process exits before listening', async () => {
    process.env.FAKE_MODE = 'crash';
    try {
      await expect(startLocalBroker({ command: [process.execPath, script] })).rejects.toMatchObject({ code: 'BROKER_NOT_AVAILABLE', message: expect.stringContaining('cannot open') });
    } finally {
      delete process.env.FAKE_MODE;
    }
  });
});
