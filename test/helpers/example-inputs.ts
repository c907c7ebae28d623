/** Inputs for the examples on a real matrix, shared by the backend tests (wasm, engine, native). */
import { Rng, seedFor } from '../../runtime/random.js';
import type { DenseTensor, SparseMatrix, Tensor } from '../../runtime/tensor.js';

const SEED = 20240612;

export function rand(shape: number[], name: string): DenseTensor {
  const rng = new Rng(seedFor(SEED, name));
  const data = new Float64Array(shape.reduce((a, b) => a * b, 1));
  for (let k = 0; k < data.length; k++) data[k] = rng.uniform(-1, 1);
  return { format: 'dense', shape, data };
}

/** A with every column scaled to absolute sum 1 (empty columns left empty). */
export function columnStochastic(A: SparseMatrix): SparseMatrix {
  const col = new Int32Array(A.values.length);
  if (A.format === 'csc') for (let c = 0; c < A.cols; c++) col.fill(c, A.colPtr[c]!, A.colPtr[c + 1]!);
  else col.set(A.colIdx);
  const sums = new Float64Array(A.cols);
  for (let k = 0; k < col.length; k++) sums[col[k]!]! += Math.abs(A.values[k]!);
  return { ...A, values: Float64Array.from(A.values, (v, k) => (sums[col[k]!]! > 0 ? v / sums[col[k]!]! : v)) };
}

/** The inputs of example `ex` on matrix A: random dense operands (seeded by name), pagerank's A made column-stochastic, sssp from vertex 0 over |A|. */
export function exampleInputs(
  ex: string,
  A: SparseMatrix,
): { tensors: Record<string, Tensor>; scalars?: Record<string, number> } {
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
      // Column-stochastic, as the example asks: raw west0479 grows past 1e45 in 20 steps, beyond f32's range.
      return {
        tensors: { A: columnStochastic(A), r0: { format: 'dense', shape: [n], data: new Float64Array(n).fill(1 / n) } },
        scalars: { d: 0.85 },
      };
    case 'sssp': {
      const d0 = new Float64Array(m).fill(Infinity);
      d0[0] = 0;
      // |A|: with a negative cycle the relaxations never become stable and the loop runs to its maximum.
      const W = { ...A, values: Float64Array.from(A.values, Math.abs) };
      return { tensors: { A: W, d0: { format: 'dense', shape: [m], data: d0 } } };
    }
  }
  throw new Error(ex);
}
