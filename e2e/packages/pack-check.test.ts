/**
 * Issue 19, packages (the slow part: `npm run test:packages`, about 2 minutes, needs the npm registry or its
 * cache for third-party dependencies): every package is packed, installed alone with its @mq/*
 * dependencies into a fresh ESM project, typechecked strict (every exports subpath and the README's
 * example) and its README example run. Not in the default e2e run (its testMatch is the top directory).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../src/harness.js';

it('every package installs alone from its tarball and its README example runs in strict TypeScript', () => {
  const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'tools', 'pack-check.mjs')], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 540_000 });
  const summary = r.stdout.trim().split('\n').at(-1) ?? '';
  expect({ status: r.status, summary, stderr: r.stderr.slice(-4000) }).toMatchObject({ status: 0 });
  expect(JSON.parse(summary)).toMatchObject({ ok: true, failures: [] });
}, 600_000);
