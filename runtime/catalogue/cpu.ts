/**
 * CPU implementations: the wasm kernels of codegen/wasm, run by
 * runtime/wasm's executor with the op's top loop split across threads by
 * stored entries (nnz-split), by rows (row-split) or on one thread (serial).
 * Sparse-driven ops use the fitted model of `dype calibrate` when the system
 * has one; everything else the roofline (docs/COST-MODEL.md).
 */
import {
  branchHistoryOf,
  cpuModelled,
  cpuTerms,
  cpuThreadShare,
  cpuWorkNs,
  DTYPE_SIZE,
  MODEL,
  peak,
  roofline,
  historyUnits,
} from '../plan/model.js';
import type { PlanOp } from '../plan/types.js';
import type { DeviceSpec } from '../system/types.js';
import type { WasmOp } from '../wasm/manifest.js';
import type { CpuImpl } from './names.js';
import type { ImplEntry } from './types.js';

/**
 * The op's work in ns by the fitted model on `threads` threads, before it is shared among them (each core's
 * predictor learns only its thread's rows): the sparse terms, or a dense op's flops and bytes at the fitted dense
 * rates; undefined where the roofline prices the op.
 */
function fittedWorkNs(op: PlanOp, d: DeviceSpec, threads = 1): number | undefined {
  const m = d.cpuModel;
  if (!m) return undefined;
  if (cpuModelled(op)) return cpuWorkNs(cpuTerms(op, m.cacheMB, branchHistoryOf(m), threads), m);
  if (m.nsPerDenseFlop === undefined || m.nsPerDenseByte === undefined) return undefined;
  const trips =
    m.nsPerDenseTrip !== undefined && m.denseBlockBytes !== undefined
      ? denseTrips(op, m.denseBlockBytes) * m.nsPerDenseTrip
      : 0;
  return op.flops * m.nsPerDenseFlop + op.bytes * m.nsPerDenseByte + trips;
}

/**
 * Trips of the op's innermost loop when its column loop runs in blocks of `blockBytes` (a block of lanes a trip,
 * the narrower blocks of the remainder counted as one): GEMM's per row, column block and k; an elementwise map's per
 * row and block. A GEMM of 16 columns does half the work a trip of one of 32 (f32, 128-byte blocks), which its flops
 * alone price alike (docs/COST-MODEL.md, *Dense ops by loop trips*).
 */
export function denseTrips(op: PlanOp, blockBytes: number): number {
  const lanes = Math.max(1, Math.floor(blockBytes / DTYPE_SIZE[op.dtype]));
  return op.loops * Math.ceil(op.columns / lanes);
}

/**
 * An op whose split loop has fewer rows than this runs on the calling thread alone, whatever count it is given:
 * the executors' rule (runtime/wasm/executor.ts, runtime/exec/wasm-backend.ts, the native library's launch in
 * codegen/cpu/library.ts), since waking a worker costs more than so few rows save.
 */
export const MIN_SPLIT_ROWS = 256;

/** Whether the executors run this op on one thread whatever count it is given: a sparse-driven op of few rows. */
export function runsAlone(op: PlanOp): boolean {
  return op.sparse !== undefined && op.sparse.rows < MIN_SPLIT_ROWS;
}

function cpuMs(op: PlanOp, d: DeviceSpec, asked: number): number {
  const f = op.sparse;
  const threads = runsAlone(op) ? 1 : asked;
  const m = d.cpuModel;
  const work = fittedWorkNs(op, d, threads);
  if (m && work !== undefined) {
    const sparse = cpuModelled(op);
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
 * Where cpuMs, as a function of real t >= 1, is lowest for a fixed work: it is convex there, so the best count is
 * next to it.
 *   Fitted: work x max(1 / (1 + (t - 1) e), c) + (t - 1) x dispatch, c the longest row's share of the entries
 *   (cpuThreadShare); the first term's slope meets the dispatch cost at 1 + (sqrt(work e / dispatch) - 1) / e,
 *   and past 1 + (1/c - 1) / e (the longest row bounds the op) only dispatch grows.
 *   Roofline: one thread's time / t until the longest row bounds the op at t = nnz / rowLenMax, then flat.
 */
function threadsTurn(op: PlanOp, d: DeviceSpec, work: number | undefined): number {
  const f = op.sparse;
  const m = d.cpuModel;
  if (m && work !== undefined) {
    const e = m.parallelEfficiency ?? 1;
    if (!(e > 0) || !(work > 0)) return 1;
    const c = cpuModelled(op) && f && f.nnz > 0 ? Math.min(1, f.rowLenMax / f.nnz) : 0;
    const bound = c > 0 ? 1 + (1 / c - 1) / e : Infinity;
    const dispatch = (m.dispatchUsPerThread ?? 0) * 1e3;
    const slope = dispatch > 0 ? 1 + (Math.sqrt((work * e) / dispatch) - 1) / e : Infinity;
    return Math.min(bound, slope);
  }
  return f && f.nnz > 0 && f.rowLenMax > 0 ? f.nnz / f.rowLenMax : Infinity;
}

/**
 * The real thread counts over which a fitted op's branch term changes, where its model counts the predictor's
 * history in what one thread's rows hold (bits or trips): every row's exit missed up to u / 2 threads, none from u
 * (u the op's units over the history; model.ts missedShare). Undefined where the term is the same on every count.
 */
function branchSpan(op: PlanOp, d: DeviceSpec): [number, number] | undefined {
  const m = d.cpuModel;
  const h = m && branchHistoryOf(m);
  if (!m?.nsPerBranchMiss || !h || !cpuModelled(op) || !(h.size > 0)) return undefined;
  const { units, perThread } = historyUnits(op.sparse!, h);
  if (!perThread) return undefined;
  const u = units / h.size;
  return u > 1 ? [u / 2, u] : undefined;
}

/** Counts whose times differ by less than this share of the lower are a tie (the fewest wins): rounding, not a gain. */
export const THREADS_TIE = 1e-12;

/**
 * The threads a split op runs on: the count in 1..max (the device's threads unless given) that its model prices
 * lowest, the fewest on a tie. With a fitted model a small op stays on one thread, since waking another costs
 * dispatchUsPerThread and buys only parallelEfficiency of a thread; the roofline has no such cost and takes
 * threads until the longest row bounds the op. The executors run each op on this count (cli/run.ts) and the
 * planner prices it, so the two agree. For a fixed work the model is convex in the count (threadsTurn), so the
 * counts around its turning point, 1 and max are priced, not every count: a 64-thread host priced 64 counts per op
 * and implementation, a fifth of the runtime's decision for a new pattern. Where the branch term shrinks as each
 * core holds fewer rows (branchSpan), the work is fixed below and above that span: the turns of both works and
 * every count inside the span are priced.
 */
export function cpuThreadsFor(op: PlanOp, d: DeviceSpec, max = d.threads ?? 1): number {
  if (max <= 1 || runsAlone(op)) return 1;
  const counts: number[] = [];
  const around = (turn: number): void => {
    const near = Number.isFinite(turn) ? Math.floor(turn) : max;
    for (let t = Math.max(2, near - 1); t <= Math.min(max, near + 2); t++) counts.push(t);
  };
  around(threadsTurn(op, d, fittedWorkNs(op, d, 1)));
  // Only where the branch term changes with the count: the common case prices its few counts as they come.
  const span = branchSpan(op, d);
  if (span) {
    around(threadsTurn(op, d, fittedWorkNs(op, d, max)));
    for (let t = Math.max(2, Math.floor(span[0])); t <= Math.min(max, Math.ceil(span[1])); t++) counts.push(t);
    // Ascending, so that a tie goes to the fewest (lowestOf); a count listed twice is priced once.
    counts.sort((a, b) => a - b);
    let kept = 0;
    for (const t of counts) if (kept === 0 || counts[kept - 1] !== t) counts[kept++] = t;
    counts.length = kept;
  }
  if (counts[counts.length - 1] !== max) counts.push(max);
  return lowestOf(op, d, counts);
}

/** cpuThreadsFor by pricing every count in 1..max (the definition it must agree with; tests). */
export function cpuThreadsByEveryCount(op: PlanOp, d: DeviceSpec, max = d.threads ?? 1): number {
  if (runsAlone(op)) return 1;
  return lowestOf(
    op,
    d,
    Array.from({ length: Math.max(0, max - 1) }, (_, i) => i + 2),
  );
}

/** Of 1 and `counts` (ascending, each above 1), the count cpuMs prices lowest, the fewest on a tie (THREADS_TIE). */
function lowestOf(op: PlanOp, d: DeviceSpec, counts: readonly number[]): number {
  let best = 1;
  let bestMs = cpuMs(op, d, 1);
  for (const t of counts) {
    const ms = cpuMs(op, d, t);
    if (ms < bestMs - Math.abs(bestMs) * THREADS_TIE) {
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
