const preset = require('../jest.preset.cjs');
module.exports = {
  ...preset,
  rootDir: __dirname,
  testMatch: ['<rootDir>/*.test.ts'],
  testTimeout: 60000,
};
