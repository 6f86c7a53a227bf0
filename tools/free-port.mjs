// Free loopback ports for tests and benchmarks, chosen below the kernel's
// ephemeral range. A port from listen(0) comes out of that range, and so does
// the local port of every outgoing connection: a test that kills a process
// and restarts it on "its" port can find that port taken meanwhile by some
// client's socket (EADDRINUSE). Ports below the range are never handed out by
// the kernel, so only another picker can collide, and the bind check catches
// that.
import { readFileSync } from 'node:fs';
import net from 'node:net';

const LOWEST = 10_000;

function ephemeralLow() {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && low > LOWEST + 1_000) return low;
  } catch {
    // not Linux: fall through to the IANA dynamic range
  }
  return 49_152;
}

const HIGHEST = ephemeralLow() - 1;

/** Whether `port` can be bound on 127.0.0.1 right now. */
export function portFree(port) {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen({ port, host: '127.0.0.1', exclusive: true }, () => s.close(() => resolve(true)));
  });
}

/** A base port with `count` consecutive ports free after it (count 1: one free port). */
export async function freePortRange(count = 1) {
  for (let attempt = 0; attempt < 1_000; attempt++) {
    const base = LOWEST + Math.floor(Math.random() * (HIGHEST - LOWEST - count));
    let ok = true;
    for (let i = 0; i < count && ok; i++) ok = await portFree(base + i);
    if (ok) return base;
  }
  throw new Error(`no ${count} consecutive free ports between ${LOWEST} and ${HIGHEST}`);
}

/** A TCP port on 127.0.0.1, outside the ephemeral range, that was free a moment ago. */
export function freePort() {
  return freePortRange(1);
}
