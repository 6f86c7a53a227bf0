/**
 * Issue 19, packages (the fast part, in every run): each package's manifest says what npm users need —
 * Apache-2.0 with the root LICENSE shipped, engines, repository, keywords, caret ranges for @mq/*
 * dependencies — and each README that has a TypeScript example has it as its first ```ts block, which
 * `npm run test:packages` (e2e/packages/pack-check.test.ts) packs, installs alone and runs.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { allManifestProblems, readmeExample } from '../tools/pack-check.mjs';
import { REPO_ROOT } from './src/harness.js';

it('every package manifest is publishable as it stands', async () => {
  const problems = await allManifestProblems();
  expect(Object.keys(problems).sort()).toEqual(['@mq/bench', '@mq/broker', '@mq/cli', '@mq/client', '@mq/consensus', '@mq/idempotent-consumer', '@mq/kafka-protocol', '@mq/log-store', '@mq/otel', '@mq/protocol', '@mq/replication', '@mq/sim']);
  expect(problems).toEqual(Object.fromEntries(Object.keys(problems).map((k) => [k, []])));
});

it('the README examples that pack-check runs are the TypeScript ones, and the consensus one elects before it proposes on loopback', async () => {
  const withExample = [];
  for (const dir of ['bench', 'broker', 'client', 'consensus', 'log-store', 'protocol', 'replication']) {
    const example = readmeExample(await readFile(path.join(REPO_ROOT, 'packages', dir, 'README.md'), 'utf8'));
    if (example) withExample.push(dir);
  }
  expect(withExample).toEqual(['bench', 'broker', 'client', 'consensus', 'log-store', 'protocol', 'replication']);
  const consensus = readmeExample(await readFile(path.join(REPO_ROOT, 'packages', 'consensus', 'README.md'), 'utf8'))!;
  expect(consensus).not.toMatch(/10\.0\.0\./);
  expect(consensus.indexOf("role === 'leader'")).toBeLessThan(consensus.indexOf('.propose('));
  const replication = readmeExample(await readFile(path.join(REPO_ROOT, 'packages', 'replication', 'README.md'), 'utf8'))!;
  const manifest = JSON.parse(await readFile(path.join(REPO_ROOT, 'packages', 'replication', 'package.json'), 'utf8')) as { dependencies?: object; peerDependencies?: object };
  for (const [, spec] of replication.matchAll(/from '(@mq\/[a-z-]+)/g)) {
    if (spec === '@mq/replication') continue;
    expect({ spec, declared: spec! in { ...manifest.dependencies, ...manifest.peerDependencies } }).toEqual({ spec, declared: true });
  }
});
