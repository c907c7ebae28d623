/**
 * Goldens of the generated CUDA source for spmv and gcn. Rewrite with
 * DYPE_UPDATE_GOLDENS=1 and review the diff; never edit them by hand.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { emitCuda } from '../../codegen/cuda/emit.js';
import { exampleProgram, ROOT } from './helpers.js';

const dir = join(ROOT, 'test', 'goldens', 'cuda');
const update = process.env['DYPE_UPDATE_GOLDENS'] === '1';

describe('CUDA goldens', () => {
  for (const ex of ['spmv', 'gcn']) {
    it(`matches ${ex}.cu`, () => {
      // The golden is generated from a path relative to the repository, so it holds no machine path.
      const p = exampleProgram(ex);
      const files = emitCuda({ ...p, file: `examples/${ex}.dy` });
      const text = files.get(`${ex}.cu`)!;
      const path = join(dir, `${ex}.cu`);
      if (update) {
        mkdirSync(dir, { recursive: true });
        writeFileSync(path, text);
      }
      expect(existsSync(path), `missing golden ${ex}.cu; run with DYPE_UPDATE_GOLDENS=1`).toBe(true);
      expect(text).toBe(readFileSync(path, 'utf8'));
    });
  }
});
