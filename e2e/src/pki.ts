/**
 * A throwaway PKI for e2e TLS tests, made at run time with Debian's openssl
 * (tools/ensure-debian-package.sh installs it in CI): a CA and a second,
 * unrelated one, and certificates either signs; plus an HTTPS call that
 * trusts the CA and may present a client certificate.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import path from 'node:path';
import { makeTempDir } from './harness.js';

export interface Issued {
  cert: string;
  key: string;
}

export interface Pki {
  dir: string;
  /** The CA's certificate file, and the unrelated CA's. */
  ca: string;
  otherCa: string;
  /** A certificate for `cn` (subjectAltName `san`, e.g. "DNS:localhost,IP:127.0.0.1"), signed by the CA or the other one. */
  issue(name: string, cn: string, san?: string, ca?: 'ca' | 'other'): Issued;
}

export async function makePki(): Promise<Pki> {
  const dir = await makeTempDir('mq-e2e-pki-');
  const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  for (const ca of ['ca', 'other']) openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${ca}.key`, '-out', `${ca}.pem`, '-days', '2', '-subj', `/CN=mq-e2e-${ca}`]);
  return {
    dir,
    ca: path.join(dir, 'ca.pem'),
    otherCa: path.join(dir, 'other.pem'),
    issue(name, cn, san, ca = 'ca') {
      openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`]);
      writeFileSync(path.join(dir, `${name}.ext`), san ? `subjectAltName=${san}\n` : 'basicConstraints=CA:FALSE\n');
      openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.pem`, '-days', '2', '-extfile', `${name}.ext`]);
      return { cert: path.join(dir, `${name}.pem`), key: path.join(dir, `${name}.key`) };
    },
  };
}

/** Broker config of a TLS-only broker that requires client certificates, with authentication and ACLs on (admin the super user). */
export function mtlsBrokerConfig(pki: Pki, server: Issued): string[] {
  return [
    `tls.cert.file=${server.cert}`,
    `tls.key.file=${server.key}`,
    `tls.ca.file=${pki.ca}`,
    'tls.client.auth=required',
    'authentication.enabled=true',
    'authorization.enabled=true',
    'super.users=User:admin',
  ];
}

export interface HttpsAnswer {
  status: number;
  body: any;
}

/** One HTTPS request to 127.0.0.1:`port` trusting `ca` (server name localhost), with a client certificate when given. */
export function httpsCall(port: number, ca: string, method: string, p: string, options: { client?: Issued; body?: unknown; auth?: string } = {}): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.auth) headers.authorization = options.auth;
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: p,
        method,
        ca: readFileSync(ca),
        servername: 'localhost',
        agent: false,
        headers,
        ...(options.client ? { cert: readFileSync(options.client.cert), key: readFileSync(options.client.key) } : {}),
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => {
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON: the text itself
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on('error', reject);
    req.end(options.body !== undefined ? JSON.stringify(options.body) : undefined);
  });
}
