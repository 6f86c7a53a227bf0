// Shared jest preset: TypeScript through @swc/jest as native ESM, workspace
// packages resolved to their sources so unit tests need no build.
const fs = require('node:fs');
const path = require('node:path');

const root = __dirname;
const moduleNameMapper = { '^(\\.{1,2}/.*)\\.js$': '$1' };
for (const dir of fs.readdirSync(path.join(root, 'packages'))) {
  const manifest = path.join(root, 'packages', dir, 'package.json');
  if (!fs.existsSync(manifest)) continue;
  const pkg = JSON.parse(fs.readFileSync(manifest, 'utf8'));
  for (const [sub, target] of Object.entries(pkg.exports ?? {})) {
    const file = typeof target === 'string' ? target : target.import;
    if (!file || !file.startsWith('./dist/')) continue;
    const src = file.replace(/^\.\/dist\//, './src/').replace(/\.js$/, '.ts');
    const spec = sub === '.' ? pkg.name : `${pkg.name}/${sub.slice(2)}`;
    moduleNameMapper[`^${spec.replace(/[/.]/g, '\\$&')}$`] = path.join(root, 'packages', dir, src);
  }
}

module.exports = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
        module: { type: 'es6' },
        sourceMaps: 'inline',
      },
    ],
  },
  moduleNameMapper,
  testMatch: ['**/src/**/*.test.ts', '**/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  testTimeout: 30000,
  // A test that leaks a handle (a socket, a child's pipe) must not hold the run
  // open until CI's own limit: jest says so and exits once the files are done.
  forceExit: true,
  maxWorkers: process.env.CI ? 2 : 1,
};
