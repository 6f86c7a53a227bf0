import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readClusterSecret } from './cluster-auth.js';

describe('cluster.secret.file', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mq-secret-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, content: string, mode: number) => {
    const f = path.join(dir, name);
    writeFileSync(f, content);
    chmodSync(f, mode);
    return f;
  };

  it('unset: no secret', () => {
    expect(readClusterSecret('')).toBeUndefined();
  });

  it('reads a 0600 (or 0400) file of at least 16 bytes; a trailing newline is not part of the secret', () => {
    expect(readClusterSecret(file('ok', 'sixteen-bytes-ok\n', 0o600))!.toString()).toBe('sixteen-bytes-ok');
    expect(readClusterSecret(file('ro', 'sixteen-bytes-ok\r\n', 0o400))!.toString()).toBe('sixteen-bytes-ok');
  });

  it('refuses, with one clear INVALID_CONFIG, a file others may read, a short secret, or a missing file', () => {
    expect(() => readClusterSecret(file('open', 'sixteen-bytes-ok', 0o644))).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringMatching(/mode 0644; only its owner may read it \(chmod 600/) }));
    expect(() => readClusterSecret(file('group', 'sixteen-bytes-ok', 0o640))).toThrow(/mode 0640/);
    expect(() => readClusterSecret(file('short', 'fifteen-bytes!!\n', 0o600))).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringMatching(/holds 15 bytes; a cluster secret has at least 16/) }));
    expect(() => readClusterSecret(path.join(dir, 'missing'))).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringMatching(/cannot read/) }));
  });
});
