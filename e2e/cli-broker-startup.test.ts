/**
 * Issue 19: `mq broker start` on a terminal prints a short human summary (ports, data dir, topic count) and
 * then only warnings and errors, as text; piped or redirected (not a TTY) it keeps its JSON logs, which
 * log shippers and every test harness parse. `--log-format text|json` chooses explicitly.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { freePort } from '../tools/free-port.mjs';
import { CLI_BIN, cleanup, makeTempDir, runCli, uniqueName, waitFor } from './src/harness.js';

afterAll(async () => {
  await cleanup();
});

function collect(child: ChildProcess): { text: () => string } {
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  return { text: () => out };
}

function exited(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise((r) => child.once('exit', (code) => r(code)));
}

it('--log-format text: a one-screen summary with ports, data dir and topic count, no JSON lines; "stopped" after SIGTERM', async () => {
  const dir = await makeTempDir('mq-startup-');
  const [port, httpPort] = [await freePort(), await freePort()];
  // A topic from an earlier run, so the summary has one to count.
  const first = spawn(process.execPath, [CLI_BIN, 'broker', 'start', '--data-dir', dir, '--port', String(port), '--http-port', String(httpPort)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const firstOut = collect(first);
  await waitFor(() => firstOut.text().includes('"broker listening"'), { timeout: 30_000, message: 'first start (JSON logs when piped)' });
  const topic = uniqueName('startup');
  expect((await runCli(['topic', 'create', topic, '-b', `127.0.0.1:${port}`])).code).toBe(0);
  first.kill('SIGTERM');
  expect(await exited(first)).toBe(0);
  // Not a TTY: every line is a JSON log record.
  const jsonLines = firstOut.text().trim().split('\n');
  expect(jsonLines.length).toBeGreaterThan(5);
  for (const l of jsonLines) expect(() => JSON.parse(l)).not.toThrow();

  const child = spawn(process.execPath, [CLI_BIN, 'broker', 'start', '--data-dir', dir, '--port', String(port), '--http-port', String(httpPort), '--log-format', 'text'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const out = collect(child);
  try {
    await waitFor(() => out.text().includes('Ctrl-C stops it cleanly'), { timeout: 30_000, message: `text summary (output: ${out.text()})` });
    const lines = out.text().trim().split('\n');
    expect(lines.length).toBeLessThanOrEqual(10);
    expect(lines.filter((l) => l.startsWith('{'))).toEqual([]);
    expect(out.text()).toMatch(/^mq broker \d+ is running \(cluster \S+\)$/m);
    expect(out.text()).toContain(`ws://127.0.0.1:${port}`);
    expect(out.text()).toContain(`http://127.0.0.1:${httpPort}`);
    expect(out.text()).toContain(`data dir  ${dir}`);
    expect(out.text()).toMatch(new RegExp(`topics    1 \\(${topic}\\)`));
    expect(out.text()).toContain('network   loopback only: other machines cannot connect');
  } finally {
    child.kill('SIGTERM');
  }
  expect(await exited(child)).toBe(0);
  expect(out.text().trim().split('\n').at(-1)).toBe('stopped');
}, 90_000);

const hasScript = spawnSync('script', ['--version']).status === 0;

(hasScript ? it : it.skip)('auto (the default) on a real terminal: the summary, not JSON (run under script(1) for a pty)', async () => {
  const dir = await makeTempDir('mq-startup-tty-');
  const [port, httpPort] = [await freePort(), await freePort()];
  const cmd = [process.execPath, CLI_BIN, 'broker', 'start', '--data-dir', dir, '--port', String(port), '--http-port', String(httpPort)].join(' ');
  const child = spawn('script', ['-qfec', cmd, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, MQ_LOG_FORMAT: '' } });
  const out = collect(child);
  try {
    await waitFor(() => out.text().includes('Ctrl-C stops it cleanly'), { timeout: 30_000, message: `summary on a tty (output: ${out.text()})` });
    expect(out.text()).toMatch(/mq broker \d+ is running/);
    expect(out.text()).not.toMatch(/"msg":"broker listening"/);
    expect(out.text()).toMatch(/topics {4}0 \(create one with: mq topic create <name>\)/);
  } finally {
    child.kill('SIGTERM');
    await exited(child);
  }
}, 60_000);

it('--host 0.0.0.0 without allow.insecure=true: refused with one clear line; with it, a warning at start', async () => {
  const dir = await makeTempDir('mq-insecure-');
  const [port, httpPort] = [await freePort(), await freePort()];
  const base = ['broker', 'start', '--data-dir', dir, '--host', '0.0.0.0', '--port', String(port), '--http-port', String(httpPort)];
  const refused = await runCli(base);
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toMatch(/^mq: .*refusing to listen beyond loopback .*0\.0\.0\.0.*allow\.insecure=true/m);
  const child = spawn(process.execPath, [CLI_BIN, ...base, '--config-set', 'allow.insecure=true', '--log-format', 'text'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const out = collect(child);
  try {
    await waitFor(() => out.text().includes('Ctrl-C stops it cleanly'), { timeout: 30_000, message: `text summary (output: ${out.text()})` });
    expect(out.text()).toContain('network   0.0.0.0: other machines can connect, with no authentication');
    expect(out.text()).toMatch(/INSECURE: listening beyond loopback/);
  } finally {
    child.kill('SIGTERM');
  }
  expect(await exited(child)).toBe(0);
}, 90_000);
