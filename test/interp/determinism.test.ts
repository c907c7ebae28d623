/**
 * The reference interpreter is deterministic: running a kernel twice, on the
 * same input objects (which exercises the interpreter's per-pattern caches)
 * or on inputs loaded and generated afresh, with the program compiled afresh,
 * gives bit-identical outputs: same formats, shapes, sparse structure and
 * the same float64 bit patterns (NaN and -0 included).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Kernel } from '../../ir/module.js';
import { toCsc, toCoo, toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { Rng, seedFor } from '../../runtime/random.js';
import type { DenseTensor, SparseMatrix, Tensor } from '../../runtime/tensor.js';
import { compileModule, pickKernel, runKernel } from '../helpers/interp-run.js';

const MATRIX_DIR = fileURLToPath(new URL('../../../shared/data/matrices/', import.meta.url));
const EXAMPLES_DIR = fileURLToPath(new URL('../../examples/', import.meta.url));
const HAVE_DATA = existsSync(MATRIX_DIR);
const SEED = 7;

/** Small and medium square matrices with empty rows, explicit zeros, skew (all read in well under a second). */
const MATRICES = ['karate.mtx', 'west0479.mtx', 'Erdos971.mtx', 'cora.cites', 'adder_dcop_05.mtx'];

function compileExample(name: string): Kernel {
  return pickKernel(compileModule(readFileSync(join(EXAMPLES_DIR, `${name}.dy`), 'utf8'), `${name}.dy`));
}

function randomDense(shape: number[], name: string): DenseTensor {
  const rng = new Rng(seedFor(SEED, name));
  const data = new Float64Array(shape.reduce((a, b) => a * b, 1));
  for (let k = 0; k < data.length; k++) data[k] = rng.uniform(-1, 1);
  return { format: 'dense', shape, data };
}

/** Inputs for each example on an n x n matrix A, built from scratch on every call. */
function inputsFor(
  example: string,
  A: SparseMatrix,
  file: string,
): { tensors: Record<string, Tensor>; scalars: Record<string, number> } {
  const n = A.rows;
  const r = (shape: number[], name: string): DenseTensor => randomDense(shape, `${file}/${example}/${name}`);
  switch (example) {
    case 'spmv':
      return { tensors: { A, x: r([n], 'x') }, scalars: {} };
    case 'spmm':
      return { tensors: { A, B: r([n, 5], 'B') }, scalars: {} };
    case 'gcn':
      return { tensors: { A, X: r([n, 6], 'X'), W1: r([6, 5], 'W1'), W2: r([5, 3], 'W2') }, scalars: {} };
    case 'attention':
      return { tensors: { A, Q: r([n, 4], 'Q'), K: r([n, 4], 'K'), V: r([n, 4], 'V') }, scalars: {} };
    case 'pagerank': {
      // Any values will do for determinism; make them column-stochastic-ish anyway.
      const r0: DenseTensor = { format: 'dense', shape: [n], data: new Float64Array(n).fill(1 / n) };
      return {
        tensors: { A: { ...A, values: A.values.map((v) => Math.abs(v) / (1 + Math.abs(v))) }, r0 },
        scalars: { d: 0.85 },
      };
    }
    case 'sssp': {
      const d0: DenseTensor = { format: 'dense', shape: [n], data: new Float64Array(n).fill(Number.POSITIVE_INFINITY) };
      d0.data[0] = 0;
      return { tensors: { A: { ...A, values: A.values.map(Math.abs) }, d0 }, scalars: {} };
    }
    default:
      throw new Error(example);
  }
}

/** Every typed array of a tensor, as raw bytes, with its format and shape. */
function fingerprint(outs: Map<string, Tensor>): { names: string[]; meta: unknown[]; bytes: Uint8Array[] } {
  const names = [...outs.keys()].sort();
  const meta: unknown[] = [];
  const bytes: Uint8Array[] = [];
  const raw = (a: Float64Array | Int32Array): Uint8Array =>
    new Uint8Array(a.buffer.slice(a.byteOffset, a.byteOffset + a.byteLength));
  for (const name of names) {
    const t = outs.get(name)!;
    if (t.format === 'dense') {
      meta.push([name, 'dense', t.shape]);
      bytes.push(raw(t.data));
    } else {
      meta.push([name, t.format, t.rows, t.cols]);
      bytes.push(raw(t.values));
      if (t.format === 'csr') bytes.push(raw(t.rowPtr), raw(t.colIdx));
      else if (t.format === 'csc') bytes.push(raw(t.colPtr), raw(t.rowIdx));
      else bytes.push(raw(t.rowIdx), raw(t.colIdx));
    }
  }
  return { names, meta, bytes };
}

function expectBitIdentical(a: Map<string, Tensor>, b: Map<string, Tensor>): void {
  const fa = fingerprint(a);
  const fb = fingerprint(b);
  expect(fb.names).toEqual(fa.names);
  expect(fb.meta).toEqual(fa.meta);
  expect(fb.bytes.length).toBe(fa.bytes.length);
  fa.bytes.forEach((x, k) =>
    expect(Buffer.compare(Buffer.from(x), Buffer.from(fb.bytes[k]!)), `array ${k} differs`).toBe(0),
  );
}

const EXAMPLES = ['spmv', 'spmm', 'gcn', 'attention', 'pagerank', 'sssp'];

describe.skipIf(!HAVE_DATA)('two runs give bit-identical outputs', () => {
  for (const file of MATRICES) {
    for (const example of EXAMPLES) {
      it(`${example} on ${file}`, () => {
        // Run 1 and 2: one compiled kernel, the very same input objects.
        const k1 = compileExample(example);
        const A1 = toCsr(loadMatrix(join(MATRIX_DIR, file)));
        const in1 = inputsFor(example, A1, file);
        const first = runKernel(k1, in1);
        const second = runKernel(k1, in1);
        expectBitIdentical(first, second);
        // Run 3: everything afresh (program, matrix, generated operands).
        const k2 = compileExample(example);
        const A2 = toCsr(loadMatrix(join(MATRIX_DIR, file)));
        const third = runKernel(k2, inputsFor(example, A2, file));
        expectBitIdentical(first, third);
      });
    }
  }

  it('the attention outputs on graphs with empty rows really hold NaN (so NaN bits are compared)', () => {
    const k = compileExample('attention');
    const A = toCsr(loadMatrix(join(MATRIX_DIR, 'cora.cites')));
    const O = runKernel(k, inputsFor('attention', A, 'cora.cites')).get('O') as DenseTensor;
    expect(O.data.some(Number.isNaN)).toBe(true);
  });
});

describe('sparse results and CSC/COO inputs are deterministic too', () => {
  const src = `kernel k(A: csc<f64>[n, n], B: coo<f64>[n, n], x: dense<f64>[n]) -> (S: csc<f64>[n, n], T: coo<f64>[n, n], y: dense<f64>[n], z: dense<f64>[n]) {
    S[i, j] = A[i, j] * (x[i] - x[j]);
    T[i, j] = exp(B[i, j] * x[j]);
    y[j] = max(i: A[i, j] * x[i]);
    z[i] = sum(j: B[i, j] * x[j]);
  }`;
  const build = (): { tensors: Record<string, Tensor>; scalars: Record<string, number> } => {
    // A seeded random 300 x 300 pattern, ~5 entries per row, some explicit zeros.
    const rng = new Rng(seedFor(SEED, 'sparse-results'));
    const n = 300;
    const rowIdx: number[] = [];
    const colIdx: number[] = [];
    const values: number[] = [];
    for (let i = 0; i < n; i++) {
      const cols = new Set<number>();
      for (let t = 0; t < 5; t++) cols.add(rng.int(n));
      for (const c of cols) {
        rowIdx.push(i);
        colIdx.push(c);
        values.push(rng.next() < 0.1 ? 0 : rng.uniform(-2, 2));
      }
    }
    const m = {
      kind: 'coordinate' as const,
      rows: n,
      cols: n,
      field: 'real' as const,
      symmetry: 'general' as const,
      rowIdx: Int32Array.from(rowIdx),
      colIdx: Int32Array.from(colIdx),
      values: Float64Array.from(values),
      lines: new Int32Array(values.length),
    };
    return { tensors: { A: toCsc(m), B: toCoo(m), x: randomDense([n], 'sparse-results/x') }, scalars: {} };
  };
  it('csc and coo sparse results', () => {
    const k = pickKernel(compileModule(src));
    const inputs = build();
    const a = runKernel(k, inputs);
    expect(a.get('S')!.format).toBe('csc');
    expect(a.get('T')!.format).toBe('coo');
    expectBitIdentical(a, runKernel(k, inputs));
    expectBitIdentical(a, runKernel(pickKernel(compileModule(src)), build()));
  });
});
