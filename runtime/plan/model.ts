/**
 * The cost models' shared constants and arithmetic: the fractions of peak a
 * kernel class sustains, roofline, row width, and the terms of the fitted
 * CPU model (which `dype calibrate` solves for). Formulas and the sources of
 * the constants are in docs/COST-MODEL.md; the per-implementation times that
 * use them are in runtime/catalogue/.
 */
import type { CpuModelSpec, DeviceSpec } from '../system/types.js';
import type { Dtype, PlanOp, SparseFeatures } from './types.js';
import { macsPerCycle } from './fpga-designs.js';

export const MODEL = {
  /** Bytes a GPU moves per irregular 4- or 8-byte read it cannot coalesce (one 32-byte sector). */
  gpuSectorBytes: 32,
  /** Fractions of peak a kernel class sustains (compute, memory). */
  gpu: {
    gemmCompute: 0.7,
    sparseCompute: 0.25,
    memory: 0.8,
    /** Estimate: the share of the device one block of a block-reduce uses (one SM of ~100). */
    oneBlockShare: 0.01,
    /** Estimate: operations per second of the single thread of a serial kernel. */
    serialOpsPerS: 1e9,
    /**
     * Estimate: warp-per-row's slowdown per unit of (top-1% share x cv, cv
     * capped at 4): a few very long rows keep their warps busy after the rest
     * are done.
     */
    warpPerRowTail: 0.25,
  },
  cpu: { compute: 0.5, memory: 0.7, lineBytes: 64 },
  /** Warp width, and the extra work of merge-path partitioning (search plus carry-out fix-up). */
  warp: 32,
  mergePathOverhead: 1.12,
  /** Data-parallel split across k instances: added cost per extra instance. */
  splitOverhead: 0.05,
  /**
   * Data-parallel split across k > 1 instances: the fixed cost of
   * synchronising them after every op and trip (a cross-device event wait
   * before the next op may read the slices), us. An estimate, no
   * measurement; the event simulation (eval/sim) charges the same figure.
   */
  splitSyncUs: 10,
  /** Throughputs are those of the HLS designs (runtime/plan/fpga-designs.ts, the templates' default parameters). */
  fpga: {
    /** Sextans-style SpMM / SDDMM: multiply-accumulates per cycle. */
    spmmMacsPerCycle: macsPerCycle('spmm'),
    /** Output-stationary GEMM array: 16 x 16 PEs. */
    gemmMacsPerCycle: macsPerCycle('gemm'),
    /** Host-side packing of the nonzeros into channel streams, ns per nonzero. */
    packNsPerNnz: 2,
  },
} as const;

export const DTYPE_SIZE: Record<Dtype, number> = { f32: 4, f64: 8, i32: 4, i64: 8, bool: 1 };

export const isSparseKind = (k: string): boolean => k === 'spmv' || k === 'spmm' || k === 'sddmm' || k === 'reduce';

/** Peak operations per second of one instance for a dtype. */
export function peak(d: DeviceSpec, dtype: Dtype): number {
  const g = dtype === 'f64' ? d.peakGflops.f64 : dtype === 'i64' ? d.peakGflops.i64 : dtype === 'i32' || dtype === 'bool' ? d.peakGflops.i32 : d.peakGflops.f32;
  return g * 1e9;
}

/** Seconds; a device with peak 0 for a dtype cannot run it: Infinity, which the stage check rejects. */
export function roofline(flops: number, bytes: number, flopsPerS: number, bytesPerS: number): number {
  const compute = flops === 0 ? 0 : flops / flopsPerS;
  const memory = bytes === 0 ? 0 : bytes / bytesPerS;
  return Math.max(compute, memory);
}

/** Row width of the work: dense columns per stored entry (k of an SpMM, 1 for an SpMV). */
export function width(op: PlanOp): number {
  const nnz = op.sparse?.nnz ?? 0;
  return nnz > 0 ? Math.max(1, op.gathers / nnz) : 1;
}

/**
 * The terms of the fitted CPU model for one sparse-driven op (one trip, one
 * thread): what each CpuModelSpec coefficient multiplies. Shared with the
 * calibration fit (calibrate-fit.ts), which solves for the coefficients.
 */
export interface CpuTerms {
  nnz: number;
  gathers: number;
  rows: number;
  items: number;
  /** Cache lines of gathered dense-operand rows expected to miss the cache. */
  missLines: number;
  /** Bytes streamed beyond the cache. */
  dramBytes: number;
}

/** Whether the fitted CPU model (rather than the roofline) times this op. */
export function cpuModelled(op: PlanOp): boolean {
  return isSparseKind(op.kind) && op.sparse !== undefined;
}

/**
 * A gathered row of the dense operand (dense bytes D, cache C) misses with
 * probability (1 - locality) x max(0, 1 - C / D): uniform reuse over D with
 * C of it cached, and none for the share of near-consecutive columns; a
 * miss costs the row's 64-byte lines (at least one). The op's own bytes W
 * come from memory in proportion max(0, 1 - C / W).
 */
export function cpuTerms(op: PlanOp, cacheMB: number): CpuTerms {
  const f = op.sparse!;
  const cache = cacheMB * 1e6;
  const dense = f.cols * width(op) * DTYPE_SIZE[op.dtype];
  const locality = f.localityScore ?? 0.5;
  const beyond = (bytes: number): number => (bytes > cache ? 1 - cache / bytes : 0);
  return {
    nnz: f.nnz,
    gathers: op.gathers,
    rows: f.rows,
    items: op.items,
    missLines: op.gathers > 0 ? f.nnz * (1 - locality) * beyond(dense) * Math.max(1, (width(op) * DTYPE_SIZE[op.dtype]) / MODEL.cpu.lineBytes) : 0,
    dramBytes: op.bytes * beyond(op.bytes),
  };
}

/** Per-thread work of a fitted op, ns. */
export function cpuWorkNs(t: CpuTerms, m: CpuModelSpec): number {
  return t.nnz * m.nsPerNnz + t.gathers * m.nsPerGather + t.rows * m.nsPerRow + t.items * m.nsPerItem + t.missLines * m.nsPerMiss + t.dramBytes * m.nsPerByte;
}

/**
 * Share of the one-thread work the slowest of `threads` threads does: rows
 * are split by nnz, so 1 / speedup, but never less than the longest row's
 * share of the entries.
 */
export function cpuThreadShare(f: SparseFeatures | undefined, threads: number, efficiency: number): number {
  const even = 1 / (1 + (threads - 1) * efficiency);
  return f && f.nnz > 0 ? Math.max(even, Math.min(1, f.rowLenMax / f.nnz)) : even;
}

