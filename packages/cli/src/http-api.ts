/**
 * A client command's call to a broker's HTTP API (`mq cluster start`'s
 * readiness check, `mq cluster status`): `https://` with the trust and client
 * certificate of the --tls-* flags when the API speaks TLS, HTTP Basic with
 * the --user login when one is given (the broker accepts Basic over TLS or
 * from loopback), as the command's WebSocket client would connect.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { TlsOptions } from '@mq/client';
import { tlsOf, type ClientArgs } from './options.js';

export interface HttpApiAccess {
  /** TLS settings (`https://`), or undefined for `http://`. */
  tls: TlsOptions | undefined;
  /** The Authorization header of the --user login, if any. */
  authorization: string | undefined;
}

/** How a command reaches the HTTP API: TLS when its flags ask for it (or `tls` says the brokers speak it), Basic when logged in. */
export function httpApiAccess(args: Partial<ClientArgs>, tls?: boolean): HttpApiAccess {
  const flags = tlsOf(args as ClientArgs);
  const t = 'tls' in flags ? flags.tls : tls ? {} : undefined;
  const authorization = args.user !== undefined && args.password !== undefined ? `Basic ${Buffer.from(`${args.user}:${args.password}`).toString('base64')}` : undefined;
  return { tls: t, authorization };
}

/** GET `path` of the HTTP API at host:port: its status and JSON body (undefined when not JSON); rejects on a network or TLS error. */
export function getJson<T>(access: HttpApiAccess, host: string, port: number, path: string, timeoutMs = 2000): Promise<{ status: number; body: T | undefined }> {
  return new Promise((resolve, reject) => {
    const t = access.tls;
    const headers = access.authorization ? { authorization: access.authorization } : undefined;
    const options = { host, port, path, method: 'GET', headers, timeout: timeoutMs };
    const onAnswer = (res: import('node:http').IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        let body: T | undefined;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as T;
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
      res.on('error', reject);
    };
    const req = t
      ? httpsRequest(
          {
            ...options,
            // Files the --tls-* flags named, read as Buffers (tlsOf).
            ...(t.ca !== undefined ? { ca: t.ca as Buffer } : {}),
            ...(t.cert !== undefined ? { cert: t.cert as Buffer, key: t.key as Buffer } : {}),
            ...(t.rejectUnauthorized === false ? { rejectUnauthorized: false } : {}),
            // The name the certificate must carry: --tls-servername, else the host dialled (node:https's default).
            ...(t.servername !== undefined ? { servername: t.servername } : {}),
          },
          onAnswer,
        )
      : httpRequest(options, onAnswer);
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** Whether an error is the server's certificate failing verification (retrying will not help). */
export function isCertificateError(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? '';
  return /CERT|SIGNATURE|SELF_SIGNED|ALTNAME|ISSUER/.test(code);
}
