const preset = require('../jest.preset.cjs');
module.exports = {
  ...preset,
  rootDir: __dirname,
  testMatch: ['<rootDir>/*.test.ts'],
  // Real processes on a shared 2-core machine: a test that takes 20 s quiet can take 60 s at load 20.
  testTimeout: 120000,
};
