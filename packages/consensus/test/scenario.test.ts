import { describe, expect, it } from '@jest/globals';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScenarioHarness, parseScenario, renderScenario } from './scenario-harness.js';

// Scenario scripts: testdata/*.txt. Regenerate expected traces after an
// intended behaviour change with REWRITE=1 and review the diff.
const dir = join(process.cwd(), 'testdata');
const files = readdirSync(dir).filter((f) => f.endsWith('.txt')).sort();

describe('raft scenarios', () => {
  for (const file of files) {
    it(file.replace(/\.txt$/, ''), () => {
      const text = readFileSync(join(dir, file), 'utf8');
      const h = new ScenarioHarness();
      const actual = new Map<number, string>();
      const mismatches: string[] = [];
      for (const c of parseScenario(text)) {
        const out = h.run(c.cmd);
        actual.set(c.line, out);
        if (out !== c.expected) mismatches.push(`${file}:${c.line} ${c.cmd}\n--- expected\n${c.expected}\n--- actual\n${out}`);
      }
      if (process.env.REWRITE) writeFileSync(join(dir, file), renderScenario(text, actual));
      else expect(mismatches.join('\n\n')).toBe('');
    });
  }
});
