/**
 * Compiles kernels to wasm (lower-kernels + codegen/wasm) and compares the
 * wasm executor's outputs with the reference interpreter's.
 *
 * Tolerance: the interpreter computes in float64 whatever the dtype; the wasm
 * backend computes f32 programs in f32. A value b of the reference and a of
 * wasm must satisfy |a - b| <= tol * max(1, |b|), with tol = 1e-4 for f32
 * programs (about 800 f32 ulps: rounding of inputs plus the sums of up to a
 * few thousand products of the test data, which are O(1)) and 1e-12 for f64
 * programs (same operations in the same order: equal in practice, the bound
 * only allows for libm differences, none seen). NaN and ±inf positions must be
 * equal; integer and bool outputs, and every pattern array, exactly equal.
 */
import { expect } from 'vitest';
import { compileSource } from '../../frontend/compile.js';
import type { Kernel } from '../../ir/module.js';
import { interpretKernel } from '../../interp/interpret.js';
import { DEFAULT_PIPELINE, runPipeline } from '../../passes/index.js';
import { emitWasm } from '../../codegen/wasm/emit.js';
import { createWasmExecutor, type WasmExecutor } from '../../runtime/wasm/executor.js';
import type { Tensor } from '../../runtime/tensor.js';
import type { WasmManifest } from '../../runtime/wasm/manifest.js';

export const TOL_F32 = 1e-4;
export const TOL_F64 = 1e-12;

/** Through the default pipeline plus lower-kernels (the kernel carries its loops). */
export function loopKernel(src: string, file = 'wasm.dy'): Kernel {
  const r = compileSource(src, file);
  if (!r.module) throw new Error(r.diagnostics.map((d) => `${d.code}: ${d.message}`).join('\n'));
  return runPipeline(r.module, { passes: [...DEFAULT_PIPELINE, 'lower-kernels'] }).kernels[0]!;
}

export interface Compiled {
  kernel: Kernel;
  exec: WasmExecutor;
  binary: Uint8Array;
  manifest: WasmManifest;
}

export async function compileWasm(k: Kernel): Promise<Compiled> {
  const { binary, manifest } = await emitWasm(k);
  return { kernel: k, exec: await createWasmExecutor(binary, manifest), binary, manifest };
}

export interface Inputs {
  tensors?: Record<string, Tensor>;
  scalars?: Record<string, number>;
}

export function toMaps(a: Inputs): { tensors: Map<string, Tensor>; scalars: Map<string, number> } {
  return { tensors: new Map(Object.entries(a.tensors ?? {})), scalars: new Map(Object.entries(a.scalars ?? {})) };
}

function parts(t: Tensor): { structure: Record<string, ArrayLike<number>>; values: ArrayLike<number> } {
  switch (t.format) {
    case 'dense':
      return { structure: { shape: t.shape }, values: t.data };
    case 'csr':
      return { structure: { dims: [t.rows, t.cols], rowPtr: t.rowPtr, colIdx: t.colIdx }, values: t.values };
    case 'csc':
      return { structure: { dims: [t.rows, t.cols], colPtr: t.colPtr, rowIdx: t.rowIdx }, values: t.values };
    case 'coo':
      return { structure: { dims: [t.rows, t.cols], rowIdx: t.rowIdx, colIdx: t.colIdx }, values: t.values };
  }
}

/** Largest |a - b| / max(1, |b|) over finite pairs; throws (via expect) on any structural or non-finite mismatch. */
export function expectClose(got: Tensor, want: Tensor, tol: number, what: string): number {
  expect(got.format, `${what}: format`).toBe(want.format);
  const g = parts(got);
  const w = parts(want);
  for (const key of Object.keys(w.structure))
    expect(Array.from(g.structure[key]!), `${what}.${key}`).toEqual(Array.from(w.structure[key]!));
  expect(g.values.length, `${what}: length`).toBe(w.values.length);
  let worst = 0;
  const bad: string[] = [];
  for (let i = 0; i < w.values.length; i++) {
    const [a, b] = [g.values[i]!, w.values[i]!];
    if (!Number.isFinite(b) || !Number.isFinite(a)) {
      if (!Object.is(a, b) && bad.length < 5) bad.push(`[${i}] wasm ${a}, reference ${b}`);
      continue;
    }
    const err = Math.abs(a - b) / Math.max(1, Math.abs(b));
    if (err > worst) worst = err;
    if (err > tol && bad.length < 5) bad.push(`[${i}] wasm ${a}, reference ${b} (relative ${err.toExponential(2)})`);
  }
  expect(bad, `${what}: values differ`).toEqual([]);
  return worst;
}

/** Bit-for-bit equality of two wasm runs. */
export function expectIdentical(a: Tensor, b: Tensor, what: string): void {
  const [x, y] = [parts(a), parts(b)];
  for (const key of Object.keys(y.structure))
    expect(Array.from(x.structure[key]!), `${what}.${key}`).toEqual(Array.from(y.structure[key]!));
  const xs = Float64Array.from(x.values);
  const ys = Float64Array.from(y.values);
  expect(xs.length, `${what}: length`).toBe(ys.length);
  // A word loop, not toEqual: deep equality of large arrays costs seconds.
  const [wx, wy] = [new Uint32Array(xs.buffer), new Uint32Array(ys.buffer)];
  let first = -1;
  for (let q = 0; q < wx.length && first < 0; q++) if (wx[q] !== wy[q]) first = q >> 1;
  expect(
    first < 0 ? 'identical' : `first difference at [${first}]: ${xs[first]} vs ${ys[first]}`,
    `${what}: bits`,
  ).toBe('identical');
}

/** Runs the reference and wasm (twice), compares; returns the wasm outputs. */
export function expectWasmMatches(c: Compiled, args: Inputs, what = c.kernel.name): Map<string, Tensor> {
  const inputs = toMaps(args);
  const want = interpretKernel(c.kernel, inputs).outputs;
  const got = c.exec.run(inputs).outputs;
  // A second run with fresh input maps (inputs re-copied) must give the very same bits.
  const again = c.exec.run(toMaps(args)).outputs;
  expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
  for (const [name, t] of want) {
    const decl = c.kernel.results.find((r) => r.name === name)!;
    const tol = decl.type.dtype === 'f32' ? TOL_F32 : decl.type.dtype === 'f64' ? TOL_F64 : 0;
    expectClose(got.get(name)!, t, tol, `${what}: ${name}`);
    expectIdentical(again.get(name)!, got.get(name)!, `${what}: ${name} (second run)`);
  }
  return got;
}
