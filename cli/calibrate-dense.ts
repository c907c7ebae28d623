/**
 * The dense part of `dype calibrate`: GEMM (Y = X W) and an elementwise map
 * (Y = relu(X)) timed at one thread on the backend being calibrated, and
 * fitted as `ms = overhead + flops x nsPerDenseFlop + bytes x
 * nsPerDenseByte + trips x nsPerDenseTrip` (the op's flops and bytes as
 * annotate-cost counts them, its innermost loop's trips at the backend's
 * block of columns: runtime/catalogue/cpu.ts `denseTrips`), non-negative
 * least squares on relative errors, the per-op overhead the sparse fit's.
 * The trips carry the shape: a GEMM's time follows its output width, not
 * its k, since a narrow block does less work a trip (docs/COST-MODEL.md).
 * Without these figures a CPU prices dense ops by the roofline of its peak,
 * which the generated kernels reach a small part of (docs/COST-MODEL.md).
 * Shapes held out of the fit report the error.
 */
import { CPU_BLOCK_BYTES } from '../codegen/cpu/lanes.js';
import { plannedSpec } from '../codegen/implementations.js';
import { cacheRoot } from '../codegen/wasm/cache.js';
import { emitWasm } from '../codegen/wasm/emit.js';
import { WASM_BLOCK_BYTES } from '../codegen/wasm/simd.js';
import { compileSource } from '../frontend/compile.js';
import { DEFAULT_PIPELINE, runPipeline } from '../passes/index.js';
import { lowerKernelsPass } from '../passes/lower-kernels.js';
import { denseTrips } from '../runtime/catalogue/cpu.js';
import { bindProblem } from '../runtime/plan/bind.js';
import { nnls } from '../runtime/plan/calibrate-fit.js';
import type { PlanOp, PlanSpec } from '../runtime/plan/types.js';
import type { DenseTensor, Tensor } from '../runtime/tensor.js';
import { createWasmExecutor, type WasmExecutor } from '../runtime/wasm/executor.js';

export const DENSE = {
  gemm: 'kernel gemm(X: dense<f32>[n, k], W: dense<f32>[k, h]) -> (Y: dense<f32>[n, h]) { Y[i, j] = X[i, l] * W[l, j]; }',
  map: 'kernel map(X: dense<f32>[n, k]) -> (Y: dense<f32>[n, k]) { Y[i, j] = relu(X[i, j]); }',
} as const;
export type DenseName = keyof typeof DENSE;

/** One timed shape: n rows, k columns in, h out (GEMM; a map keeps k). */
export interface DenseShape {
  kernel: DenseName;
  n: number;
  k: number;
  h: number;
}

const FIT: readonly DenseShape[] = [
  ...[2_000, 20_000, 100_000].flatMap((n) =>
    [
      [16, 16],
      [64, 64],
      [16, 128],
    ].map(([k, h]) => ({ kernel: 'gemm' as const, n, k: k!, h: h! })),
  ),
  ...[10_000, 100_000, 1_000_000].flatMap((n) => [4, 32].map((k) => ({ kernel: 'map' as const, n, k, h: k }))),
];
const FIT_QUICK: readonly DenseShape[] = [
  { kernel: 'gemm', n: 5_000, k: 16, h: 16 },
  { kernel: 'gemm', n: 20_000, k: 64, h: 64 },
  { kernel: 'map', n: 20_000, k: 8, h: 8 },
  { kernel: 'map', n: 400_000, k: 16, h: 16 },
];
const HELD_OUT: readonly DenseShape[] = [
  { kernel: 'gemm', n: 50_000, k: 32, h: 32 },
  { kernel: 'gemm', n: 8_000, k: 128, h: 16 },
  { kernel: 'map', n: 300_000, k: 8, h: 8 },
  { kernel: 'map', n: 50_000, k: 64, h: 64 },
];

export interface DenseRow extends DenseShape {
  flops: number;
  bytes: number;
  /** Innermost-loop trips at the backend's block of columns. */
  trips: number;
  measuredMs: number;
  predictedMs: number;
}

export interface DenseFit {
  nsPerDenseFlop: number;
  nsPerDenseByte: number;
  nsPerDenseTrip: number;
  /** The backend's block of columns a trip runs (codegen/cpu/lanes.ts, codegen/wasm/simd.ts). */
  denseBlockBytes: number;
  fitRows: DenseRow[];
  rows: DenseRow[];
}

interface DenseKernel {
  exec: WasmExecutor;
  spec: PlanSpec;
}

/**
 * A calibration kernel from its source: its planned spec and one executor per thread count on the backend
 * timed (the native library through the compile cache, as dype run --backend native builds it; or wasm).
 */
export async function calibrationKernel(
  name: string,
  source: string,
  backend: 'native' | 'wasm',
  threadCounts: readonly number[],
): Promise<{ spec: PlanSpec; executors: Map<number, WasmExecutor> }> {
  const m = runPipeline(compileSource(source, `${name}.dy`).module!, {
    passes: [...DEFAULT_PIPELINE, lowerKernelsPass],
  });
  const k = m.kernels[0]!;
  const spec = plannedSpec(m, `${name}.dy`, k.name);
  const executors = new Map<number, WasmExecutor>();
  if (backend === 'native') {
    const { compileCpuKernel } = await import('../codegen/cpu/compile.js');
    const { createNativeCpuExecutor } = await import('../runtime/native/cpu-executor.js');
    const c = compileCpuKernel(name, k, cacheRoot());
    try {
      for (const threads of threadCounts)
        executors.set(
          threads,
          createNativeCpuExecutor(c.build.path, c.manifest, { threads, program: c.program, programHash: c.hash }),
        );
    } finally {
      c.build.cleanup();
    }
  } else {
    const { binary, manifest } = await emitWasm(k);
    for (const threads of threadCounts) executors.set(threads, await createWasmExecutor(binary, manifest, { threads }));
  }
  return { spec, executors };
}

async function compileDense(name: DenseName, backend: 'native' | 'wasm'): Promise<DenseKernel> {
  const { spec, executors } = await calibrationKernel(`calibrate_${name}`, DENSE[name], backend, [1]);
  return { exec: executors.get(1)!, spec };
}

const dense = (rows: number, cols: number): DenseTensor => ({
  format: 'dense',
  shape: [rows, cols],
  data: Float64Array.from({ length: rows * cols }, (_, p) => ((p % 7) - 3) * 0.25),
});

const dimsOf = (s: DenseShape): Map<string, number> =>
  new Map([
    ['n', s.n],
    ['k', s.k],
    ['h', s.h],
  ]);

/** A shape's work as the planner counts it from the kernel's planned spec: flops, bytes and trips at `blockBytes`. */
export function denseCounts(
  spec: PlanSpec,
  s: DenseShape,
  blockBytes: number,
): Pick<DenseRow, 'flops' | 'bytes' | 'trips'> {
  const ops: PlanOp[] = bindProblem(spec, { sparse: new Map(), dims: dimsOf(s), scalars: new Map() }).ops;
  return {
    flops: ops.reduce((a, o) => a + o.flops, 0),
    bytes: ops.reduce((a, o) => a + o.bytes, 0),
    trips: ops.reduce((a, o) => a + denseTrips(o, blockBytes), 0),
  };
}

/** The shape's counts (denseCounts) and the fastest of several runs (ms). */
function timeShape(
  c: DenseKernel,
  s: DenseShape,
  blockBytes: number,
  cpuMs: (run: () => void) => number,
): Omit<DenseRow, 'predictedMs'> {
  const dims = dimsOf(s);
  const tensors = new Map<string, Tensor>(
    s.kernel === 'gemm'
      ? [
          ['X', dense(s.n, s.k)],
          ['W', dense(s.k, s.h)],
        ]
      : [['X', dense(s.n, s.k)]],
  );
  const measuredMs = cpuMs(() => c.exec.execute({ tensors, scalars: new Map(), dims }));
  return { ...s, ...denseCounts(c.spec, s, blockBytes), measuredMs };
}

/**
 * The dense figures from timed shapes: non-negative least squares on relative errors, `overheadUs` (the sparse fit's
 * per-op overhead) taken off each time; `trips: false` fits flops and bytes alone (the form before the trips, for
 * comparison: bench/calibrate-refit.ts), nsPerDenseTrip then 0. Each row comes back with its prediction.
 */
export function fitDense(
  fitRows: readonly Omit<DenseRow, 'predictedMs'>[],
  heldRows: readonly Omit<DenseRow, 'predictedMs'>[],
  overheadUs: number,
  denseBlockBytes: number,
  trips = true,
): DenseFit {
  const over = overheadUs / 1e3;
  const terms = (r: Omit<DenseRow, 'predictedMs'>): number[] =>
    trips ? [r.flops, r.bytes, r.trips] : [r.flops, r.bytes];
  // Relative errors: each row divided by its measured time; ns to ms.
  const A = fitRows.map((r) => terms(r).map((x) => (x * 1e-6) / r.measuredMs));
  const b = fitRows.map((r) => Math.max(0, r.measuredMs - over) / r.measuredMs);
  const [nsPerDenseFlop, nsPerDenseByte, nsPerDenseTrip = 0] = nnls(A, b) as [number, number, number?];
  const predict = (r: Omit<DenseRow, 'predictedMs'>): DenseRow => ({
    ...r,
    predictedMs: over + (r.flops * nsPerDenseFlop + r.bytes * nsPerDenseByte + r.trips * nsPerDenseTrip) * 1e-6,
  });
  return {
    nsPerDenseFlop,
    nsPerDenseByte,
    nsPerDenseTrip,
    denseBlockBytes,
    fitRows: fitRows.map(predict),
    rows: heldRows.map(predict),
  };
}

/**
 * Times and fits the dense ops. `time` runs a kernel call repeatedly and
 * returns its time as the sparse part measures one thread (cli/calibrate.ts);
 * `overheadUs` is the per-op overhead the sparse fit found.
 */
export async function calibrateDense(
  backend: 'native' | 'wasm',
  quick: boolean,
  overheadUs: number,
  time: (run: () => void) => number,
  tick: () => void,
): Promise<DenseFit> {
  const denseBlockBytes = blockBytesOf(backend);
  const kernels = new Map<DenseName, DenseKernel>();
  for (const name of Object.keys(DENSE) as DenseName[]) kernels.set(name, await compileDense(name, backend));
  try {
    const timed = (list: readonly DenseShape[]) =>
      list.map((s) => {
        const r = timeShape(kernels.get(s.kernel)!, s, denseBlockBytes, time);
        tick();
        return r;
      });
    return fitDense(timed(quick ? FIT_QUICK : FIT), timed(HELD_OUT), overheadUs, denseBlockBytes);
  } finally {
    for (const k of kernels.values()) k.exec.close();
  }
}

/** The block of columns a trip of the backend's dense loops runs. */
export function blockBytesOf(backend: 'native' | 'wasm'): number {
  switch (backend) {
    case 'native':
      return CPU_BLOCK_BYTES;
    case 'wasm':
      return WASM_BLOCK_BYTES;
  }
}

/** How many shapes calibrateDense times (for the progress bar). */
export const denseShapeCount = (quick: boolean): number => (quick ? FIT_QUICK : FIT).length + HELD_OUT.length;
