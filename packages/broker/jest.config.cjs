const preset = require('../../jest.preset.cjs');
// console/ holds the web console's browser code (bundled by scripts/build-console.mjs); its units are tested here too.
module.exports = { ...preset, rootDir: __dirname, testMatch: [...preset.testMatch, '**/console/**/*.test.ts'] };
