/**
 * GPU implementations: the CUDA schedules of codegen/cuda/variants.ts. Each
 * is costed as a roofline of the op's flops and bytes (gathers that cannot
 * coalesce move a 32-byte sector each) with the efficiency its class
 * sustains, times what its schedule loses to the data: a warp of
 * row-per-thread waits for its longest row, warp-per-row idles lanes on short
 * rows, merge-path pays its partitioning. Constants and sources:
 * docs/COST-MODEL.md.
 */
import { DTYPE_SIZE, isSparseKind, MODEL, peak, roofline, width } from '../plan/model.js';
import type { PlanOp } from '../plan/types.js';
import type { DeviceSpec } from '../system/types.js';
import type { GpuImpl } from './names.js';
import type { ImplEntry } from './types.js';

const bandwidth = (d: DeviceSpec): number => d.memBandwidthGBs * 1e9 * MODEL.gpu.memory;

/** The op's bytes with uncoalesced gathers charged a sector each (part of them, by column locality). */
function gpuBytes(op: PlanOp): number {
  const size = DTYPE_SIZE[op.dtype];
  const locality = op.sparse?.localityScore ?? 0.5;
  return op.bytes + op.gathers * (size + (1 - locality) * (MODEL.gpuSectorBytes - size));
}

/** The data-independent part: seconds at the sparse/dense class efficiency. */
function base(op: PlanOp, d: DeviceSpec, efficiency: number): number {
  return roofline(op.flops, gpuBytes(op), peak(d, op.dtype) * efficiency, bandwidth(d));
}

const sparse = (op: PlanOp): boolean => isSparseKind(op.kind) && op.sparse !== undefined;

function rowPerThread(op: PlanOp, d: DeviceSpec): number {
  const b = base(op, d, MODEL.gpu.sparseCompute);
  if (!sparse(op)) return b * 1e3;
  const f = op.sparse!;
  // A warp waits for its longest row.
  const skew = Math.min(1 + f.rowLenCv * MODEL.rowPerThreadSkew, f.rowLenMean > 0 ? Math.max(1, f.rowLenMax / f.rowLenMean) : 1);
  return b * skew * 1e3;
}

function warpPerRow(op: PlanOp, d: DeviceSpec): number {
  const b = base(op, d, MODEL.gpu.sparseCompute);
  if (!sparse(op)) return b * 1e3;
  const f = op.sparse!;
  // Lanes cover the row's entries (SpMV) or the dense width (SpMM); short rows idle lanes.
  const lanesBusy = op.kind === 'spmv' || op.kind === 'reduce' ? Math.min(1, Math.max(f.rowLenMean, 1e-9) / MODEL.warp) : Math.min(1, width(op) / MODEL.warp);
  const warpSkew = 1 + 0.25 * f.top1PctNnzShare * Math.min(f.rowLenCv, 4);
  return (b / Math.max(lanesBusy, 1 / MODEL.warp)) * warpSkew * 1e3;
}

function mergePath(op: PlanOp, d: DeviceSpec): number {
  const b = base(op, d, MODEL.gpu.sparseCompute);
  const rows = op.sparse?.rows ?? 0;
  return (b * MODEL.mergePathOverhead + (rows * 8) / bandwidth(d)) * 1e3;
}

export const GPU_CATALOGUE: Record<GpuImpl, ImplEntry> = {
  'row-per-thread': { summary: 'one thread per row of the parallel loop', ms: rowPerThread },
  'warp-per-row': { summary: 'a warp per row; lanes split the row reduction or the dense width', ms: warpPerRow },
  'merge-path': { summary: 'nnz-balanced merge-path segments with a carry fix-up', ms: mergePath },
  tiled: { summary: '16 x 16 output tiles staged in shared memory (dense contractions)', ms: (op, d) => base(op, d, MODEL.gpu.gemmCompute) * 1e3 },
  elementwise: { summary: 'one thread per element of a dense nest', ms: (op, d) => base(op, d, MODEL.gpu.sparseCompute) * 1e3 },
  'block-reduce': {
    summary: 'one block folds a reduction to a scalar',
    ms: (op, d) => roofline(op.flops, op.bytes, peak(d, op.dtype) * MODEL.gpu.sparseCompute * MODEL.gpu.oneBlockShare, bandwidth(d) * MODEL.gpu.oneBlockShare) * 1e3,
  },
  serial: { summary: 'one thread runs the whole nest', ms: (op) => (Math.max(op.flops, op.items, 1) / MODEL.gpu.serialOpsPerS) * 1e3 },
};
