/**
 * The web console's files at /console (built into dist/console by scripts/build-console.mjs): read once at
 * start, served from memory with a content security policy that allows only this broker's own origin (and
 * WebSocket connections, for the live tail over the client port). Not part of the API document.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HttpResponse, Router } from '../router.js';

/** Where the build puts the console: dist/console, next to dist/http. */
export const CONSOLE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'console');

const FILES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
};

const SECURITY_HEADERS = {
  // connect-src: the HTTP API on this origin, and the client port's WebSocket (another port: ws: and wss:).
  'content-security-policy': "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

/** What the console's live tail needs to reach this broker's client listener. */
export interface ConsoleSession {
  /** The client (WebSocket) listener's port. */
  port: number;
  /** It speaks TLS only (wss://). */
  tls: boolean;
  /** It requires a login: the tail logs in with a token from POST /tokens (the console user's Basic credentials). */
  authentication: boolean;
}

export function registerConsoleRoutes(router: Router, session: () => ConsoleSession, dir: string = CONSOLE_DIR): void {
  const files = new Map<string, HttpResponse>();
  for (const [name, contentType] of Object.entries(FILES)) {
    let text: string;
    try {
      text = readFileSync(path.join(dir, name), 'utf8');
    } catch {
      continue; // not built: /console says so
    }
    files.set(name, { status: 200, text, contentType, headers: SECURITY_HEADERS });
  }
  const missing: HttpResponse = {
    status: 404,
    text: 'the web console is not built into this broker (npm run build in packages/broker builds it into dist/console)\n',
  };
  const index = files.get('index.html') ?? missing;
  router.add('GET', '/console', { documented: false }, async () => index);
  // Before /console/{file}: the first matching route serves. Any authenticated caller may read it (as the page itself).
  router.add('GET', '/console/session', { documented: false }, async () => ({ status: 200, body: session() }));
  router.add('GET', '/console/{file}', { documented: false }, async (req) => files.get(req.params.file ?? '') ?? (req.params.file === 'index.html' ? missing : { status: 404, text: 'no such file\n' }));
}
