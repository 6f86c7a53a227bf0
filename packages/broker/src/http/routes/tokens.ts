/** POST /tokens: a bearer token for a caller with HTTP Basic credentials or a client certificate (security/http-auth.ts issues it). */
import type { Router } from '../router.js';

export function registerTokenRoutes(router: Router, issue: () => { token: string; expires_at: string; principal: string }): void {
  router.add(
    'POST',
    '/tokens',
    {
      operationId: 'createToken',
      summary: 'A bearer token for the caller (HTTP Basic credentials, or a verified client certificate with no Authorization header; authentication.enabled=true), valid on this broker for http.token.lifetime.ms',
      auth: 'basic',
      responses: {
        200: {
          description: 'The token: send it as Authorization: Bearer <token>',
          schema: { type: 'object', required: ['token', 'expires_at', 'principal'], properties: { token: { type: 'string' }, expires_at: { type: 'string' }, principal: { type: 'string' } } },
        },
      },
    },
    async () => ({ status: 200, body: issue() }),
  );
}
