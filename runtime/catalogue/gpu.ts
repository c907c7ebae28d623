/**
 * GPU implementations: the CUDA schedules of codegen/cuda/variants.ts.
 *
 * Sparse-driven ops (SpMV, SpMM, SDDMM, sparse reductions) on a GPU with a
 * `gpuModel` (every shipped GPU preset): DRAM bytes over the bandwidth the
 * card sustains, where gathers from a dense operand that fits the L2 cost no
 * DRAM traffic, times what the schedule loses to row-length imbalance:
 * a warp of row-per-thread waits for its longest row, warp-per-row idles
 * lanes on short rows and keeps warps on a few long ones, adaptive-rows
 * fits its lanes to the mean row and waits for the longest of a warp's
 * rows, merge-path pays only its partitioning. The per-call floor is the device's
 * (`callOverheadUs`, index.ts). Everything else, and every op on a GPU
 * without a gpuModel, is the roofline of the op's flops and bytes at fixed
 * efficiencies. Constants and sources: docs/COST-MODEL.md.
 */
import { DTYPE_SIZE, isSparseKind, MODEL, peak, roofline, width } from '../plan/model.js';
import type { Dtype, PlanOp, SparseFeatures } from '../plan/types.js';
import type { DeviceSpec, GpuModelSpec } from '../system/types.js';
import { lockstepImbalance, type RowSpread } from './imbalance.js';
import type { GpuImpl } from './names.js';
import type { ImplEntry } from './types.js';

const bandwidth = (d: DeviceSpec): number => d.memBandwidthGBs * 1e9 * MODEL.gpu.memory;

/** Bytes one gather moves when it misses: the element, plus the rest of a 32-byte sector for the share of scattered columns. */
function gatherBytes(op: PlanOp): number {
  const size = DTYPE_SIZE[op.dtype];
  const locality = op.sparse?.localityScore ?? MODEL.defaultLocality;
  return size + (1 - locality) * (MODEL.gpuSectorBytes - size);
}

/** The op's bytes with every gather charged as a miss (the roofline without a gpuModel). */
const gpuBytes = (op: PlanOp): number => op.bytes + op.gathers * gatherBytes(op);

/**
 * DRAM bytes with an L2 of `l2CacheMB`: the op's compulsory bytes (its
 * operands once, the result once), plus the gathers that miss, in the share
 * max(0, 1 - L2 / R) that uniform reuse over R bytes of the dense operand
 * gives. R is the whole operand, or where the matrix's entries keep within a
 * band of the diagonal (tier 2's bandwidthEstimateNorm: the farthest column
 * from its row over the sampled rows), the rows of it one row's band reaches:
 * the rows the kernel works on at any time move along the diagonal, so what
 * they gather stays in the L2 while their band does. On the H200 a 2M-row
 * 7-point stencil's SpMM (a 1 GB dense operand at 128 columns, a 17 MB band)
 * runs in a tenth of the time uniform reuse prices (docs/PERFORMANCE.md).
 */
function dramBytes(op: PlanOp, m: GpuModelSpec): number {
  const f = op.sparse!;
  const row = width(op) * DTYPE_SIZE[op.dtype];
  const dense = f.cols * row;
  const band = f.bandwidthEstimateNorm;
  const reach = band === undefined ? dense : Math.min(dense, (2 * band * Math.max(f.rows, f.cols) + 1) * row);
  const l2 = m.l2CacheMB * 1e6;
  const miss = reach > l2 ? 1 - l2 / reach : 0;
  return op.bytes + op.gathers * miss * gatherBytes(op);
}

/**
 * DRAM bytes of a schedule whose lanes gather from rows of the dense operand
 * apart from each other's (row-per-thread over a dense width: each lane walks
 * its own row's entries, a column at a time): every gathered element is a
 * sector of its own, L2 hit or not, so the gathers cost their sectors at the
 * sustained bandwidth. Uniform reuse (dramBytes) priced the stencil's
 * row-per-thread SpMM at 32 and 128 columns 2.2-3.3x under the H200's time;
 * sectors price it 1.3-2.2x under.
 */
const sectorBytes = (op: PlanOp): number => op.bytes + op.gathers * MODEL.gpuSectorBytes;

const sparse = (op: PlanOp): boolean => isSparseKind(op.kind) && op.sparse !== undefined;

/** Whether the gpuModel times this op (else the roofline): a sparse-driven op on a GPU that has one. */
export function gpuModelled(op: PlanOp, d: DeviceSpec): boolean {
  return d.gpuModel !== undefined && sparse(op);
}

/**
 * Seconds of a sparse-driven op before its schedule's imbalance: compute at the sparse efficiency, or DRAM bytes at
 * the sustained bandwidth (`apart`: lanes gathering from rows apart, sectorBytes).
 */
function work(op: PlanOp, d: DeviceSpec, apart = false): number {
  if (gpuModelled(op, d)) {
    const m = d.gpuModel!;
    return roofline(
      op.flops,
      apart ? sectorBytes(op) : dramBytes(op, m),
      peak(d, op.dtype) * MODEL.gpu.sparseCompute,
      m.effectiveBandwidthGBs * 1e9,
    );
  }
  return roofline(op.flops, gpuBytes(op), peak(d, op.dtype) * MODEL.gpu.sparseCompute, bandwidth(d));
}

/**
 * Fixed shapes of the CUDA schedules, which codegen/cuda prints and the model counts: the threads of the block
 * that takes one long row (adaptive-rows), and merge-path's diagonals per thread (SpMV form, MERGE_TILE / 256
 * threads) and per warp (SpMM form).
 */
export const GPU_SCHEDULE = { blockLanes: 256, mergeItems: 8, mergeWarpItems: 64 } as const;

const warpsPerBlock = GPU_SCHEDULE.blockLanes / MODEL.warp;

/**
 * Diagonals of the merge path (rows + entries) one block of merge-path takes: mergeItems a thread in the SpMV form,
 * mergeWarpItems a warp in the SpMM form (codegen/cuda/merge.ts prints its tiles with these).
 */
export const MERGE_TILES = {
  entries: GPU_SCHEDULE.blockLanes * GPU_SCHEDULE.mergeItems,
  dense: warpsPerBlock * GPU_SCHEDULE.mergeWarpItems,
} as const;

/** What the shapes of the CUDA schedules read of an op: its dense width k, whether it folds entries, the vector. */
function shapeOf(op: PlanOp): {
  k: number;
  entries: boolean;
  v: number;
  passes: (lanes: number, vector: number) => number;
} {
  const k = Math.max(1, Math.round(width(op)));
  return {
    k,
    entries: op.kind === 'spmv' || op.kind === 'reduce',
    v: denseVector(k, op.dtype),
    passes: (lanes, vector) => Math.ceil(k / (lanes * vector)),
  };
}

/**
 * Steps of the longest walk one lane of a schedule makes: each step a load (an entry, or an entry's columns
 * a lane owns) the lane's next step follows, so however few bytes an op moves, its schedule takes at least
 * these steps x gpuModel.laneStepNs. This is what the bandwidth term cannot see: one thread walking a
 * 644k-entry hub row (row-per-thread), or every entry of its row once per column of an SpMM (row-per-thread
 * has no lanes over the columns). The shapes are the
 * stubs' (codegen/cuda: warp.ts, adaptive.ts, merge.ts): a lane over the columns owns a vector of
 * denseVector columns (warp-per-row only past 32 columns).
 */
export function laneSteps(impl: GpuImpl, op: PlanOp): number {
  const f = op.sparse;
  if (!f || !isSparseKind(op.kind)) return 0;
  const { k, entries, v, passes } = shapeOf(op);
  const max = Math.max(0, f.rowLenMax);
  switch (impl) {
    case 'row-per-thread':
      return max * k;
    case 'warp-per-row':
      return entries ? Math.ceil(max / MODEL.warp) : max * passes(MODEL.warp, k > MODEL.warp ? v : 1);
    case 'adaptive-rows': {
      if (entries) {
        // Rows up to longRowSteps x w on a group of w lanes; longer ones on a block each.
        const w = adaptiveLanes(f);
        const kept = Math.min(max, ADAPTIVE_LANES.longRowSteps * w);
        return Math.max(Math.ceil(kept / w), Math.ceil(max / GPU_SCHEDULE.blockLanes));
      }
      const w = adaptiveDenseLanes(k, v);
      const kept = Math.min(max, ADAPTIVE_LANES.denseLongEntries);
      // A long row's block: its warps take every warpsPerBlock-th entry, lanes over the columns.
      return Math.max(kept * passes(w, v), Math.ceil(max / warpsPerBlock) * passes(MODEL.warp, v));
    }
    case 'merge-path':
      // The tile pass (diagonals per thread, or per warp over the columns), then the row pass that folds a row's
      // partial and carries (in the SpMM form one column of it a thread).
      return entries ? GPU_SCHEDULE.mergeItems + 1 : GPU_SCHEDULE.mergeWarpItems * passes(MODEL.warp, v) + 1;
    case 'tiled':
    case 'elementwise':
    case 'block-reduce':
    case 'serial':
      return 0;
    default: {
      const never: never = impl;
      throw new Error(`no lane steps for GPU implementation ${String(never)}`);
    }
  }
}

/**
 * The warps a schedule runs for an op and the dependent steps a warp's rows take (row-per-thread: 32 rows a
 * warp, a lane walking its row's entries, once per column of an SpMM; warp-per-row: a row a warp; adaptive-rows:
 * 32 / w rows a warp on groups of w lanes; merge-path: blocks of GPU_SCHEDULE.blockLanes threads over tiles of
 * its diagonals, a thread's or a warp's items walked). Rows are taken at their mean length: the longest is
 * laneSteps'.
 */
export function warpRows(impl: GpuImpl, op: PlanOp): { warps: number; steps: number } {
  const f = op.sparse;
  if (!f || !isSparseKind(op.kind) || f.rows === 0) return { warps: 0, steps: 0 };
  const { k, entries, v, passes } = shapeOf(op);
  const mean = Math.max(1, Math.ceil(f.nnz / f.rows));
  switch (impl) {
    case 'row-per-thread':
      return { warps: Math.ceil(f.rows / MODEL.warp), steps: entries ? mean : mean * k };
    case 'warp-per-row':
      return {
        warps: f.rows,
        steps: entries ? Math.ceil(mean / MODEL.warp) : mean * passes(MODEL.warp, k > MODEL.warp ? v : 1),
      };
    case 'adaptive-rows': {
      if (entries) {
        const w = adaptiveLanes(f);
        return { warps: Math.ceil(f.rows / (MODEL.warp / w)), steps: Math.ceil(mean / w) };
      }
      const w = adaptiveDenseLanes(k, v);
      return { warps: Math.ceil(f.rows / (MODEL.warp / w)), steps: mean * passes(w, v) };
    }
    case 'merge-path': {
      const blocks = Math.ceil((f.rows + f.nnz) / (entries ? MERGE_TILES.entries : MERGE_TILES.dense));
      return {
        warps: blocks * warpsPerBlock,
        steps: entries ? GPU_SCHEDULE.mergeItems : GPU_SCHEDULE.mergeWarpItems * passes(MODEL.warp, v),
      };
    }
    case 'tiled':
    case 'elementwise':
    case 'block-reduce':
    case 'serial':
      return { warps: 0, steps: 0 };
    default: {
      const never: never = impl;
      throw new Error(`no warp rows for GPU implementation ${String(never)}`);
    }
  }
}

/**
 * The steps of merge-path's global search: a block's thread finds both ends of its tile, each a binary search
 * over the rows, one dependent load a step (codegen/cuda/merge.ts mergeTileHead).
 */
export function mergeSearchSteps(op: PlanOp): number {
  const rows = op.sparse?.rows ?? 0;
  return rows > 0 ? 2 * Math.ceil(Math.log2(rows + 1)) : 0;
}

/**
 * What the warps take where more warps run than the GPU holds at once: rounds of residentWarps warps, each round
 * a row's dependent chain (its pointers, then its entries, then the gathers they index, the store: rowChainNs;
 * merge-path: its block's global search, searchStepNs a step) and its steps (laneStepNs each). A 2M-row
 * stencil's warp-per-row SpMV, 7 entries a warp, waits on that chain 249 times on an H200 while its bytes would
 * take half the time; merge-path's searches make it 0.14 ms there where its bytes give 0.05 (docs/PERFORMANCE.md).
 * One round at the least: a small op's warps still wait on one chain.
 */
export function roundsMs(impl: GpuImpl, op: PlanOp, m: GpuModelSpec): number {
  const { warps, steps } = warpRows(impl, op);
  if (warps === 0) return 0;
  const chain = impl === 'merge-path' ? mergeSearchSteps(op) * m.searchStepNs : m.rowChainNs;
  return (Math.ceil(warps / m.residentWarps) * (chain + steps * m.laneStepNs)) / 1e6;
}

/**
 * A sparse schedule's time, ms: its bytes and imbalance (`ms`), or its longest lane walk, or its rounds of
 * resident warps, whichever is longest (merge-path: the longer of the first two, and its rounds of searches).
 */
const walked =
  (impl: GpuImpl, f: (op: PlanOp, d: DeviceSpec) => number) =>
  (op: PlanOp, d: DeviceSpec): number => {
    const ms = f(op, d);
    if (!gpuModelled(op, d)) return ms;
    const m = d.gpuModel!;
    const walk = (laneSteps(impl, op) * m.laneStepNs) / 1e6;
    // merge-path's blocks all search before they stream: its rounds add to its bytes. The others' rounds are the
    // chains that move their bytes: whichever is longer.
    if (impl === 'merge-path') return Math.max(ms, walk) + roundsMs(impl, op, m);
    return Math.max(ms, walk, roundsMs(impl, op, m));
  };

function rowPerThread(op: PlanOp, d: DeviceSpec): number {
  // Over a dense width each lane gathers its own rows' columns, a column at a time.
  const b = work(op, d, width(op) > 1);
  if (!sparse(op)) return b * 1e3;
  // A warp waits for the longest of its 32 rows.
  return b * lockstepImbalance(op.sparse!, MODEL.warp) * 1e3;
}

function warpPerRow(op: PlanOp, d: DeviceSpec): number {
  const b = work(op, d);
  if (!sparse(op)) return b * 1e3;
  const f = op.sparse!;
  // Lanes cover the row's entries (SpMV) or the dense width (SpMM); short rows idle lanes. Past 32 columns the
  // stub's vector copy (denseVector) moves the same bytes in fewer loads: not priced, the model counts bytes.
  const lanesBusy =
    op.kind === 'spmv' || op.kind === 'reduce'
      ? Math.min(1, Math.max(f.rowLenMean, 1e-9) / MODEL.warp)
      : Math.min(1, width(op) / MODEL.warp);
  const tail = 1 + MODEL.gpu.warpPerRowTail * f.top1PctNnzShare * Math.min(f.rowLenCv, MODEL.gpu.warpPerRowCvCap);
  return (b / Math.max(lanesBusy, 1 / MODEL.warp)) * tail * 1e3;
}

/**
 * Lanes per row of adaptive-rows, a power of two: the CUDA stub picks them by this rule
 * (codegen/cuda/variants.ts); a row longer than `longRowSteps` x the lanes runs on a block of its own, and in
 * the SpMM form (lanes over the columns, a step per entry) a row of more than `denseLongEntries` entries: the
 * longest row a group of 32 lanes keeps in the entries form.
 */
export const ADAPTIVE_LANES = { min: 2, max: 32, longRowSteps: 32, denseLongEntries: 1024 } as const;

/** The smallest power of two at least the mean row length (rounded up), within ADAPTIVE_LANES. */
export function adaptiveLanes(f: SparseFeatures): number {
  const mean = f.rows > 0 ? Math.ceil(f.nnz / f.rows) : 0;
  let w: number = ADAPTIVE_LANES.min;
  while (w < ADAPTIVE_LANES.max && w < mean) w *= 2;
  return w;
}

/**
 * Columns a lane of an SpMM-shaped CUDA schedule owns as one 16-byte vector
 * (float4, double2: one 128-bit load of the dense operand per entry, the
 * row's entries walked once for 4 or 2 columns), by element type; 1 where
 * CUDA has no such vector of it.
 */
export const DENSE_VECTOR: Readonly<Record<Dtype, number>> = { f32: 4, f64: 2, i32: 1, i64: 1, bool: 1 };

/**
 * The vector width the CUDA stubs use for a dense width k: DENSE_VECTOR where
 * it divides k (rows of the dense operands then start on 16-byte
 * boundaries), else 1. The stub also needs its vector buffers 16-byte aligned
 * (cudaMalloc's are), which only the launch can check.
 */
export function denseVector(k: number, dtype: Dtype): number {
  const v = DENSE_VECTOR[dtype];
  return k % v === 0 ? v : 1;
}

/**
 * adaptive-rows over an SpMM's columns: the smallest power of two at least
 * the lanes the dense width needs (k / vector columns a lane), up to ADAPTIVE_LANES.max.
 */
export function adaptiveDenseLanes(k: number, vector = 1): number {
  let w = 1;
  while (w < ADAPTIVE_LANES.max && w * vector < k) w *= 2;
  return w;
}

/**
 * The row statistics lockstepImbalance reads, the longest row taken as at most `max` (longer rows run on blocks
 * of their own). Only those three, read field by field: a sampled record's statistics are getters, which a spread
 * would miss, and spreading a class instance takes V8's slow path on every new pattern the runtime prices.
 */
function longestCapped(f: SparseFeatures, max: number): RowSpread {
  return { rowLenMean: f.rowLenMean, rowLenCv: f.rowLenCv, rowLenMax: Math.min(f.rowLenMax, max) };
}

function adaptiveRows(op: PlanOp, d: DeviceSpec): number {
  const b = work(op, d);
  if (!sparse(op)) return b * 1e3;
  const f = op.sparse!;
  if (op.kind !== 'spmv' && op.kind !== 'reduce') {
    // Lanes over the dense width, 32 / w rows a warp in lockstep (each lane walks its row's entries).
    const k = Math.max(1, width(op));
    const v = denseVector(k, op.dtype);
    const w = adaptiveDenseLanes(k, v);
    const busy = k / (w * v * Math.ceil(k / (w * v)));
    // Rows of more than denseLongEntries entries run on blocks of their own, beside.
    const kept = longestCapped(f, ADAPTIVE_LANES.denseLongEntries);
    return (b / Math.max(busy, 1 / MODEL.warp)) * lockstepImbalance(kept, MODEL.warp / w) * 1e3;
  }
  const w = adaptiveLanes(f);
  // A row takes ceil(len / w) steps of w lanes (lanes idle on its last step); a warp's 32 / w rows run in lockstep,
  // up to the longest a group keeps (longer rows run on blocks of their own, beside).
  const steps = Math.max(1, Math.ceil(Math.max(f.rowLenMean, 1e-9) / w));
  const lanesBusy = Math.min(1, Math.max(f.rowLenMean, 1e-9) / (steps * w));
  const kept = longestCapped(f, ADAPTIVE_LANES.longRowSteps * w);
  return (b / Math.max(lanesBusy, 1 / MODEL.warp)) * lockstepImbalance(kept, MODEL.warp / w) * 1e3;
}

function mergePath(op: PlanOp, d: DeviceSpec): number {
  const b = work(op, d);
  const rows = op.sparse?.rows ?? 0;
  // The path search reads the row pointers again: 8 bytes a row.
  const bw = gpuModelled(op, d) ? d.gpuModel!.effectiveBandwidthGBs * 1e9 : bandwidth(d);
  // The SpMM form's tile pass writes a partial per row and column and its row pass reads it back (codegen/cuda/
  // merge.ts: a thread per output element, a row's columns on neighbouring threads): two values an element.
  const rowPass = gpuModelled(op, d) && op.kind === 'spmm' ? rows * width(op) * 2 * DTYPE_SIZE[op.dtype] : 0;
  return (b * MODEL.mergePathOverhead + (rows * MODEL.mergePathRowBytes + rowPass) / bw) * 1e3;
}

/**
 * The most kernel launches and memsets a schedule's CUDA stub queues on its stream after its
 * first launch, each priced at gpuModel.queuedLaunchUs (else the device's launchOverheadUs; the
 * per-call floor pays the first):
 * adaptive-rows clears the long-row count and launches the long-row pass beside the grouped
 * rows, where a row can be long (`queuedAfterFirst`); merge-path launches the row pass that folds
 * each tile's carry (codegen/cuda/adaptive.ts, merge.ts; test/catalogue/queued-launches.test.ts
 * counts them in the generated stubs). On the H200 these made adaptive-rows and merge-path 5-8 us
 * slower than warp-per-row on matrices of 10^4 entries, where every schedule is its launches
 * (docs/PERFORMANCE.md; adaptive-rows then queued its pass on every call).
 */
export const QUEUED_AFTER_FIRST: Readonly<Record<GpuImpl, number>> = {
  'adaptive-rows': 2,
  'merge-path': 1,
  'row-per-thread': 0,
  'warp-per-row': 0,
  tiled: 0,
  elementwise: 0,
  'block-reduce': 0,
  serial: 0,
};

/**
 * What a schedule's stub queues after its first launch on this op. adaptive-rows queues its long-row pass
 * (a memset and a launch) only where the longest row can exceed what a group keeps: the stub reads the
 * exact longest row from its caller (the ABI's pattern figures), the model the feature record's.
 */
export function queuedAfterFirst(impl: GpuImpl, op: PlanOp): number {
  const most = QUEUED_AFTER_FIRST[impl];
  const f = op.sparse;
  if (impl !== 'adaptive-rows' || !f || !isSparseKind(op.kind)) return most;
  const entries = op.kind === 'spmv' || op.kind === 'reduce';
  const keeps = entries ? ADAPTIVE_LANES.longRowSteps * adaptiveLanes(f) : ADAPTIVE_LANES.denseLongEntries;
  return f.rowLenMax > keeps ? most : 0;
}

/** An implementation's time with the launches its stub queues after the first (sparse-driven ops). */
const queued =
  (impl: GpuImpl, f: (op: PlanOp, d: DeviceSpec) => number) =>
  (op: PlanOp, d: DeviceSpec): number =>
    f(op, d) +
    (sparse(op)
      ? (queuedAfterFirst(impl, op) * (gpuModelled(op, d) ? d.gpuModel!.queuedLaunchUs : d.launchOverheadUs)) / 1e3
      : 0);

/** The data-independent roofline at a class efficiency (dense ops). */
const dense = (op: PlanOp, d: DeviceSpec, efficiency: number): number =>
  roofline(op.flops, gpuBytes(op), peak(d, op.dtype) * efficiency, bandwidth(d));

export const GPU_CATALOGUE: Record<GpuImpl, ImplEntry> = {
  'adaptive-rows': {
    summary:
      'rows on groups of 2-32 lanes (by the mean row length) that split the row reduction, several rows per warp',
    ms: queued('adaptive-rows', walked('adaptive-rows', adaptiveRows)),
  },
  'row-per-thread': { summary: 'one thread per row of the parallel loop', ms: walked('row-per-thread', rowPerThread) },
  'warp-per-row': {
    summary: 'a warp per row; lanes split the row reduction or the dense width',
    ms: walked('warp-per-row', warpPerRow),
  },
  'merge-path': {
    summary: 'nnz-balanced merge-path segments with a carry fix-up',
    ms: queued('merge-path', walked('merge-path', mergePath)),
  },
  tiled: {
    summary: '16 x 16 output tiles staged in shared memory (dense contractions)',
    ms: (op, d) => dense(op, d, MODEL.gpu.gemmCompute) * 1e3,
  },
  elementwise: {
    summary: 'one thread per element of a dense nest',
    ms: (op, d) => dense(op, d, MODEL.gpu.sparseCompute) * 1e3,
  },
  'block-reduce': {
    summary: 'one block folds a reduction to a scalar',
    ms: (op, d) =>
      roofline(
        op.flops,
        op.bytes,
        peak(d, op.dtype) * MODEL.gpu.sparseCompute * MODEL.gpu.oneBlockShare,
        bandwidth(d) * MODEL.gpu.oneBlockShare,
      ) * 1e3,
  },
  serial: {
    summary: 'one thread runs the whole nest',
    ms: (op) => (Math.max(op.flops, op.items, 1) / MODEL.gpu.serialOpsPerS) * 1e3,
  },
};
