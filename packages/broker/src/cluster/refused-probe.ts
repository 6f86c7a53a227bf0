/**
 * One TCP dial that tells a dead process from a slow one: a refused
 * connection (ECONNREFUSED: nothing listens on the port) means the broker's
 * process is gone; an accepted one, another error or no answer within
 * `timeoutMs` proves nothing (a paused process is still accepted by its
 * kernel), and the broker's session decides.
 */
import net from 'node:net';

export const DEFAULT_PROBE_TIMEOUT_MS = 1000;

export function dialRefused(host: string, port: number, timeoutMs = DEFAULT_PROBE_TIMEOUT_MS): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (refused: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(refused);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('connect', () => done(false));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code === 'ECONNREFUSED'));
  });
}
