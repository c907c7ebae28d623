/**
 * CPU implementations: the wasm kernels of codegen/wasm, run by
 * runtime/wasm's executor with the op's top loop split across threads by
 * stored entries (nnz-split), by rows (row-split) or on one thread (serial).
 * Sparse-driven ops use the fitted model of `dype calibrate` when the system
 * has one; everything else the roofline (docs/COST-MODEL.md).
 */
import { cpuModelled, cpuTerms, cpuThreadShare, cpuWorkNs, DTYPE_SIZE, MODEL, peak, roofline } from '../plan/model.js';
import type { PlanOp } from '../plan/types.js';
import type { DeviceSpec } from '../system/types.js';
import type { WasmOp } from '../wasm/manifest.js';
import type { CpuImpl } from './names.js';
import type { ImplEntry } from './types.js';

function cpuMs(op: PlanOp, d: DeviceSpec, threads: number): number {
  const f = op.sparse;
  const m = d.cpuModel;
  const sparse = m !== undefined && cpuModelled(op);
  // One thread's work in ns: the sparse terms, or a dense op's flops and bytes at the fitted dense rates.
  const work = !m
    ? undefined
    : sparse
      ? cpuWorkNs(cpuTerms(op, m.cacheMB), m)
      : m.nsPerDenseFlop !== undefined && m.nsPerDenseByte !== undefined
        ? op.flops * m.nsPerDenseFlop + op.bytes * m.nsPerDenseByte
        : undefined;
  if (m && work !== undefined) {
    const share = threads === 1 ? 1 : cpuThreadShare(sparse ? f : undefined, threads, m.parallelEfficiency ?? 1);
    const dispatch = (threads - 1) * (m.dispatchUsPerThread ?? 0) * 1e3;
    return (work * share + dispatch) / 1e6;
  }
  const bw = d.memBandwidthGBs * 1e9 * MODEL.cpu.memory;
  const size = DTYPE_SIZE[op.dtype];
  const locality = op.sparse?.localityScore ?? MODEL.defaultLocality;
  const bytes =
    op.bytes + op.gathers * (size + (1 - locality) * (MODEL.cpu.lineBytes - size) * MODEL.cpu.gatherLineShare);
  // The roofline is the whole device's; one thread of `all` gets its share.
  const all = d.threads ?? 1;
  const t = roofline(op.flops, bytes, (peak(d, op.dtype) * MODEL.cpu.compute * threads) / all, (bw * threads) / all);
  // Rows are split by nnz across threads; a single row longer than a thread's share still bounds it.
  const longest = f && f.nnz > 0 ? Math.max(1, (f.rowLenMax * threads) / f.nnz) : 1;
  return t * Math.min(longest, threads) * 1e3;
}

/**
 * The threads a split op runs on: the count in 1..max (the device's threads unless given) that its model prices
 * lowest, the fewest on a tie. With a fitted model a small op stays on one thread, since waking another costs
 * dispatchUsPerThread and buys only parallelEfficiency of a thread; the roofline has no such cost and takes all.
 * The executors run each op on this count (cli/run.ts) and the planner prices it, so the two agree.
 */
export function cpuThreadsFor(op: PlanOp, d: DeviceSpec, max = d.threads ?? 1): number {
  let best = 1;
  let bestMs = cpuMs(op, d, 1);
  for (let t = 2; t <= max; t++) {
    const ms = cpuMs(op, d, t);
    if (ms < bestMs) {
      best = t;
      bestMs = ms;
    }
  }
  return best;
}

export const CPU_CATALOGUE: Record<CpuImpl, ImplEntry> = {
  'nnz-split': {
    summary: 'rows split across the threads the model picks for the op, balanced by stored entries',
    ms: (op, d, threads) => cpuMs(op, d, threads ?? cpuThreadsFor(op, d)),
  },
  'row-split': {
    summary: 'rows split evenly across the threads the model picks for the op',
    ms: (op, d, threads) => cpuMs(op, d, threads ?? cpuThreadsFor(op, d)),
  },
  serial: { summary: 'one thread (no parallel loop)', ms: (op, d) => cpuMs(op, d, 1) },
};

/** The CPU implementation a wasm kernel's op runs as: how its manifest entry says its loop may be split across threads. */
export function cpuImplOf(o: WasmOp): CpuImpl {
  return !o.splittable ? 'serial' : o.balanceBy ? 'nnz-split' : 'row-split';
}
