/**
 * A throwaway PKI for the TLS tests, made at run time with Debian's openssl
 * (tools/ensure-debian-package.sh installs it in CI): a CA, server
 * certificates (good, expired, for another host name), a client certificate
 * and a second, unrelated CA.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface Pki {
  dir: string;
  ca: string;
  otherCa: string;
  /** Signs a certificate for `cn` with these SANs; returns the cert and key file paths. */
  issue(name: string, cn: string, san: string | undefined, days?: number, ca?: 'ca' | 'other'): { cert: string; key: string };
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

export function makePki(): Pki {
  const dir = mkdtempSync(path.join(tmpdir(), 'mq-pki-'));
  for (const ca of ['ca', 'other']) openssl(dir, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${ca}.key`, '-out', `${ca}.pem`, '-days', '2', '-subj', `/CN=mq-test-${ca}`]);
  return {
    dir,
    ca: path.join(dir, 'ca.pem'),
    otherCa: path.join(dir, 'other.pem'),
    issue(name, cn, san, days = 2, ca = 'ca') {
      openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`]);
      const ext = path.join(dir, `${name}.ext`);
      writeFileSync(ext, san ? `subjectAltName=${san}\n` : 'basicConstraints=CA:FALSE\n');
      openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.pem`, '-days', String(days), '-extfile', ext]);
      return { cert: path.join(dir, `${name}.pem`), key: path.join(dir, `${name}.key`) };
    },
  };
}
