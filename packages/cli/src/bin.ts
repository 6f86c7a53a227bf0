#!/usr/bin/env node
import { run } from './cli.js';

const controller = new AbortController();
let signals = 0;
const onSignal = () => {
  // First signal: stop cleanly (close the broker, the consumer, ...). Second: exit now.
  if (++signals > 1) process.exit(130);
  controller.abort();
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0); // `mq consume ... | head`
  throw err;
});

const code = await run(process.argv.slice(2), { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env }, controller.signal);
// Exit once output is written, even if a socket or timer lingers.
process.stdout.write('', () => process.exit(code));
