/** Tier-0 features of the inputs (shape, nnz, density, format): free to compute. */
import type { Tensor } from '../runtime/tensor.js';

export interface Tier0 {
  format: string;
  shape: number[];
  nnz: number;
  density: number;
}

export function tier0(t: Tensor): Tier0 {
  if (t.format === 'dense') {
    const size = t.shape.reduce((a, b) => a * b, 1);
    return { format: 'dense', shape: [...t.shape], nnz: size, density: size === 0 ? 0 : 1 };
  }
  const cells = t.rows * t.cols;
  return { format: t.format, shape: [t.rows, t.cols], nnz: t.values.length, density: cells === 0 ? 0 : t.values.length / cells };
}
