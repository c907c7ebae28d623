/**
 * Test helpers for the reference interpreter: compile a .dy source through
 * the default pipeline, run one kernel, and build small tensors by hand.
 */
import { compileSource } from '../../frontend/compile.js';
import type { Kernel, Module } from '../../ir/module.js';
import { interpretKernel } from '../../interp/interpret.js';
import { DEFAULT_PIPELINE, runPipeline } from '../../passes/index.js';
import type { CooMatrix, CscMatrix, CsrMatrix, DenseTensor, Tensor } from '../../runtime/tensor.js';

/** Compiles `source` and runs the default pass pipeline; throws with the diagnostics on any error. */
export function compileModule(source: string, file = 'inline.dy'): Module {
  const r = compileSource(source, file);
  if (!r.module) throw new Error(`compile failed:\n${r.diagnostics.map((d) => `${d.code}: ${d.message}`).join('\n')}`);
  return runPipeline(r.module, { passes: DEFAULT_PIPELINE });
}

/** The kernel called `name`, or the only kernel of the module. */
export function pickKernel(m: Module, name?: string): Kernel {
  if (name === undefined) {
    if (m.kernels.length !== 1) throw new Error(`module has ${m.kernels.length} kernels; name one`);
    return m.kernels[0]!;
  }
  const k = m.kernels.find((x) => x.name === name);
  if (!k) throw new Error(`no kernel '${name}'`);
  return k;
}

export interface RunArgs {
  tensors?: Record<string, Tensor>;
  scalars?: Record<string, number>;
  kernel?: string;
}

/** Compiles and runs; returns the outputs by name. */
export function runDy(source: string, args: RunArgs = {}): Map<string, Tensor> {
  const k = pickKernel(compileModule(source), args.kernel);
  return runKernel(k, args);
}

export function runKernel(k: Kernel, args: RunArgs = {}): Map<string, Tensor> {
  return interpretKernel(k, {
    tensors: new Map(Object.entries(args.tensors ?? {})),
    scalars: new Map(Object.entries(args.scalars ?? {})),
  }).outputs;
}

export function dense(shape: number[], data: ArrayLike<number>): DenseTensor {
  const n = shape.reduce((a, b) => a * b, 1);
  if (data.length !== n) throw new Error(`dense: shape [${shape}] needs ${n} values, got ${data.length}`);
  return { format: 'dense', shape: [...shape], data: Float64Array.from(data) };
}

export function vec(data: ArrayLike<number>): DenseTensor {
  return dense([data.length], data);
}

/** Entries as [row, col, value] triples, in any order (no duplicates). */
export type Triple = [number, number, number];

function sortBy(ts: readonly Triple[], major: 0 | 1): Triple[] {
  const minor = major === 0 ? 1 : 0;
  return [...ts].sort((a, b) => a[major] - b[major] || a[minor] - b[minor]);
}

export function csr(rows: number, cols: number, ts: readonly Triple[]): CsrMatrix {
  const s = sortBy(ts, 0);
  const rowPtr = new Int32Array(rows + 1);
  for (const [r] of s) rowPtr[r + 1]!++;
  for (let r = 0; r < rows; r++) rowPtr[r + 1]! += rowPtr[r]!;
  return {
    format: 'csr',
    rows,
    cols,
    rowPtr,
    colIdx: Int32Array.from(s, (t) => t[1]),
    values: Float64Array.from(s, (t) => t[2]),
  };
}

export function csc(rows: number, cols: number, ts: readonly Triple[]): CscMatrix {
  const s = sortBy(ts, 1);
  const colPtr = new Int32Array(cols + 1);
  for (const [, c] of s) colPtr[c + 1]!++;
  for (let c = 0; c < cols; c++) colPtr[c + 1]! += colPtr[c]!;
  return {
    format: 'csc',
    rows,
    cols,
    colPtr,
    rowIdx: Int32Array.from(s, (t) => t[0]),
    values: Float64Array.from(s, (t) => t[2]),
  };
}

export function coo(rows: number, cols: number, ts: readonly Triple[]): CooMatrix {
  const s = sortBy(ts, 0);
  return {
    format: 'coo',
    rows,
    cols,
    rowIdx: Int32Array.from(s, (t) => t[0]),
    colIdx: Int32Array.from(s, (t) => t[1]),
    values: Float64Array.from(s, (t) => t[2]),
  };
}

/** Data of a dense output as a plain array (for toEqual). */
export function denseData(t: Tensor | undefined): number[] {
  if (!t || t.format !== 'dense') throw new Error(`expected a dense tensor, got ${t?.format}`);
  return [...t.data];
}

/** Stored entries of a sparse output as row-major [row, col, value] triples. */
export function entries(t: Tensor | undefined): Triple[] {
  if (!t || t.format === 'dense') throw new Error(`expected a sparse tensor, got ${t?.format}`);
  const out: Triple[] = [];
  if (t.format === 'csr') {
    for (let r = 0; r < t.rows; r++)
      for (let k = t.rowPtr[r]!; k < t.rowPtr[r + 1]!; k++) out.push([r, t.colIdx[k]!, t.values[k]!]);
  } else if (t.format === 'csc') {
    for (let c = 0; c < t.cols; c++)
      for (let k = t.colPtr[c]!; k < t.colPtr[c + 1]!; k++) out.push([t.rowIdx[k]!, c, t.values[k]!]);
  } else {
    for (let k = 0; k < t.values.length; k++) out.push([t.rowIdx[k]!, t.colIdx[k]!, t.values[k]!]);
  }
  return sortBy(out, 0);
}

/** Small fixtures shared by the interpreter, loop-IR and wasm known-answer tests. */
// 3x3 with an empty middle row:  [1 . 2; . . .; . 3 4]
export const A3: Triple[] = [
  [0, 0, 1],
  [0, 2, 2],
  [2, 1, 3],
  [2, 2, 4],
];
// 3x3 with an explicit zero at (1,0).
export const P: Triple[] = [
  [0, 0, 2],
  [0, 2, 1],
  [1, 0, 0],
  [2, 1, 5],
];
// 3x3 (or 3x4) with an empty middle row and column 3 empty.
export const R: Triple[] = [
  [0, 0, 1],
  [0, 2, 2],
  [2, 0, 4],
  [2, 1, 3],
];
export const x3 = vec([1, 2, 3]);
