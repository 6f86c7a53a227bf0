#!/usr/bin/env node
// Checks every package as a user gets it from npm. For each packages/<name>:
//   1. its manifest: license Apache-2.0 with a LICENSE file equal to the root's, engines.node, repository
//      (the root's URL, this directory), keywords, caret ranges for @mq/* dependencies;
//   2. `npm pack`, and the tarball holds LICENSE, README.md, package.json and no test files;
//   3. a fresh project (ESM, TypeScript strict, NodeNext) that installs ONLY this tarball and the tarballs of
//      its @mq/* dependencies (third-party ones from the npm registry or its cache), plus typescript's
//      @types/node: a dependency the package forgot (a types package its .d.ts need, a devDependency its
//      README imports) fails here;
//   4. strict typecheck of an import of every `exports` subpath and of the README's first ```ts block,
//      then runs that example with node (a broker for the examples that need one: client, bench).
// Ports in examples (9092, 9080, 7001-7003) are replaced by free ones so runs do not collide.
//
//   node tools/pack-check.mjs [--only client,cli] [--keep] [--concurrency 2]
// Needs a build (npm run build). Prints one line per package and a JSON summary; exits 1 on any failure.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort, freePortRange } from './free-port.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const CLI_BIN = path.join(ROOT, 'packages', 'cli', 'dist', 'bin.js');
/** Examples that talk to a running broker (given as MQ_BOOTSTRAP and in place of localhost:9092). */
const NEEDS_BROKER = new Set(['client', 'bench', 'otel', 'idempotent-consumer']);
/** Registry packages a README example imports beside the package (the application's own choices). */
const EXAMPLE_EXTRAS = { otel: ['@opentelemetry/sdk-trace-base@2.12.1', '@opentelemetry/context-async-hooks@2.12.1', '@opentelemetry/core@2.12.1'] };
const EXAMPLE_TIMEOUT_MS = 90_000;

const isMain = import.meta.url === `file://${process.argv[1]}`;
const { values: opts } = isMain
  ? parseArgs({ options: { only: { type: 'string' }, keep: { type: 'boolean', default: false }, concurrency: { type: 'string', default: '2' } } })
  : { values: { keep: false, concurrency: '2' } };

function run(cmd, args, options = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: options.cwd ?? ROOT, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = options.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), options.timeoutMs) : undefined;
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), out, signal });
    });
  });
}

async function must(step, cmd, args, options) {
  const r = await run(cmd, args, options);
  if (r.code !== 0) throw new Error(`${step} failed (exit ${r.code}${r.signal ? `, ${r.signal}` : ''}):\n${r.out.slice(-4000)}`);
  return r.out;
}

/** The first ```ts block of a README, or undefined. */
export function readmeExample(markdown) {
  const m = /^```ts\n([\s\S]*?)^```/m.exec(markdown);
  return m?.[1];
}

export async function loadPackages() {
  const out = new Map();
  for (const dir of (await readdir(path.join(ROOT, 'packages'))).sort()) {
    const file = path.join(ROOT, 'packages', dir, 'package.json');
    if (!existsSync(file)) continue;
    out.set(dir, { dir, path: path.dirname(file), manifest: JSON.parse(await readFile(file, 'utf8')) });
  }
  return out;
}

function mqDeps(manifest) {
  return Object.keys(manifest.dependencies ?? {}).filter((d) => d.startsWith('@mq/'));
}

/** Every problem with a package's manifest and LICENSE. */
export async function manifestProblems(pkg, rootManifest, license) {
  const m = pkg.manifest;
  const problems = [];
  if (m.license !== 'Apache-2.0') problems.push(`license is ${m.license}, not Apache-2.0`);
  const own = await readFile(path.join(pkg.path, 'LICENSE'), 'utf8').catch(() => undefined);
  if (own === undefined) problems.push('no LICENSE file');
  else if (own !== license) problems.push('LICENSE differs from the root LICENSE');
  if (!m.files?.includes('LICENSE')) problems.push('"files" does not list LICENSE');
  if (!m.engines?.node) problems.push('no engines.node');
  if (m.engines?.node !== rootManifest.engines?.node) problems.push(`engines.node ${m.engines?.node} differs from the root's ${rootManifest.engines?.node}`);
  if (m.repository?.url !== rootManifest.repository?.url || m.repository?.directory !== `packages/${pkg.dir}`) problems.push('repository is not the root repository with this directory');
  if (!Array.isArray(m.keywords) || m.keywords.length === 0) problems.push('no keywords');
  for (const field of ['dependencies', 'peerDependencies']) {
    for (const [d, range] of Object.entries(m[field] ?? {})) {
      if (d.startsWith('@mq/') && !range.startsWith('^')) problems.push(`${field}.${d} is "${range}", not a caret range`);
    }
  }
  return problems;
}

async function pack(pkg, dest) {
  const out = await must(`npm pack ${pkg.manifest.name}`, 'npm', ['pack', '--json', '--pack-destination', dest], { cwd: pkg.path });
  const [info] = JSON.parse(out.slice(out.indexOf('[')));
  const files = info.files.map((f) => f.path);
  const problems = [];
  for (const f of ['LICENSE', 'README.md', 'package.json']) if (!files.includes(f)) problems.push(`the tarball has no ${f}`);
  const tests = files.filter((f) => /\.test\.|test-support\//.test(f));
  if (tests.length > 0) problems.push(`the tarball ships tests: ${tests.slice(0, 3).join(', ')}`);
  const maps = files.filter((f) => f.endsWith('.js.map'));
  if (maps.length > 0 && !files.some((f) => f.startsWith('src/'))) problems.push('the tarball ships source maps without their sources');
  return { tarball: path.join(dest, info.filename), problems, files: files.length, bytes: info.size };
}

/** The package and every @mq/* package it depends on, transitively. */
function closure(name, packages) {
  const byName = new Map([...packages.values()].map((p) => [p.manifest.name, p]));
  const seen = new Set();
  const visit = (n) => {
    if (seen.has(n)) return;
    seen.add(n);
    for (const d of mqDeps(byName.get(n).manifest)) visit(d);
  };
  visit(name);
  return [...seen].map((n) => byName.get(n));
}

function subpathImports(manifest) {
  const lines = [];
  const subpaths = Object.keys(manifest.exports ?? { '.': {} }).filter((k) => !k.includes('*'));
  subpaths.forEach((sub, i) => {
    const spec = sub === '.' ? manifest.name : `${manifest.name}/${sub.slice(2)}`;
    lines.push(`import * as m${i} from '${spec}';`);
  });
  lines.push(`export const loaded: number = [${subpaths.map((_, i) => `m${i}`).join(', ')}].length;`);
  return lines.join('\n') + '\n';
}

async function checkPackage(pkg, packages, tarballs, env) {
  const started = Date.now();
  const name = pkg.manifest.name;
  const project = await mkdtemp(path.join(tmpdir(), `mq-pack-${pkg.dir}-`));
  try {
    await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: `try-${pkg.dir}`, private: true, type: 'module' }, null, 2));
    await writeFile(
      path.join(project, 'tsconfig.json'),
      JSON.stringify(
        {
          compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, outDir: 'out', types: ['node'], skipLibCheck: false, noEmitOnError: true },
          include: ['*.ts'],
        },
        null,
        2,
      ),
    );
    const install = closure(name, packages).map((p) => tarballs.get(p.manifest.name));
    if (pkg.dir === 'replication') install.push(tarballs.get('@mq/log-store')); // its README: npm i @mq/replication @mq/log-store
    install.push(...(EXAMPLE_EXTRAS[pkg.dir] ?? []));
    const typesNode = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')).devDependencies['@types/node'];
    await must(`npm install ${name}`, 'npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...install, `@types/node@${typesNode}`], { cwd: project, timeoutMs: 300_000 });
    await writeFile(path.join(project, 'exports.ts'), subpathImports(pkg.manifest));
    const readme = await readFile(path.join(pkg.path, 'README.md'), 'utf8');
    let example = readmeExample(readme);
    const ports = new Map();
    if (example) {
      for (const p of ['9092', '9080', '7001', '7002', '7003']) {
        if (!example.includes(p)) continue;
        if (p === '9092' && NEEDS_BROKER.has(pkg.dir)) continue; // MQ_BOOTSTRAP names the shared broker
        ports.set(p, p.startsWith('700') ? undefined : await freePort());
      }
      if ([...ports.keys()].some((p) => p.startsWith('700'))) {
        const base = await freePortRange(3);
        for (const [i, p] of ['7001', '7002', '7003'].entries()) if (ports.has(p)) ports.set(p, base + i);
        example = example.replace(/7000 \+ id/g, `${base - 1} + id`);
      }
      for (const [from, to] of ports) example = example.replaceAll(from, String(to));
      await writeFile(path.join(project, 'example.ts'), example);
    }
    await must(`strict typecheck of ${name}`, process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: project, timeoutMs: 180_000 });
    let ran = 'no ts example';
    if (example) {
      const out = await must(`README example of ${name}`, process.execPath, ['out/example.js'], { cwd: project, env, timeoutMs: EXAMPLE_TIMEOUT_MS });
      ran = `example ran (${out.trim().split('\n').length} lines of output)`;
    }
    if (pkg.manifest.bin) {
      for (const bin of Object.keys(pkg.manifest.bin)) {
        await must(`${bin} --help`, path.join(project, 'node_modules', '.bin', bin), ['--help'], { cwd: project, env, timeoutMs: 60_000 });
      }
      if (pkg.manifest.bin.mq) {
        const mq = path.join(project, 'node_modules', '.bin', 'mq');
        await must('mq topic list', mq, ['topic', 'list', '-b', env.MQ_BOOTSTRAP], { cwd: project, env, timeoutMs: 60_000 });
        // @mq/broker is an optional peer: without it, `mq broker start` is one line and exit 1, not a stack trace.
        const alone = await run(mq, ['broker', 'start', '--data-dir', path.join(project, 'data'), '--port', String(await freePort()), '--http-port', String(await freePort())], { cwd: project, env, timeoutMs: 60_000 });
        if (alone.code !== 1 || !/needs the broker package/.test(alone.out) || alone.out.trim().split('\n').length !== 1) {
          throw new Error(`mq broker start without @mq/broker: expected one line and exit 1, got exit ${alone.code}:\n${alone.out.slice(-2000)}`);
        }
      }
      ran += `, bin ${Object.keys(pkg.manifest.bin).join(', ')} ran`;
    }
    return { ok: true, detail: `${install.length} tarball(s) installed, exports typecheck, ${ran}`, ms: Date.now() - started };
  } catch (err) {
    return { ok: false, detail: err.message, ms: Date.now() - started, project };
  } finally {
    if (!opts.keep) await rm(project, { recursive: true, force: true }).catch(() => undefined);
  }
}

async function startSharedBroker() {
  const [port, httpPort] = [await freePort(), await freePort()];
  const dataDir = await mkdtemp(path.join(tmpdir(), 'mq-pack-broker-'));
  const child = spawn(process.execPath, [CLI_BIN, 'broker', 'start', '--data-dir', dataDir, '--port', String(port), '--http-port', String(httpPort)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the broker did not start within 60 s:\n${out.slice(-2000)}`)), 60_000);
    const onData = (d) => {
      out += d;
      if (/broker listening/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the broker exited (${code}):\n${out.slice(-2000)}`)));
  });
  return {
    bootstrap: `127.0.0.1:${port}`,
    async close() {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The manifest problems of every package (no packing, no network): what the fast test checks. */
export async function allManifestProblems() {
  const packages = await loadPackages();
  const rootManifest = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'));
  const license = await readFile(path.join(ROOT, 'LICENSE'), 'utf8');
  const out = {};
  for (const pkg of packages.values()) out[pkg.manifest.name] = await manifestProblems(pkg, rootManifest, license);
  return out;
}

async function main() {
  const started = Date.now();
  const packages = await loadPackages();
  const rootManifest = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'));
  const license = await readFile(path.join(ROOT, 'LICENSE'), 'utf8');
  const only = opts.only ? new Set(opts.only.split(',')) : undefined;
  const failures = [];
  const results = {};
  for (const pkg of packages.values()) {
    const problems = await manifestProblems(pkg, rootManifest, license);
    if (problems.length > 0) failures.push(`${pkg.manifest.name}: ${problems.join('; ')}`);
  }
  const dest = await mkdtemp(path.join(tmpdir(), 'mq-pack-tarballs-'));
  const tarballs = new Map();
  for (const pkg of packages.values()) {
    const p = await pack(pkg, dest);
    tarballs.set(pkg.manifest.name, p.tarball);
    if (p.problems.length > 0) failures.push(`${pkg.manifest.name}: ${p.problems.join('; ')}`);
  }
  const broker = await startSharedBroker();
  try {
    const env = { MQ_BOOTSTRAP: broker.bootstrap };
    const queue = [...packages.values()].filter((p) => !only || only.has(p.dir));
    const workers = Array.from({ length: Math.max(1, Number(opts.concurrency)) }, async () => {
      for (let pkg = queue.shift(); pkg; pkg = queue.shift()) {
        const r = await checkPackage(pkg, packages, tarballs, env);
        results[pkg.manifest.name] = r;
        console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${pkg.manifest.name} (${(r.ms / 1000).toFixed(1)} s): ${r.ok ? r.detail : r.detail.split('\n')[0]}`);
        if (!r.ok) failures.push(`${pkg.manifest.name}: ${r.detail}`);
      }
    });
    await Promise.all(workers);
  } finally {
    await broker.close();
    await rm(dest, { recursive: true, force: true });
  }
  console.log(JSON.stringify({ ok: failures.length === 0, seconds: Math.round((Date.now() - started) / 1000), failures }));
  if (failures.length > 0) {
    for (const f of failures) console.error(f);
    process.exitCode = 1;
  }
}

if (isMain) await main();
