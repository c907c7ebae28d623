/**
 * One command updates every golden kind: `npm run test:update-goldens` runs
 * test/helpers/update-goldens.ts, which finds the test files by the flag
 * they read. Checked here: the finder sees every kind there is today, and
 * the npm script runs the finder (not a hand-kept list of folders).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { goldenTestFiles, repoRoot } from './helpers/update-goldens.js';

describe('npm run test:update-goldens', () => {
  const root = repoRoot();

  it('finds the tests of every golden kind: IR, loop IR, CUDA, HLS and the generated parameter table', () => {
    const files = goldenTestFiles(root);
    for (const f of [
      'test/goldens/ir-goldens.test.ts',
      'test/loops/goldens.test.ts',
      'test/cuda/goldens.test.ts',
      'test/hls/goldens.test.ts',
      'test/eval/parameters.test.ts',
    ])
      expect(files).toContain(f);
    expect(files).not.toContain('test/update-goldens.test.ts');
  });

  it('is the script that runs them all with the flag set', () => {
    const script = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts['test:update-goldens'];
    expect(script).toBe('tsc -p tsconfig.json && node dist/test/helpers/update-goldens.js');
  });
});
