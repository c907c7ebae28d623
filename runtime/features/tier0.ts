/** Tier 0: shape, nnz, density; O(1), reads no array contents. */

import type { DenseTensor, SparseMatrix } from '../tensor.js';
import type { Tier0Features } from './types.js';

/**
 * The rows x cols a tensor is treated as: rank 2 as is; rank 0 as 1 x 1;
 * rank 1 as a column (n x 1); rank > 2 as (product of leading dims) x last dim.
 */
export function matrixShape(m: SparseMatrix | DenseTensor): [rows: number, cols: number] {
  if (m.format !== 'dense') return [m.rows, m.cols];
  const s = m.shape;
  if (s.length === 0) return [1, 1];
  if (s.length === 1) return [s[0]!, 1];
  let rows = 1;
  for (let d = 0; d + 1 < s.length; d++) rows *= s[d]!;
  return [rows, s[s.length - 1]!];
}

export function tier0(m: SparseMatrix | DenseTensor): Tier0Features {
  const [rows, cols] = matrixShape(m);
  const nnz = m.format === 'dense' ? m.data.length : m.values.length;
  const cells = rows * cols;
  return { format: m.format, rows, cols, nnz, density: cells > 0 ? nnz / cells : 0 };
}
