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
import { Rng, seedFor } from '../../runtime/random.js';
import type { DenseTensor, SparseMatrix, Tensor } from '../../runtime/tensor.js';
import { expectLoopsMatchInterpreter } from './compare.js';

const MATRIX_DIR = fileURLToPath(new URL('../../../shared/data/matrices/', import.meta.url));
const EXAMPLES_DIR = fileURLToPath(new URL('../../examples/', import.meta.url));
const HAVE_DATA = existsSync(MATRIX_DIR);
const SQUARE = ['cora.cites', 'Erdos971.mtx', 'adder_dcop_05.mtx', 'karate.mtx', 'west0479.mtx'];
const RECT = ['lp_ship04l.mtx'];
const EXAMPLES = ['spmv', 'spmm', 'gcn', 'attention', 'pagerank', 'sssp'];
const ANY_SHAPE = new Set(['spmv', 'spmm']);
const SEED = 20240612;

function kernel(name: string, format: 'csr' | 'csc' | 'coo'): Kernel {
  const src = readFileSync(join(EXAMPLES_DIR, `${name}.dy`), 'utf8').replaceAll('csr<', `${format}<`);
  const r = compileSource(src, `${name}.dy`);
  if (!r.module) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
  return runPipeline(r.module, { passes: [...DEFAULT_PIPELINE, 'lower-kernels'] }).kernels[0]!;
}

function rand(shape: number[], name: string): DenseTensor {
  const rng = new Rng(seedFor(SEED, name));
  const data = new Float64Array(shape.reduce((a, b) => a * b, 1));
  for (let k = 0; k < data.length; k++) data[k] = rng.uniform(-1, 1);
  return { format: 'dense', shape, data };
}

/** Inputs of each example for an m x n matrix A. */
function inputs(ex: string, A: SparseMatrix): { tensors: Record<string, Tensor>; scalars?: Record<string, number> } {
  const [m, n] = [A.rows, A.cols];
  switch (ex) {
    case 'spmv':
      return { tensors: { A, x: rand([n], 'x') } };
    case 'spmm':
      return { tensors: { A, B: rand([n, 4], 'B') } };
    case 'gcn':
      return { tensors: { A, X: rand([n, 8], 'X'), W1: rand([8, 8], 'W1'), W2: rand([8, 4], 'W2') } };
    case 'attention':
      return { tensors: { A, Q: rand([n, 4], 'Q'), K: rand([n, 4], 'K'), V: rand([n, 4], 'V') } };
    case 'pagerank':
      return { tensors: { A, r0: { format: 'dense', shape: [n], data: new Float64Array(n).fill(1 / n) } }, scalars: { d: 0.85 } };
    case 'sssp': {
      const d0 = new Float64Array(m).fill(Infinity);
      d0[0] = 0;
      return { tensors: { A, d0: { format: 'dense', shape: [m], data: d0 } } };
    }
  }
  throw new Error(ex);
}

describe.skipIf(!HAVE_DATA)('examples on real matrices: loop IR equals the interpreter bit for bit', () => {
  const kernels = new Map(EXAMPLES.flatMap((ex) => (['csr', 'csc', 'coo'] as const).map((f) => [`${ex}.${f}`, kernel(ex, f)] as const)));
  for (const file of [...SQUARE, ...RECT]) {
    describe(file, () => {
      const data = loadMatrix(join(MATRIX_DIR, file));
      const conv = { csr: toCsr, csc: toCsc, coo: toCoo } as const;
      const formats = file === 'Erdos971.mtx' || file === 'lp_ship04l.mtx' ? (['csr', 'csc', 'coo'] as const) : (['csr'] as const);
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
