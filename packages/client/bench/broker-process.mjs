// A broker of this checkout's build in its own process (broker-child.mjs,
// flush os) on a fresh data directory, for the bench scripts: resolves once
// it listens. The process and its directory go when this process exits.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The broker's V8 heap flags, as `npm start` and `mq bench` run it (packages/broker/README.md, "Node heap settings"). */
export const BROKER_HEAP_FLAGS = ['--min-semi-space-size=16', '--max-semi-space-size=32', '--initial-old-space-size=128'];

/**
 * Starts the broker (`dist`: another build's @mq/broker dist directory; `env`: the child's environment, e.g.
 * broker-child.mjs's MQ_BENCH_PROFILE); returns its bootstrap address and the child process.
 */
export async function startBrokerProcess({ nodeFlags = BROKER_HEAP_FLAGS, tag = 'bench', dist = path.join(here, '../../broker/dist'), env = process.env } = {}) {
  const dataDir = mkdtempSync(path.join(tmpdir(), `mq-${tag}-`));
  const child = spawn(process.execPath, [...nodeFlags, path.join(here, 'broker-child.mjs'), dist, dataDir], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env,
  });
  process.once('exit', () => {
    child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });
  const port = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /port (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`broker exited ${code}`)));
  });
  return { bootstrap: `127.0.0.1:${port}`, child };
}
