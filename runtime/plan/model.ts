/**
 * The cost models' shared constants and arithmetic: the fractions of peak a
 * kernel class sustains, roofline, row width, and the terms of the fitted
 * CPU model (which `dype calibrate` solves for). Each constant's source is
 * its entry in MODEL_SOURCES (docs/COST-MODEL.md "Every model parameter" is
 * generated from it); the formulas are in docs/COST-MODEL.md, the
 * per-implementation times that use them in runtime/catalogue/.
 */
import type { CpuModelSpec, DeviceSpec } from '../system/types.js';
import type { Dtype, PlanOp, SparseFeatures } from './types.js';
import { macsPerCycle } from './fpga-designs.js';
import type { ParameterTable } from './parameters.js';

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
    /** The row-length CV at which warp-per-row's tail stops growing. */
    warpPerRowCvCap: 4,
  },
  /**
   * CPU roofline (a CPU without a fitted cpuModel): fractions of peak, the
   * cache line, and the share of a line an irregular read costs (caches
   * catch much of it).
   */
  cpu: { compute: 0.5, memory: 0.7, lineBytes: 64, gatherLineShare: 0.25 },
  /** Locality (the tier-2 feature) assumed for a matrix that has none. */
  defaultLocality: 0.5,
  /** rowLenChangeFraction (tier 1) assumed for features that lack it (records made before it, synthetic profiles). */
  defaultRowLenChange: 0.5,
  /** Warp width, and the extra work of merge-path partitioning (search plus carry-out fix-up). */
  warp: 32,
  mergePathOverhead: 1.12,
  /** Bytes merge-path's path search reads per row (the row pointers again). */
  mergePathRowBytes: 8,
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

/**
 * Where each MODEL constant comes from (docs/COST-MODEL.md "Every model
 * parameter" is generated from this; test/eval/parameters.test.ts fails
 * when a constant has no entry). Keys are paths below MODEL.
 */
export const MODEL_SOURCES: ParameterTable = {
  'MODEL.gpuSectorBytes': {
    unit: 'bytes',
    kind: 'architecture',
    source:
      "CUDA's 32-byte memory sectors: an uncoalesced 4- or 8-byte read moves one sector (NVIDIA CUDA C++ Best Practices Guide)",
    measuredOn: 'NVIDIA GPU memory architecture',
  },
  'MODEL.gpu.gemmCompute': {
    unit: 'of peak',
    kind: 'estimate',
    source:
      'estimate: a shared-memory tiled GEMM (not tensor cores) sustains most of the FP32 peak; 0.7 taken. GPU dense GEMM only',
    measuredOn: 'none',
    max: 1,
  },
  'MODEL.gpu.sparseCompute': {
    unit: 'of peak',
    kind: 'estimate',
    source:
      'estimate: the compute bound of sparse and elementwise GPU kernels, never the binding one for an SpMV (2 flops per 12 or more bytes)',
    measuredOn: 'none',
    max: 1,
  },
  'MODEL.gpu.memory': {
    unit: 'of datasheet bandwidth',
    kind: 'estimate',
    source:
      "estimate: the share of the datasheet bandwidth a dense kernel sustains on a GPU (and any op on a GPU without a gpuModel); for comparison, the A100's measured copy and triad reach 0.86-0.89 of its 1555 GB/s (device-anchors.md section 2.1), not used here",
    measuredOn: 'none',
    max: 1,
  },
  'MODEL.gpu.oneBlockShare': {
    unit: 'of the device',
    kind: 'estimate',
    source: 'estimate: one block of a block-reduce kernel uses one SM of about a hundred',
    measuredOn: 'none',
    notInEval: 'read only by the GPU block-reduce implementation, which no workload of the suite has',
  },
  'MODEL.gpu.serialOpsPerS': {
    unit: 'op/s',
    kind: 'estimate',
    source: "estimate: one GPU thread's rate, about 1 GHz x one operation a cycle",
    measuredOn: 'none',
    notInEval: 'read only by the GPU serial implementation, which no workload of the suite has',
  },
  'MODEL.gpu.warpPerRowTail': {
    unit: 'x per unit of share x cv',
    kind: 'estimate',
    source:
      "estimate: warp-per-row's slowdown per unit of (top-1% share x row-length CV): a few very long rows keep their warps busy after the rest are done",
    measuredOn: 'none',
  },
  'MODEL.gpu.warpPerRowCvCap': {
    unit: 'CV',
    kind: 'estimate',
    source: "estimate: the row-length CV above which warp-per-row's tail stops growing",
    measuredOn: 'none',
  },
  'MODEL.cpu.compute': {
    unit: 'of peak',
    kind: 'estimate',
    source:
      'estimate: the compute share of a CPU roofline (CPUs without a fitted cpuModel: every preset but this-machine)',
    measuredOn: 'none',
    max: 1,
  },
  'MODEL.cpu.memory': {
    unit: 'of memBandwidthGBs',
    kind: 'estimate',
    source:
      'estimate: the share of the bandwidth figure a CPU sparse kernel streams at (CPUs without a fitted cpuModel)',
    measuredOn: 'none',
    max: 1,
  },
  'MODEL.cpu.lineBytes': {
    unit: 'bytes',
    kind: 'architecture',
    source: 'the 64-byte cache line of x86 CPUs (Intel and AMD optimisation manuals)',
    measuredOn: 'x86-64 architecture',
  },
  'MODEL.cpu.gatherLineShare': {
    unit: 'of a line',
    kind: 'estimate',
    source:
      'estimate: an irregular read on a CPU costs a quarter of a 64-byte line beyond its element, since caches catch much of it (CPU roofline only; the fitted cpuModel has its own miss term)',
    measuredOn: 'none',
    max: 1,
  },
  'MODEL.defaultLocality': {
    unit: 'fraction',
    kind: 'estimate',
    source: 'estimate: the localityScore of a matrix without tier-2 features, half the columns scattered',
    measuredOn: 'none',
    max: 1,
  },
  'MODEL.defaultRowLenChange': {
    unit: 'fraction',
    kind: 'estimate',
    source:
      'estimate: the rowLenChangeFraction of features that lack it, half the rows changing length (the 24 real matrices here: 0 to 1, median 0.55)',
    measuredOn: 'none',
    max: 1,
  },
  'MODEL.warp': {
    unit: 'threads',
    kind: 'architecture',
    source: 'CUDA warp width (NVIDIA CUDA C++ Programming Guide)',
    measuredOn: 'NVIDIA GPU architecture',
  },
  'MODEL.mergePathOverhead': {
    unit: 'x',
    kind: 'estimate',
    source: 'estimate: merge-path SpMV does its work x1.12 (the path search and the carry-out fix-up)',
    measuredOn: 'none',
    range: { low: 1.06, high: 1.24, basis: 'estimate: the overhead above 1 (0.12) x0.5 / x2' },
  },
  'MODEL.mergePathRowBytes': {
    unit: 'bytes per row',
    kind: 'estimate',
    source: "estimate: merge-path's path search reads the row pointers again, 8 bytes a row",
    measuredOn: 'none',
  },
  'MODEL.splitOverhead': {
    unit: 'per extra instance',
    kind: 'estimate',
    source:
      'estimate: a data-parallel split over k instances does its work / k x (1 + 0.05 (k - 1)): uneven shares and duplicated boundary work',
    measuredOn: 'none',
  },
  'MODEL.splitSyncUs': {
    unit: 'us',
    kind: 'estimate',
    source:
      "estimate: a split stage's instances synchronise after every op and trip (a cross-device event wait before the next op reads the slices); no measurement. The event simulation charges the same figure",
    measuredOn: 'none',
  },
  'MODEL.fpga.spmmMacsPerCycle': {
    unit: 'MAC/cycle',
    kind: 'design',
    source:
      "computed from the Sextans-style SpMM design's default parameters: 4 channels x 8 PEs x 8 lanes (runtime/plan/fpga-designs.ts); the FPGA SDDMM, and a sparse-row design given a dense op, run at it",
    measuredOn: 'design',
  },
  'MODEL.fpga.gemmMacsPerCycle': {
    unit: 'MAC/cycle',
    kind: 'design',
    source: 'computed from the GEMM design: a 16 x 16 output-stationary array (runtime/plan/fpga-designs.ts)',
    measuredOn: 'design',
  },
  'MODEL.fpga.packNsPerNnz': {
    unit: 'ns per nonzero',
    kind: 'estimate',
    source:
      'estimate: a launch on a pattern it has packed before hashes and compares the pattern and copies the packed words for the values (dype::cached_pack, docs/HLS.md), a few ns a nonzero; the first launch on a pattern schedules it (about 130-490 ns a nonzero, issue 17), which the planner, pricing the steady state of repeated calls, does not charge',
    measuredOn: 'none',
  },
};

export const DTYPE_SIZE: Record<Dtype, number> = { f32: 4, f64: 8, i32: 4, i64: 8, bool: 1 };

export const isSparseKind = (k: string): boolean => k === 'spmv' || k === 'spmm' || k === 'sddmm' || k === 'reduce';

/** Peak operations per second of one instance for a dtype. */
export function peak(d: DeviceSpec, dtype: Dtype): number {
  const g =
    dtype === 'f64'
      ? d.peakGflops.f64
      : dtype === 'i64'
        ? d.peakGflops.i64
        : dtype === 'i32' || dtype === 'bool'
          ? d.peakGflops.i32
          : d.peakGflops.f32;
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
  /** Entries whose row is a block of dense columns (SpMM, SDDMM: width > 1): the column loop each entry runs. */
  blockEntries: number;
  /** Rows whose loop exit the branch predictor is expected to miss (rows x rowLenChangeFraction, past its history). */
  branchRows: number;
  /**
   * Gathered elements an entry folds into one sum in order (SDDMM's dot product over k): SpMM's columns are
   * independent sums, these are one chain an entry, which the kernels can only run as lanes over entries.
   */
  dotElements: number;
  /**
   * Elements of the row-side operand an in-order dot op reads once per non-empty row (SDDMM: rows x d of Q[i, :]): the
   * kernels load or broadcast the row's d elements once and reuse them over its entries, so a short row pays
   * them over few entries. Native f32 SDDMM d = 16 on uniform rows of L entries cost 0.71 ns an element at L = 1,
   * 0.27 at 8 and 0.13 at 64 (docs/COST-MODEL.md, *SDDMM's per-row part*): close to a + b / L.
   */
  dotRowElements: number;
}

/** Op kinds whose gathered elements each entry adds into one sum in order (CpuTerms.dotElements). */
export const IN_ORDER_DOT_KINDS: ReadonlySet<string> = new Set(['sddmm']);

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
 *
 * A row's inner loop ends on a branch whose outcome is the row's length:
 * with varying lengths the predictor misses it, unless it has learnt the
 * sequence. Across repeated runs of one pattern it learns the lengths of
 * some thousands of rows (bench/cpu-branch.ts, a C SpMV run 12-20 times in
 * a row: rows of 1-3 entries in random order cost about what rows of 2 do
 * by the fifth run at 8k rows, 1.7-4.9x as much at 32k-256k rows, 5.3-7.8
 * against 1.3-3.6 ns a row; docs/PERFORMANCE.md). What it must learn is the
 * lengths themselves: a row's trips up to the shortest length always go on,
 * and which of the lengths around the mean a row takes is about log2 of
 * their spread in bits, weighed by how often a row's length changes
 * (rowChangeBits), and each core's predictor learns only its own thread's
 * rows. So the rows miss, where their length differs from the row before
 * (rowLenChangeFraction: the loop exit taken at another trip count than
 * last time), in the share of a thread's bits past the history H
 * (pastHistory: none up to H, all from 2H, linearly between). Fits made
 * before that form count H in bits unweighed (`bits`: rowLengthBits), in
 * uncertain trips of a thread's rows (`trips`: uncertainTrips) or in rows
 * of the whole op (`rows`); their files keep that meaning. Without a fitted
 * H the term is 0.
 */
export function cpuTerms(op: PlanOp, cacheMB: number, history?: BranchHistory, threads = 1): CpuTerms {
  const f = op.sparse!;
  const cache = cacheMB * 1e6;
  const dense = f.cols * width(op) * DTYPE_SIZE[op.dtype];
  const locality = f.localityScore ?? MODEL.defaultLocality;
  const beyond = (bytes: number): number => (bytes > cache ? 1 - cache / bytes : 0);
  return {
    nnz: f.nnz,
    gathers: op.gathers,
    rows: f.rows,
    items: op.items,
    missLines:
      op.gathers > 0
        ? f.nnz * (1 - locality) * beyond(dense) * Math.max(1, (width(op) * DTYPE_SIZE[op.dtype]) / MODEL.cpu.lineBytes)
        : 0,
    dramBytes: op.bytes * beyond(op.bytes),
    blockEntries: width(op) > 1 ? f.nnz : 0,
    branchRows:
      history === undefined
        ? 0
        : f.rows * (f.rowLenChangeFraction ?? MODEL.defaultRowLenChange) * missedShare(f, history, threads),
    dotElements: IN_ORDER_DOT_KINDS.has(op.kind) ? op.gathers : 0,
    // An empty row has no entry to reuse the row's elements over, and the kernels read none of them.
    dotRowElements: IN_ORDER_DOT_KINDS.has(op.kind) ? f.rows * (1 - f.emptyRowFraction) * width(op) : 0,
  };
}

/**
 * The branch predictor's fitted history (CpuModelSpec) and the unit it is counted in: bits of row-length information
 * in one thread's rows weighed by their changes (rowChangeBits: what `dype calibrate` fits), or the units of older
 * fits, the same bits unweighed (rowLengthBits), uncertain trips of one thread's rows (uncertainTrips) or rows of the
 * whole op.
 */
export interface BranchHistory {
  unit: 'changeBits' | 'bits' | 'trips' | 'rows';
  size: number;
}

/** A model's branch history, undefined where it has no branch-miss term (the schema allows one form at most). */
export function branchHistoryOf(m: CpuModelSpec): BranchHistory | undefined {
  if (m.branchHistoryChangeBits !== undefined) return { unit: 'changeBits', size: m.branchHistoryChangeBits };
  if (m.branchHistoryBits !== undefined) return { unit: 'bits', size: m.branchHistoryBits };
  if (m.branchHistoryTrips !== undefined) return { unit: 'trips', size: m.branchHistoryTrips };
  return m.branchHistoryRows !== undefined ? { unit: 'rows', size: m.branchHistoryRows } : undefined;
}

/**
 * The information in a pattern's row lengths that the predictor must hold to foresee each row's exit: rows x
 * log2(1 + min(sd, mean)) of the lengths, about log2 of how many lengths the rows spread over, a row. The mean
 * bounds the spread a row adds: a few rows of thousands among rows of six (adder_dcop_05) do not make the short
 * rows' exits harder to learn. Counted in trips (rows x min(sd, mean), uncertainTrips), the history put every
 * power-law pattern's exits past it: ca-GrQc's 5,242 rows of mean 5.5 hold 29,000 trips against the 16,000 fitted,
 * and its SpMV was priced at 2.3-2.7x its measured time, facebook_combined's at 1.4x, while random rows of 4-12
 * entries, whose lengths each carry more bits than a power law's mostly short rows, were priced right. Refitted in
 * bits from the same timings the held-out median error at one thread fell from 12.5-17.2% to 4.5-8.1% and the fit's
 * own error fell in every set (docs/COST-MODEL.md, *The branch history in bits of row lengths*).
 */
export function rowLengthBits(f: SparseFeatures): number {
  return f.rows * Math.log2(1 + Math.min(f.rowLenCv * f.rowLenMean, f.rowLenMean));
}

/**
 * The row-length bits a core's predictor must hold, weighed by sqrt(c), c the share of rows whose length differs
 * from the row before (rowLenChangeFraction). A row of the same length as the last repeats the exit the global
 * history has just shown, so it asks less of the predictor than one that changes, though not nothing: where it
 * changes must be learnt too. Counting only the changing rows (c) priced luxembourg_osm's one-thread SpMV (114,599
 * rows, c = 0.22) as learnt, which its time says it is not; counting every row (rowLengthBits) priced its
 * two-thread SpMV as missed, where it ran 2.2-4.6x faster than on one thread. The square root is the middle the
 * recorded timing sets chose: refitted with it, the pooled held-out error fell at one thread and at two
 * (docs/COST-MODEL.md, *The branch history weighed by row-length changes*).
 */
export function rowChangeBits(f: SparseFeatures): number {
  return rowLengthBits(f) * Math.sqrt(f.rowLenChangeFraction ?? MODEL.defaultRowLenChange);
}

/**
 * The loop trips of a pattern's rows whose outcome differs between rows: rows x min(sd, mean) of the row lengths,
 * the unit of fits made on 2026-12-06 and 07 (`branchHistoryTrips`), kept so that their files keep their meaning.
 */
export function uncertainTrips(f: SparseFeatures): number {
  return f.rows * Math.min(f.rowLenCv * f.rowLenMean, f.rowLenMean);
}

/** What the history's unit counts of an op's pattern, and whether each thread's core holds only its share of it. */
export function historyUnits(f: SparseFeatures, h: BranchHistory): { units: number; perThread: boolean } {
  switch (h.unit) {
    case 'changeBits':
      return { units: rowChangeBits(f), perThread: true };
    case 'bits':
      return { units: rowLengthBits(f), perThread: true };
    case 'trips':
      return { units: uncertainTrips(f), perThread: true };
    case 'rows':
      return { units: f.rows, perThread: false };
    default: {
      const unit: never = h.unit;
      throw new Error(`no branch history counted in ${String(unit)}`);
    }
  }
}

/** Share of an op's rows whose exit the predictor has not learnt, on `threads` threads (each core its own rows). */
export function missedShare(f: SparseFeatures, history: BranchHistory, threads: number): number {
  const { units, perThread } = historyUnits(f, history);
  return pastHistory(perThread ? units / threads : units, history.size);
}

/** Share of a history's units past H: 0 up to H, 1 from 2H, linear between. */
export function pastHistory(units: number, history: number): number {
  return history > 0 ? Math.min(1, Math.max(0, units / history - 1)) : 1;
}

/** Per-thread work of a fitted op, ns. */
export function cpuWorkNs(t: CpuTerms, m: CpuModelSpec): number {
  return (
    t.nnz * m.nsPerNnz +
    t.gathers * m.nsPerGather +
    t.rows * m.nsPerRow +
    t.items * m.nsPerItem +
    t.missLines * m.nsPerMiss +
    t.dramBytes * m.nsPerByte +
    t.blockEntries * (m.nsPerBlockEntry ?? 0) +
    t.branchRows * (m.nsPerBranchMiss ?? 0) +
    t.dotElements * (m.nsPerDotElement ?? 0) +
    t.dotRowElements * (m.nsPerDotRowElement ?? 0)
  );
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
