/**
 * Reproducers of the generator bugs the backend fuzzer found, now fixed: each
 * a hand-written program with one small input, which rides along in the first
 * library of its backend so that backends.test.ts checks it there against the
 * reference (a regression test each).
 */
import type { Tensor } from '../../../runtime/tensor.js';
import { csr, dense } from '../../helpers/interp-run.js';
import { handEntry } from './harness.js';

/**
 * An op that walks row i of A twice (two reductions over it). codegen/cuda/warp.ts declared the warp's __shared__
 * copy of the row's entries (dy_sh_<buffer>) once per walk, so the .cu declared it twice and neither g++ nor nvcc
 * compiled it ("redeclaration of 'int dy_sh_A_colIdx [8][32]'" in m1_op0_warp_per_row). Walks follow one another
 * and never nest: they share one copy now.
 */
export const SHARED_WALKS = handEntry(
  'm1',
  'kernel m1(A: csr<f32>[n, n], B: dense<f32>[n, k]) -> (Y: dense<f32>[n, k]) {\n  Y[i, c] = sum(j: A[i, j] * B[j, c]) + sum(p: A[i, p]);\n}\n',
  {
    label: 'A = [1 0 2; 0 0 0; 0 -1 0], B = [1 2 3 4; 5 6 7 8; 9 10 11 12]',
    tensors: new Map<string, Tensor>([
      [
        'A',
        csr(3, 3, [
          [0, 0, 1],
          [0, 2, 2],
          [2, 1, -1],
        ]),
      ],
      ['B', dense([3, 4], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])],
    ]),
    scalars: new Map(),
  },
);

/**
 * A reduction nested in the column loop of a sparse op. The vector-column copy of a CUDA schedule (merge-path's
 * tiles_vec kernel, where 4 divides an f32 width or 2 an f64 one; codegen/cuda/vec-columns.ts) replicated per column
 * only the statements that mention a column-varying variable: the nested reduction's accumulator (`let acc1 = 0`
 * mentions none) was declared once and every column's copy of `acc1 += A[p, j] * Q[p, c]` added into it, so each
 * output held the four columns' sum: Y = [46 46 46 46; 36 36 36 36] where the reference gives
 * [7 10 13 16; 6 8 10 12].
 */
export const NESTED_VECTOR_COLUMNS = handEntry(
  'm4',
  'kernel m4(A: csr<f32>[m, n], Q: dense<f32>[m, k]) -> (Y: dense<f32>[m, k]) {\n  Y[i, c] = sum(j: A[i, j] * sum(p: A[p, j] * Q[p, c]));\n}\n',
  {
    label: 'A = [1 1; 0 1], Q = [1 2 3 4; 5 6 7 8]',
    tensors: new Map<string, Tensor>([
      [
        'A',
        csr(2, 2, [
          [0, 0, 1],
          [0, 1, 1],
          [1, 1, 1],
        ]),
      ],
      ['Q', dense([2, 4], [1, 2, 3, 4, 5, 6, 7, 8])],
    ]),
    scalars: new Map(),
  },
);

/**
 * The SDDMM of a matrix with itself, A .* (B B^T). codegen/hls/kernel-vm.ts named the on-chip copies of the dot
 * product's operands by buffer, so both were B's row i (q_t_B, and k_t_B loaded from row i as well): in C
 * simulation S's values were [5, 5, 25] where the reference gives [5, -5, -5].
 */
export const SDDMM_OF_ITSELF = handEntry(
  'm2',
  'kernel m2(A: csr<f32>[n, n], B: dense<f32>[n, k]) -> (S: csr<f32>[n, n]) {\n  S[i, j] = A[i, j] * sum(p: B[i, p] * B[j, p]);\n}\n',
  {
    label: 'A = [1 1; 1 0], B = [1 -2; 3 4]',
    tensors: new Map<string, Tensor>([
      [
        'A',
        csr(2, 2, [
          [0, 0, 1],
          [0, 1, 1],
          [1, 0, 1],
        ]),
      ],
      ['B', dense([2, 2], [1, -2, 3, 4])],
    ]),
    scalars: new Map(),
  },
);

/**
 * The GEMM of a matrix with itself, X X: the same naming by buffer gave both of the design's tiles the left
 * operand's index, so the right tile's loader read X at `row`, which it has not, and g++ refused the project.
 */
export const GEMM_OF_ITSELF = handEntry(
  'm5',
  'kernel m5(X: dense<f32>[n, n]) -> (Y: dense<f32>[n, n]) {\n  Y[i, c] = sum(j: X[i, j] * X[j, c]);\n}\n',
  {
    label: 'X = [1 2 0; -1 3 1; 2 0 -2]',
    tensors: new Map<string, Tensor>([['X', dense([3, 3], [1, 2, 0, -1, 3, 1, 2, 0, -2])]]),
    scalars: new Map(),
  },
);

/**
 * An op whose second sparse operand (A) is walked along a dim that is none of the op's sizes: its columns (n), in
 * an op over G's rows (m). codegen/hls/project.ts threw "hls: op m3_op0: the colPtr of its second sparse operand A
 * has no size", so `dype hls` of this program was an internal error (the square program, [n, n], was right).
 */
export const SECOND_OPERAND_ALONG_ANOTHER_DIM = handEntry(
  'm3',
  'kernel m3(A: csr<f32>[m, n], G: csr<f32>[m, n]) -> (y: dense<f32>[m]) {\n  y[i] = sum(j: G[i, j] * sum(q: A[q, j]));\n}\n',
  {
    label: 'A = [1 2; 0 0; 0 3], G = [0 1; 2 0; -1 1]',
    tensors: new Map<string, Tensor>([
      [
        'A',
        csr(3, 2, [
          [0, 0, 1],
          [0, 1, 2],
          [2, 1, 3],
        ]),
      ],
      [
        'G',
        csr(3, 2, [
          [0, 1, 1],
          [1, 0, 2],
          [2, 0, -1],
          [2, 1, 1],
        ]),
      ],
    ]),
    scalars: new Map(),
  },
);

/** The reproducers that ride along in the first CUDA library, and in the first HLS project. */
export const CUDA_REPROS = [SHARED_WALKS, NESTED_VECTOR_COLUMNS];
export const HLS_REPROS = [SDDMM_OF_ITSELF, GEMM_OF_ITSELF, SECOND_OPERAND_ALONG_ANOTHER_DIM];

/** A __shared__ array a CUDA kernel declares twice (the .cu does not compile), or undefined. */
export function sharedDeclaredTwice(cu: string): string | undefined {
  for (const fn of cu.split(/(?=__global__)/)) {
    const names = [...fn.matchAll(/__shared__\s+[\w ]+?\s(\w+)\s*\[/g)].map((m) => m[1]!);
    const twice = names.find((n, i) => names.indexOf(n) !== i);
    if (twice) return twice;
  }
  return undefined;
}
