/**
 * Runs a kernel through the reference interpreter and through its loop IR
 * (lower-kernels + interp/loops-exec.ts) and demands identical outputs, bit
 * for bit: both compute in float64 with the same operations in the same
 * order, so no tolerance is needed.
 */
import { expect } from 'vitest';
import type { Kernel } from '../../ir/module.js';
import { interpretKernel } from '../../interp/interpret.js';
import { runKernelViaLoops } from '../../interp/loops-exec.js';
import type { Tensor } from '../../runtime/tensor.js';

function arrays(t: Tensor): Record<string, ArrayLike<number>> {
  switch (t.format) {
    case 'dense':
      return { shape: t.shape, data: t.data };
    case 'csr':
      return { dims: [t.rows, t.cols], rowPtr: t.rowPtr, colIdx: t.colIdx, values: t.values };
    case 'csc':
      return { dims: [t.rows, t.cols], colPtr: t.colPtr, rowIdx: t.rowIdx, values: t.values };
    case 'coo':
      return { dims: [t.rows, t.cols], rowIdx: t.rowIdx, colIdx: t.colIdx, values: t.values };
  }
}

/** Object.is elementwise (NaN meets NaN, -0 differs from 0); reports the first mismatches. */
export function expectSameTensor(got: Tensor, want: Tensor, what: string): void {
  expect(got.format, `${what}: format`).toBe(want.format);
  const a = arrays(got);
  const b = arrays(want);
  for (const key of Object.keys(b)) {
    const x = a[key]!;
    const y = b[key]!;
    expect(x.length, `${what}.${key}: length`).toBe(y.length);
    const bad: string[] = [];
    for (let i = 0; i < y.length; i++)
      if (!Object.is(x[i], y[i]) && bad.length < 5) bad.push(`[${i}] loops ${x[i]}, interpreter ${y[i]}`);
    expect(bad, `${what}.${key} differs`).toEqual([]);
  }
}

export interface Inputs {
  tensors?: Record<string, Tensor>;
  scalars?: Record<string, number>;
}

/** Runs both ways, checks every output; returns the interpreter's outputs. */
export function expectLoopsMatchInterpreter(k: Kernel, args: Inputs, what = k.name): Map<string, Tensor> {
  const inputs = {
    tensors: new Map(Object.entries(args.tensors ?? {})),
    scalars: new Map(Object.entries(args.scalars ?? {})),
  };
  const want = interpretKernel(k, inputs).outputs;
  const got = runKernelViaLoops(k, inputs).outputs;
  expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
  for (const [name, t] of want) expectSameTensor(got.get(name)!, t, `${what}: ${name}`);
  return want;
}
