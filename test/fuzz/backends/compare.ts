/**
 * Comparing a backend's results with the reference interpreter's: the
 * layout of a sparse result exactly, values within the tolerances of the
 * existing tests (test/wasm/compare.ts; docs/CUDA.md for reordered sums),
 * integers and bools exactly.
 */
import type { Kernel } from '../../../ir/module.js';
import type { Tensor } from '../../../runtime/tensor.js';
import { TOL_F32 } from '../../wasm/compare.js';

/** Tolerance of f64 results where the backend reorders sums (docs/CUDA.md: 1e-9 for f64; the HLS schedule likewise). */
export const TOL_F64_REORDERED = 1e-9;

const layoutOf = (t: Tensor): Record<string, ArrayLike<number>> =>
  t.format === 'dense'
    ? { shape: t.shape }
    : t.format === 'csr'
      ? { dims: [t.rows, t.cols], rowPtr: t.rowPtr, colIdx: t.colIdx }
      : t.format === 'csc'
        ? { dims: [t.rows, t.cols], colPtr: t.colPtr, rowIdx: t.rowIdx }
        : { dims: [t.rows, t.cols], rowIdx: t.rowIdx, colIdx: t.colIdx };

const valuesOf = (t: Tensor): ArrayLike<number> => (t.format === 'dense' ? t.data : t.values);

/** Where an element of `t` sits, for the report. */
function position(t: Tensor, q: number): string {
  if (t.format === 'dense') {
    const at: number[] = [];
    let rest = q;
    for (let d = t.shape.length - 1; d >= 0; d--) {
      at.unshift(rest % t.shape[d]!);
      rest = Math.floor(rest / t.shape[d]!);
    }
    return `[${at.join(', ')}]`;
  }
  if (t.format === 'csr') {
    let r = 0;
    while (t.rowPtr[r + 1]! <= q) r++;
    return `entry ${q} (row ${r}, column ${t.colIdx[q]})`;
  }
  if (t.format === 'csc') {
    let c = 0;
    while (t.colPtr[c + 1]! <= q) c++;
    return `entry ${q} (row ${t.rowIdx[q]}, column ${c})`;
  }
  return `entry ${q} (row ${t.rowIdx[q]}, column ${t.colIdx[q]})`;
}

/** The first difference between a backend's results and the reference's, or undefined. */
export function firstDifference(
  k: Kernel,
  got: Map<string, Tensor>,
  want: Map<string, Tensor>,
  f64Tol: number,
): string | undefined {
  for (const [name, w] of want) {
    const g = got.get(name);
    if (!g) return `result ${name} missing`;
    if (g.format !== w.format) return `result ${name} is ${g.format}, the reference's ${w.format}`;
    const [gl, wl] = [layoutOf(g), layoutOf(w)];
    for (const key of Object.keys(wl)) {
      const [a, b] = [Array.from(gl[key]!), Array.from(wl[key]!)];
      const q = b.findIndex((x, i) => a[i] !== x);
      if (a.length !== b.length || q >= 0)
        return `result ${name}: ${key} differs${q >= 0 ? ` first at [${q}]: ${a[q]}, expected ${b[q]}` : ` in length: ${a.length}, expected ${b.length}`}`;
    }
    const dtype = k.results.find((r) => r.name === name)!.type.dtype;
    const tol = dtype === 'f32' ? TOL_F32 : dtype === 'f64' ? f64Tol : 0;
    const [gv, wv] = [valuesOf(g), valuesOf(w)];
    for (let q = 0; q < wv.length; q++) {
      const [a, b] = [gv[q]!, wv[q]!];
      const same =
        Number.isFinite(a) && Number.isFinite(b) ? Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)) : Object.is(a, b);
      if (!same)
        return `result ${name} (${dtype}) ${position(w, q)}: got ${a}, expected ${b}${tol > 0 ? ` (tolerance ${tol} relative)` : ''}`;
    }
  }
  return undefined;
}
