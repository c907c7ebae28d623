/**
 * Cost models: predicted time of one op on `count` instances of a device,
 * for each kernel variant that device offers, as a function of the op's work
 * counts and the input's features. Formulas and the sources of their
 * constants are in docs/COST-MODEL.md; every constant lives in MODEL below.
 */
import type { CpuModelSpec, DeviceSpec } from '../system/types.js';
import type { Dtype, PlanOp, SparseFeatures } from './types.js';
import { FPGA_DESIGN_DEFAULTS, macsPerCycle, nnzPerChannelCycle } from './fpga-designs.js';

export const MODEL = {
  /** Bytes a GPU moves per irregular 4- or 8-byte read it cannot coalesce (one 32-byte sector). */
  gpuSectorBytes: 32,
  /** Fractions of peak a kernel class sustains (compute, memory). */
  gpu: { gemmCompute: 0.7, sparseCompute: 0.25, memory: 0.8 },
  cpu: { compute: 0.5, memory: 0.7, lineBytes: 64 },
  /** Warp width, and the extra work of merge-path partitioning (search plus carry-out fix-up). */
  warp: 32,
  mergePathOverhead: 1.12,
  /** Expected max/mean of 32 rows' lengths grows like 1 + cv * sqrt(2 ln 32). */
  rowPerThreadSkew: Math.sqrt(2 * Math.log(32)),
  /** Data-parallel split across k instances: added cost per extra instance. */
  splitOverhead: 0.05,
  /** Throughputs are those of the HLS designs (runtime/plan/fpga-designs.ts, the templates' default parameters). */
  fpga: {
    /** Serpens-style SpMV: nonzeros consumed per cycle per HBM channel given to the matrix. */
    spmvNnzPerChannelCycle: nnzPerChannelCycle(FPGA_DESIGN_DEFAULTS.spmv),
    /** HBM channels the SpMV / SpMM engines stream the matrix from. */
    matrixChannels: FPGA_DESIGN_DEFAULTS.spmv.channels,
    /** Sextans-style SpMM / SDDMM: multiply-accumulates per cycle. */
    spmmMacsPerCycle: macsPerCycle('spmm'),
    /** Output-stationary GEMM array: 16 x 16 PEs. */
    gemmMacsPerCycle: macsPerCycle('gemm'),
    /** Host-side packing of the nonzeros into channel streams, ns per nonzero. */
    packNsPerNnz: 2,
  },
} as const;

export const DTYPE_SIZE: Record<Dtype, number> = { f32: 4, f64: 8, i32: 4, i64: 8, bool: 1 };

/** FPGA resources one kernel design uses (estimates in the manner of Serpens/Sextans; see docs). */
export const FPGA_RESOURCES: Record<string, { lut: number; ff: number; bram: number; uram: number; dsp: number }> = {
  spmv: { lut: 220_000, ff: 330_000, bram: 450, uram: 384, dsp: 640 },
  spmm: { lut: 380_000, ff: 560_000, bram: 700, uram: 384, dsp: 2_600 },
  sddmm: { lut: 360_000, ff: 520_000, bram: 640, uram: 256, dsp: 2_400 },
  gemm: { lut: 150_000, ff: 250_000, bram: 320, uram: 0, dsp: 1_300 },
  stream: { lut: 40_000, ff: 60_000, bram: 64, uram: 0, dsp: 80 },
};

/** The kernel design an op needs on an FPGA (one bitstream must hold all designs of its stage). */
export function fpgaDesign(kind: string): string {
  if (kind === 'spmv' || kind === 'reduce') return 'spmv';
  if (kind === 'spmm') return 'spmm';
  if (kind === 'sddmm') return 'sddmm';
  if (kind === 'gemm' || kind === 'gemv' || kind === 'contract') return 'gemm';
  return 'stream';
}

export interface VariantTime {
  variant: string;
  ms: number;
}

const isSparseKind = (k: string): boolean => k === 'spmv' || k === 'spmm' || k === 'sddmm' || k === 'reduce';

function peak(d: DeviceSpec, dtype: Dtype): number {
  const g = dtype === 'f64' ? d.peakGflops.f64 : dtype === 'i64' ? d.peakGflops.i64 : dtype === 'i32' || dtype === 'bool' ? d.peakGflops.i32 : d.peakGflops.f32;
  return g * 1e9;
}

/** A device with peak 0 for a dtype cannot run it: Infinity, which the stage check rejects. */
function roofline(flops: number, bytes: number, flopsPerS: number, bytesPerS: number): number {
  const compute = flops === 0 ? 0 : flops / flopsPerS;
  const memory = bytes === 0 ? 0 : bytes / bytesPerS;
  return Math.max(compute, memory);
}

/** Row width of the work: dense columns per stored entry (k of an SpMM, 1 for an SpMV). */
function width(op: PlanOp): number {
  const nnz = op.sparse?.nnz ?? 0;
  return nnz > 0 ? Math.max(1, op.gathers / nnz) : 1;
}

function gpuVariants(op: PlanOp, d: DeviceSpec): VariantTime[] {
  const bw = d.memBandwidthGBs * 1e9 * MODEL.gpu.memory;
  const size = DTYPE_SIZE[op.dtype];
  const locality = op.sparse?.localityScore ?? 0.5;
  const gatherBytes = op.gathers * (size + (1 - locality) * (MODEL.gpuSectorBytes - size));
  const bytes = op.bytes + gatherBytes;
  if (op.kind === 'gemm' || op.kind === 'gemv' || op.kind === 'contract') {
    const eff = op.kind === 'gemm' ? MODEL.gpu.gemmCompute : MODEL.gpu.sparseCompute;
    return [{ variant: op.kind === 'gemm' ? 'tiled' : 'row-per-thread', ms: roofline(op.flops, bytes, peak(d, op.dtype) * eff, bw) * 1e3 }];
  }
  if (!isSparseKind(op.kind) || !op.sparse) return [{ variant: 'elementwise', ms: roofline(op.flops, bytes, peak(d, op.dtype) * MODEL.gpu.sparseCompute, bw) * 1e3 }];
  const f = op.sparse;
  const base = roofline(op.flops, bytes, peak(d, op.dtype) * MODEL.gpu.sparseCompute, bw);
  const w = width(op);
  // Row per thread: a warp waits for its longest row.
  const skew = Math.min(1 + f.rowLenCv * MODEL.rowPerThreadSkew, f.rowLenMean > 0 ? Math.max(1, f.rowLenMax / f.rowLenMean) : 1);
  // Warp per row: lanes cover the row's entries (SpMV) or the dense width (SpMM); short rows idle lanes.
  const lanesBusy = op.kind === 'spmv' || op.kind === 'reduce' ? Math.min(1, Math.max(f.rowLenMean, 1e-9) / MODEL.warp) : Math.min(1, w / MODEL.warp);
  const warpSkew = 1 + 0.25 * f.top1PctNnzShare * Math.min(f.rowLenCv, 4);
  const out: VariantTime[] = [
    { variant: 'row-per-thread', ms: base * skew * 1e3 },
    { variant: 'warp-per-row', ms: (base / Math.max(lanesBusy, 1 / MODEL.warp)) * warpSkew * 1e3 },
    { variant: 'merge-path', ms: (base * MODEL.mergePathOverhead + (f.rows * 8) / bw) * 1e3 },
  ];
  return out;
}

function fpgaVariants(op: PlanOp, d: DeviceSpec): VariantTime[] {
  const fp = d.fpga!;
  const clock = fp.clockMHz * 1e6;
  const hbm = fp.hbmChannels * fp.channelBandwidthGBs * 1e9;
  const stream = op.bytes / hbm;
  const nnz = op.sparse?.nnz ?? 0;
  const pack = (nnz * MODEL.fpga.packNsPerNnz) / 1e9;
  switch (fpgaDesign(op.kind)) {
    case 'spmv': {
      const cycles = nnz / (MODEL.fpga.spmvNnzPerChannelCycle * Math.min(MODEL.fpga.matrixChannels, fp.hbmChannels));
      // The dense vector is read once per column window and the result written once: the streamed bytes.
      return [{ variant: 'serpens-stream', ms: (Math.max(cycles / clock, stream) + pack) * 1e3 }];
    }
    case 'spmm':
    case 'sddmm': {
      const macs = op.gathers > 0 ? op.gathers : op.flops / 2;
      return [{ variant: 'sextans-stream', ms: (Math.max(macs / MODEL.fpga.spmmMacsPerCycle / clock, stream) + pack) * 1e3 }];
    }
    case 'gemm':
      return [{ variant: 'systolic', ms: Math.max(op.flops / 2 / MODEL.fpga.gemmMacsPerCycle / clock, stream) * 1e3 }];
    default:
      return [{ variant: 'stream', ms: Math.max(op.items / (8 * clock), stream) * 1e3 }];
  }
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

function cpuVariants(op: PlanOp, d: DeviceSpec): VariantTime[] {
  const threads = d.threads ?? 1;
  const f = op.sparse;
  const m = d.cpuModel;
  if (m && cpuModelled(op)) {
    const share = threads === 1 ? 1 : cpuThreadShare(f, threads, m.parallelEfficiency ?? 1);
    const dispatch = (threads - 1) * (m.dispatchUsPerThread ?? 0) * 1e3;
    return [{ variant: 'nnz-split', ms: (cpuWorkNs(cpuTerms(op, m.cacheMB), m) * share + dispatch) / 1e6 }];
  }
  const bw = d.memBandwidthGBs * 1e9 * MODEL.cpu.memory;
  const size = DTYPE_SIZE[op.dtype];
  const locality = op.sparse?.localityScore ?? 0.5;
  const bytes = op.bytes + op.gathers * (size + (1 - locality) * (MODEL.cpu.lineBytes - size) * 0.25);
  const t = roofline(op.flops, bytes, peak(d, op.dtype) * MODEL.cpu.compute, bw);
  // Rows are split by nnz across threads; a single row longer than a thread's share still bounds it.
  const longest = f && f.nnz > 0 ? Math.max(1, (f.rowLenMax * threads) / f.nnz) : 1;
  return [{ variant: 'nnz-split', ms: t * Math.min(longest, threads) * 1e3 }];
}

/** Every variant's time for one run of `op` on one instance (launch overhead included). */
export function variantTimes(op: PlanOp, d: DeviceSpec): VariantTime[] {
  const vs = d.kind === 'gpu' ? gpuVariants(op, d) : d.kind === 'fpga' ? fpgaVariants(op, d) : cpuVariants(op, d);
  return vs.map((v) => ({ variant: v.variant, ms: v.ms + d.launchOverheadUs / 1e3 }));
}

/** The fastest variant for `op` on `count` instances splitting its rows by nnz, all trips included. */
export function bestOpTime(op: PlanOp, d: DeviceSpec, count: number): VariantTime {
  let best: VariantTime | undefined;
  for (const v of variantTimes(op, d)) if (!best || v.ms < best.ms) best = v;
  const launch = d.launchOverheadUs / 1e3;
  const work = best!.ms - launch;
  const split = count === 1 ? work : (work / count) * (1 + MODEL.splitOverhead * (count - 1));
  return { variant: best!.variant, ms: op.trips * (split + launch) };
}
