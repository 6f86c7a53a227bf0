// Lint rules for every package: typescript-eslint's recommended set, plus
// the few rules that keep hot paths and errors honest.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/src/gen/**', '**/node_modules/**', '**/coverage/**', 'bench-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly', URL: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly', queueMicrotask: 'readonly', performance: 'readonly', fetch: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-explicit-any': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
      'no-throw-literal': 'error',
    },
  },
  {
    // What the browser build reaches: Node's globals are not there. Buffer and the end-of-turn scheduler
    // come from @mq/protocol/platform (Node's or the browser's, by export condition).
    files: ['packages/client/src/**/*.ts', 'packages/protocol/src/**/*.ts'],
    ignores: ['**/*.test.ts', 'packages/protocol/src/platform/node.ts', 'packages/protocol/src/platform/codecs-node.ts', 'packages/client/src/transport/node.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'Buffer', message: "browsers have no global Buffer: import { Buffer } from '@mq/protocol/platform'" },
        { name: 'setImmediate', message: "browsers have no setImmediate: import { runAtEndOfTurn } from '@mq/protocol/platform'" },
        { name: 'process', message: 'browsers have no process: take it as an option' },
      ],
    },
  },
  {
    // Deterministic cores: time and timers come in as components (Clock, Timers
    // from @mq/protocol/components), so tests and simulators can drive them. The
    // system implementations live in @mq/protocol/components; tests are exempt.
    files: [
      'packages/consensus/src/core/**/*.ts',
      'packages/consensus/src/node/**/*.ts',
      'packages/replication/src/**/*.ts',
      'packages/broker/src/group/group-coordinator.ts',
      'packages/broker/src/txn/txn-coordinator.ts',
      'packages/broker/src/txn/cluster-transactions.ts',
      'packages/broker/src/group/group.ts',
      'packages/broker/src/group/assignment-check.ts',
      'packages/broker/src/controller/**/*.ts',
      'packages/broker/src/cluster/cluster-node.ts',
      'packages/client/src/group/group-member.ts',
    ],
    ignores: ['**/*.test.ts', 'packages/replication/src/testing/**'],
    rules: {
      'no-restricted-globals': [
        'error',
        ...['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate'].map((name) => ({
          name,
          message: 'deterministic core: use the injected Timers component (@mq/protocol/components), not the global timer',
        })),
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'deterministic core: use the injected Clock component (@mq/protocol/components)' },
        { object: 'performance', property: 'now', message: 'deterministic core: use the injected Clock component (@mq/protocol/components)' },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'deterministic core: new Date() reads the wall clock; use new Date(clock()) with the injected Clock',
        },
      ],
    },
  },
  {
    files: ['**/*.test.ts', '**/test/**', 'e2e/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
