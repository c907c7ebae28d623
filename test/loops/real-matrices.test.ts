/**
 * Every example on real matrices from ../shared/data/matrices, through the
 * loop IR and through the reference interpreter: outputs equal bit for bit.
 * Matrices: cora.cites (edge list), Erdos971 (empty rows), adder_dcop_05
 * (one row holding most entries), karate, west0479 (unsymmetric), and the
 * rectangular lp_ship04l for spmv/spmm (the other examples need a square
 * matrix). The examples are also run with A declared csc and coo on two
 * matrices, so row-grouped loops read buffers built from other layouts.
 * Skipped (not failed) when the data directory is absent.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';
import { compileSource } from '../../frontend/compile.js';
import type { Kernel } from '../../ir/module.js';
import { DEFAULT_PIPELINE, runPipeline } from '../../passes/index.js';
import { toCoo, toCsc, toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { exampleInputs as inputs } from '../helpers/example-inputs.js';
import { expectLoopsMatchInterpreter } from './compare.js';

const MATRIX_DIR = fileURLToPath(new URL('../../../shared/data/matrices/', import.meta.url));
const EXAMPLES_DIR = fileURLToPath(new URL('../../examples/', import.meta.url));
const HAVE_DATA = existsSync(MATRIX_DIR);
const SQUARE = ['cora.cites', 'Erdos971.mtx', 'adder_dcop_05.mtx', 'karate.mtx', 'west0479.mtx'];
const RECT = ['lp_ship04l.mtx'];
const EXAMPLES = ['spmv', 'spmm', 'gcn', 'attention', 'pagerank', 'sssp'];
const ANY_SHAPE = new Set(['spmv', 'spmm']);

function kernel(name: string, format: 'csr' | 'csc' | 'coo'): Kernel {
  const src = readFileSync(join(EXAMPLES_DIR, `${name}.dy`), 'utf8').replaceAll('csr<', `${format}<`);
  const r = compileSource(src, `${name}.dy`);
  if (!r.module) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
  return runPipeline(r.module, { passes: [...DEFAULT_PIPELINE, 'lower-kernels'] }).kernels[0]!;
}

describe.skipIf(!HAVE_DATA)('examples on real matrices: loop IR equals the interpreter bit for bit', () => {
  const kernels = new Map(
    EXAMPLES.flatMap((ex) => (['csr', 'csc', 'coo'] as const).map((f) => [`${ex}.${f}`, kernel(ex, f)] as const)),
  );
  for (const file of [...SQUARE, ...RECT]) {
    describe(file, () => {
      const data = loadMatrix(join(MATRIX_DIR, file));
      const conv = { csr: toCsr, csc: toCsc, coo: toCoo } as const;
      const formats =
        file === 'Erdos971.mtx' || file === 'lp_ship04l.mtx' ? (['csr', 'csc', 'coo'] as const) : (['csr'] as const);
      for (const ex of EXAMPLES) {
        if (RECT.includes(file) && !ANY_SHAPE.has(ex)) continue;
        for (const f of formats) {
          it(`${ex} (${f})`, () => {
            expectLoopsMatchInterpreter(kernels.get(`${ex}.${f}`)!, inputs(ex, conv[f](data)), `${ex}/${file}/${f}`);
          });
        }
      }
    });
  }
});
