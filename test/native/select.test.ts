/**
 * A select whose other arm reads memory, over rows of a literal width of 3:
 * `M[i, k] = (2 < Q[i, k]) ? 1 : K[i, k]`. gcc 12.2 at -O3 -march=native
 * if-converted the printed conditional into masked loads and wrote 0 into
 * two of 72 elements; the native C dialect now prints selects as calls
 * whose arguments are both read (codegen/cpu/cprint.ts `dy_sel_*`). Found
 * by a differential fuzzer. Skipped without a C compiler.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveCompiler } from '../helpers/cc.js';
import { cleanup, freshDir, runCli, writeLines } from '../helpers/cli.js';

let dir: string;
beforeAll(() => {
  dir = freshDir('dype-select-');
});
afterAll(() => cleanup(dir));

describe.skipIf(!haveCompiler())('native selects', () => {
  for (const t of ['i32', 'f32'] as const)
    it(`${t}: a select over loads of rows of 3 equals the reference`, () => {
      const prog = writeLines(dir, `sel_${t}.dy`, [
        `kernel k(Q: dense<${t}>[n, 3], K: dense<${t}>[n, 3]) -> (M: dense<${t}>[n, 3]) {`,
        '  M[i, k] = (2 < Q[i, k]) ? 1 : K[i, k];',
        '}',
      ]);
      const field = t === 'i32' ? 'integer' : 'real';
      // Matrix Market arrays are column-major: Q[18, 0] is the 19th value.
      const Q = writeLines(dir, `Q_${t}.mtx`, [
        `%%MatrixMarket matrix array ${field} general`,
        '24 3',
        ...Array.from({ length: 72 }, (_, q) => (q === 18 ? '41' : '0')),
      ]);
      const K = writeLines(dir, `K_${t}.mtx`, [
        `%%MatrixMarket matrix array ${field} general`,
        '24 3',
        ...new Array<string>(72).fill('1'),
      ]);
      const want = ['1', ...new Array<string>(71).fill('1')];
      for (const backend of ['reference', 'native']) {
        const out = join(dir, `M_${t}_${backend}.mtx`);
        const r = runCli([
          'run',
          prog,
          '--input',
          `Q=${Q}`,
          '--input',
          `K=${K}`,
          '--backend',
          backend,
          '--threads',
          '1',
          '--out',
          `M=${out}`,
        ]);
        expect(r.status, `${backend}: ${r.stderr}`).toBe(0);
        const got = readFileSync(out, 'utf8')
          .split('\n')
          .filter((l) => l !== '' && !l.startsWith('%'))
          .slice(1);
        expect(got, backend).toEqual(want);
      }
    });
});
