/**
 * Fitting the CPU cost model to measured kernel times (`dype calibrate`).
 *
 * The model is the planner's own (cost.ts: cpuTerms, cpuWorkNs,
 * cpuThreadShare). At one thread a kernel's time is linear in its
 * coefficients once the cache size is fixed:
 *   ms = sum over ops and trips of (overhead + terms . coefficients)
 * so for each cache size of a fixed grid the coefficients are solved by
 * non-negative least squares on relative errors (each sample's row divided
 * by its measured time; Lawson-Hanson, reweighted so that a few runs
 * disturbed by other load do not drag the fit), and the cache size with the
 * least error is kept. Runs at more threads then fix the parallel efficiency e
 * (speedup 1 + (T - 1) e) and the per-thread dispatch cost: dispatch is
 * linear given e, and e is found by a grid of 101 values refined by golden
 * section, the runs reweighted by the same Huber rule. Everything is
 * deterministic: the same samples give the same figures, bit for bit.
 */
import { runsAlone } from '../catalogue/cpu.js';
import type { CpuModelSpec, DeviceSpec } from '../system/types.js';
import { bestOpTime, cpuModelled, cpuTerms, type CpuTerms } from './cost.js';
import type { PlanOp } from './types.js';

/** The fitted figures: the device's launch overhead and its sparse-kernel model. */
export interface CpuParams {
  overheadUs: number;
  model: CpuModelSpec;
}

export interface CalibrationSample {
  /** The bound ops of one kernel on one matrix (bindProblem's output). */
  ops: readonly PlanOp[];
  measuredMs: number;
  /** Threads the run used (1 for the runs that fix the per-thread terms). */
  threads: number;
}

/** The linear coefficients, in the order of the design matrix's columns. */
export const LINEAR_KEYS = [
  'overheadUs',
  'nsPerNnz',
  'nsPerGather',
  'nsPerRow',
  'nsPerItem',
  'nsPerMiss',
  'nsPerByte',
  'nsPerBranchMiss',
  'nsPerBlockEntry',
  'nsPerDotElement',
  'nsPerDotRowElement',
] as const;
export type LinearKey = (typeof LINEAR_KEYS)[number];
const TERM_OF: Record<Exclude<LinearKey, 'overheadUs'>, keyof CpuTerms> = {
  nsPerNnz: 'nnz',
  nsPerGather: 'gathers',
  nsPerRow: 'rows',
  nsPerItem: 'items',
  nsPerMiss: 'missLines',
  nsPerByte: 'dramBytes',
  nsPerBranchMiss: 'branchRows',
  nsPerBlockEntry: 'blockEntries',
  nsPerDotElement: 'dotElements',
  nsPerDotRowElement: 'dotRowElements',
};

/** Cache sizes tried, MB: 2^(k/2) from 0.125 to 256. */
export const CACHE_GRID_MB: readonly number[] = Array.from({ length: 23 }, (_, k) => 2 ** ((k - 6) / 2));
/**
 * Branch-predictor histories tried, bits of row lengths in a thread's rows weighed by their changes (model.ts rowChangeBits): 2^(k/2) x 1000
 * from 1k to 2M (the ladder's 256k rows of 16-48 entries hold 0.9M).
 */
export const HISTORY_GRID_BITS: readonly number[] = Array.from({ length: 23 }, (_, k) =>
  Math.round(1000 * 2 ** (k / 2)),
);

/** Huber's constant (in robust standard deviations) and the reweighting rounds. */
const HUBER_K = 1.345;
const ROBUST_ROUNDS = 8;

const BASE: DeviceSpec = {
  id: 'cpu',
  kind: 'cpu',
  name: 'cpu',
  count: 1,
  peakGflops: { f32: 100, f64: 50, i32: 50, i64: 25 },
  memBandwidthGBs: 10,
  launchOverheadUs: 0,
  idlePowerW: 0,
  waitingPowerW: 0,
  activePowerW: 1,
  memoryGB: 1,
};

/** A CPU device (the base's other figures, or neutral ones) with exactly these fitted figures. */
export function cpuDeviceFor(p: CpuParams, threads: number, base: DeviceSpec = BASE): DeviceSpec {
  return { ...base, launchOverheadUs: p.overheadUs, threads, cpuModel: { ...p.model } };
}

/** The model's time of one kernel run (every op, once each trip, on one CPU instance). */
/**
 * The kernel's time on `d`: each op on the threads the model picks (as dype run runs it), or with `allThreads`
 * every op on all of d.threads (as a calibration run measures it, so that the fit sees what was timed).
 */
export function predictMs(ops: readonly PlanOp[], d: DeviceSpec, allThreads = false): number {
  let ms = 0;
  for (const op of ops) ms += bestOpTime(op, d, 1, allThreads ? (d.threads ?? 1) : undefined).ms;
  return ms;
}

export function relativeError(predicted: number, measured: number): number {
  return (predicted - measured) / measured;
}

export interface FitOptions {
  /** Figures for the ops the fitted model does not cover (dense ops keep the roofline). */
  base?: DeviceSpec;
  /** Cache sizes to try (default CACHE_GRID_MB). */
  cacheGridMB?: readonly number[];
  /** Branch-predictor histories to try, bits (default HISTORY_GRID_BITS). */
  historyGridBits?: readonly number[];
}

export interface FitResult {
  params: CpuParams;
  /** Root mean square relative error over the one-thread samples. */
  rmsRelError: number;
  /** Root mean square relative error over the multi-thread samples (NaN without any). */
  rmsRelErrorThreads: number;
  /**
   * Whether the samples determine each figure: false for a coefficient whose
   * column is a combination of the others (or empty: no sample has that
   * term), for the cache size when every size of the grid fits equally
   * well, and for the thread figures when no run used more than one thread.
   */
  determined: Record<
    LinearKey | 'cacheMB' | 'branchHistoryChangeBits' | 'parallelEfficiency' | 'dispatchUsPerThread',
    boolean
  >;
}

/** One design row: coefficient multipliers (ms per unit) and the time of the ops the model does not cover. */
function designRow(
  ops: readonly PlanOp[],
  cacheMB: number,
  historyBits: number,
  base: DeviceSpec,
): { a: number[]; fixedMs: number } {
  const a = new Array<number>(LINEAR_KEYS.length).fill(0);
  let fixedMs = 0;
  const plain = { ...base, launchOverheadUs: 0, threads: 1, cpuModel: undefined };
  for (const op of ops) {
    a[0]! += op.trips * 1e-3;
    if (!cpuModelled(op)) {
      fixedMs += bestOpTime(op, plain, 1).ms;
      continue;
    }
    const t = cpuTerms(op, cacheMB, { unit: 'changeBits', size: historyBits });
    LINEAR_KEYS.forEach((k, i) => {
      if (k !== 'overheadUs') a[i]! += op.trips * t[TERM_OF[k]] * 1e-6;
    });
  }
  return { a, fixedMs };
}

/**
 * Least squares min |A x - b| over the columns in `cols` (others 0), by
 * Householder QR; columns are scaled to unit norm first so the terms'
 * different magnitudes do not matter. A column with no part outside the
 * span of the ones before it gets 0.
 */
function leastSquares(A: readonly number[][], b: readonly number[], cols: readonly number[]): number[] {
  const m = A.length;
  const n = cols.length;
  // Column-major in one typed array: the fit solves this some 10^5 times (every NNLS step of every grid point),
  // and rows of boxed numbers made it most of calibrate's fitting time. The arithmetic and its order are the
  // plain version's, so the figures are the same bits.
  const R = new Float64Array(m * n);
  const scale = new Float64Array(n);
  for (let c = 0; c < n; c++) {
    const j = cols[c]!;
    let sq = 0;
    for (let i = 0; i < m; i++) sq += A[i]![j]! ** 2;
    scale[c] = Math.sqrt(sq) || 1;
    for (let i = 0; i < m; i++) R[c * m + i] = A[i]![j]! / scale[c]!;
  }
  const y = Float64Array.from(b);
  const v = new Float64Array(m);
  const pivotOk: boolean[] = [];
  for (let c = 0; c < n; c++) {
    const rc = c * m;
    let norm = 0;
    for (let i = c; i < m; i++) norm += R[rc + i]! ** 2;
    norm = Math.sqrt(norm);
    pivotOk.push(norm > 1e-10);
    if (!pivotOk[c]) continue;
    const alpha = R[rc + c]! > 0 ? -norm : norm;
    for (let i = c; i < m; i++) v[i] = R[rc + i]!;
    v[c]! -= alpha;
    let vv = 0;
    for (let i = c; i < m; i++) vv += v[i]! * v[i]!;
    if (vv === 0) continue;
    for (let k = c; k < n; k++) {
      const rk = k * m;
      let d = 0;
      for (let i = c; i < m; i++) d += v[i]! * R[rk + i]!;
      const f = (2 * d) / vv;
      for (let i = c; i < m; i++) R[rk + i]! -= f * v[i]!;
    }
    let d = 0;
    for (let i = c; i < m; i++) d += v[i]! * y[i]!;
    const f = (2 * d) / vv;
    for (let i = c; i < m; i++) y[i]! -= f * v[i]!;
  }
  const x = new Array<number>(n).fill(0);
  for (let c = n - 1; c >= 0; c--) {
    if (!pivotOk[c] || c >= m) continue;
    let s = y[c]!;
    for (let k = c + 1; k < n; k++) s -= R[k * m + c]! * x[k]!;
    x[c] = s / R[c * m + c]!;
  }
  const out = new Array<number>(A[0]?.length ?? 0).fill(0);
  cols.forEach((j, c) => (out[j] = x[c]! / scale[c]!));
  return out;
}

/** Non-negative least squares min |A x - b|, x >= 0 (Lawson and Hanson's active-set method). */
export function nnls(A: readonly number[][], b: readonly number[]): number[] {
  const n = A[0]?.length ?? 0;
  const x = new Array<number>(n).fill(0);
  const passive = new Set<number>();
  const grad = (): number[] => {
    const r = b.map((bi, i) => bi - A[i]!.reduce((s, a, j) => s + a * x[j]!, 0));
    return Array.from({ length: n }, (_, j) => A.reduce((s, row, i) => s + row[j]! * r[i]!, 0));
  };
  const colNorm = Array.from({ length: n }, (_, j) => Math.sqrt(A.reduce((s, r) => s + r[j]! ** 2, 0)));
  const bNorm = Math.sqrt(b.reduce((s, v) => s + v * v, 0)) || 1;
  for (let outer = 0; outer < 10 * n + 10; outer++) {
    const w = grad();
    let best = -1;
    for (let j = 0; j < n; j++)
      if (
        !passive.has(j) &&
        colNorm[j]! > 0 &&
        w[j]! / colNorm[j]! > 1e-12 * bNorm &&
        (best < 0 || w[j]! / colNorm[j]! > w[best]! / colNorm[best]!)
      )
        best = j;
    if (best < 0) break;
    passive.add(best);
    for (let inner = 0; inner < 10 * n + 10; inner++) {
      const cols = [...passive].sort((p, q) => p - q);
      const z = leastSquares(A, b, cols);
      if (cols.every((j) => z[j]! > 0)) {
        for (let j = 0; j < n; j++) x[j] = passive.has(j) ? z[j]! : 0;
        break;
      }
      // Step from x towards z until the first passive variable reaches 0; drop it.
      let alpha = 1;
      for (const j of cols) if (z[j]! <= 0) alpha = Math.min(alpha, x[j]! / (x[j]! - z[j]!));
      for (const j of cols) {
        x[j] = x[j]! + alpha * (z[j]! - x[j]!);
        if (x[j]! <= 1e-15 * (Math.abs(z[j]!) + 1)) {
          x[j] = 0;
          passive.delete(j);
        }
      }
      if (passive.size === 0) break;
    }
  }
  return x;
}

/**
 * Huber weights (as square roots, for rows of a least-squares system) of residuals scaled by their median absolute
 * value; undefined where that scale is 0 (every residual as good as exact: nothing to reweight).
 */
function huberWeights(residuals: readonly number[]): number[] | undefined {
  const res = residuals.map(Math.abs);
  const s = HUBER_K * 1.4826 * [...res].sort((p, q) => p - q)[res.length >> 1]!;
  if (!(s > 1e-9)) return undefined;
  return res.map((r) => (r <= s ? 1 : Math.sqrt(s / r)));
}

/**
 * NNLS made robust to a few disturbed runs (a timing hit by other load):
 * iteratively reweighted with Huber weights, the residuals scaled by their
 * median absolute value; a fixed number of rounds keeps it deterministic.
 * With exact data every weight stays 1 and this is plain NNLS.
 */
function robustNnls(A: readonly number[][], b: readonly number[]): number[] {
  let x = nnls(A, b);
  for (let round = 0; round < ROBUST_ROUNDS; round++) {
    const w = huberWeights(A.map((r, i) => r.reduce((t, v, j) => t + v * x[j]!, 0) - b[i]!));
    if (!w) break;
    x = nnls(
      A.map((r, i) => r.map((v) => v * w[i]!)),
      b.map((v, i) => v * w[i]!),
    );
  }
  return x;
}

/** Whether column j has a part outside the span of the other non-empty columns. */
function independent(A: readonly number[][], j: number): boolean {
  const others = LINEAR_KEYS.map((_, i) => i).filter((i) => i !== j && A.some((r) => r[i] !== 0));
  const col = A.map((r) => r[j]!);
  const norm = Math.sqrt(col.reduce((s, v) => s + v * v, 0));
  if (norm === 0) return false;
  if (others.length === 0) return true;
  const x = leastSquares(A, col, others);
  const res = Math.sqrt(A.reduce((s, r, i) => s + (col[i]! - others.reduce((t, k) => t + r[k]! * x[k]!, 0)) ** 2, 0));
  return res > 1e-6 * norm;
}

function threadTimeMs(s: CalibrationSample, p: CpuParams, e: number, dispatchUs: number, base: DeviceSpec): number {
  const d = cpuDeviceFor(
    { overheadUs: p.overheadUs, model: { ...p.model, parallelEfficiency: e, dispatchUsPerThread: dispatchUs } },
    s.threads,
    base,
  );
  return predictMs(s.ops, d, true);
}

/** Least squares (relative) fit of the CPU model; see the file comment. */
export function fitCpuParams(samples: readonly CalibrationSample[], o: FitOptions = {}): FitResult {
  // Errors are relative to the measured time: a run timed at 0 (or not at all) would divide the fit by nothing.
  const bad = samples.findIndex((s) => !(Number.isFinite(s.measuredMs) && s.measuredMs > 0));
  if (bad >= 0)
    throw new Error(`sample ${bad} was timed at ${samples[bad]!.measuredMs} ms; every sample needs a time above 0`);
  const one = samples.filter((s) => s.threads === 1);
  const many = samples.filter((s) => s.threads > 1);
  if (one.length === 0) throw new Error('no one-thread samples to fit');
  const base = o.base ?? BASE;
  let best: { loss: number; cacheMB: number; historyBits: number; x: number[]; A: number[][] } | undefined;
  const losses = new Map<string, number>();
  const cacheGrid = o.cacheGridMB ?? CACHE_GRID_MB;
  const historyGrid = o.historyGridBits ?? HISTORY_GRID_BITS;
  for (const cacheMB of cacheGrid)
    for (const historyBits of historyGrid) {
      const rows = one.map((s) => designRow(s.ops, cacheMB, historyBits, base));
      // Relative errors: each row divided by its measured time.
      const A = rows.map((r, i) => r.a.map((v) => v / one[i]!.measuredMs));
      const b = rows.map((r, i) => (one[i]!.measuredMs - r.fixedMs) / one[i]!.measuredMs);
      const x = robustNnls(A, b);
      const loss = A.reduce((s, r, i) => s + (r.reduce((t, v, j) => t + v * x[j]!, 0) - b[i]!) ** 2, 0);
      losses.set(`${cacheMB}/${historyBits}`, loss);
      if (!best || loss < best.loss * (1 - 1e-12)) best = { loss, cacheMB, historyBits, x, A };
    }
  const { x, A, cacheMB, historyBits } = best!;
  const coef = Object.fromEntries(LINEAR_KEYS.map((k, i) => [k, x[i]!])) as Record<LinearKey, number>;
  const { overheadUs, ...ns } = coef;
  const params: CpuParams = { overheadUs, model: { ...ns, cacheMB, branchHistoryChangeBits: historyBits } };
  const determined = Object.fromEntries(LINEAR_KEYS.map((k, i) => [k, independent(A, i)])) as FitResult['determined'];
  // A grid figure is determined when some other value of it (the other figure kept) fits worse.
  const tie = (l: number | undefined): boolean =>
    l !== undefined && Math.abs(l - best!.loss) <= 1e-12 * Math.max(1e-12, best!.loss);
  const anyBeyond = A.some((r) => r[5] !== 0 || r[6] !== 0);
  determined.cacheMB = anyBeyond && !cacheGrid.every((c) => tie(losses.get(`${c}/${historyBits}`)));
  determined.branchHistoryChangeBits =
    determined.nsPerBranchMiss && !historyGrid.every((h) => tie(losses.get(`${cacheMB}/${h}`)));
  determined.parallelEfficiency = many.length > 0;
  determined.dispatchUsPerThread = many.length > 0;
  const rms1 = Math.sqrt(
    one.reduce((s, x1) => s + relativeError(predictMs(x1.ops, cpuDeviceFor(params, 1, base)), x1.measuredMs) ** 2, 0) /
      one.length,
  );
  if (many.length === 0) return { params, rmsRelError: rms1, rmsRelErrorThreads: NaN, determined };

  // Given e, each multi-thread prediction is c + (T - 1) x dispatch: solve dispatch (>= 0) in closed form. Only
  // ops the executors split pay it: one of fewer than MIN_SPLIT_ROWS rows runs on the calling thread alone.
  const handOffs = many.map((s) => s.ops.reduce((t, op) => t + (cpuModelled(op) && !runsAlone(op) ? op.trips : 0), 0));
  // Weighted as the one-thread fit is (robustNnls): Huber weights on the relative errors, the scale from their
  // median, a fixed number of rounds. A few runs whose speedup the model's terms do not explain (a superlinear one
  // whose rows' branch history fits each core's predictor only at two threads; one hit by other load) otherwise
  // drag e and the dispatch cost for all the others.
  // The predictions without dispatch depend on e alone: each round of weights tries the same grid of e again.
  const predicted = new Map<number, number[]>();
  const atE = (e: number, w: readonly number[]): { loss: number; dispatchUs: number; errors: number[] } => {
    let num = 0;
    let den = 0;
    const cs = predicted.get(e) ?? many.map((s) => threadTimeMs(s, params, e, 0, base));
    predicted.set(e, cs);
    many.forEach((s, i) => {
      const g = (handOffs[i]! * (s.threads - 1) * 1e-3) / s.measuredMs;
      // Each row scaled by its weight, as robustNnls scales its rows.
      const w2 = w[i]! * w[i]!;
      num += w2 * g * (1 - cs[i]! / s.measuredMs);
      den += w2 * g * g;
    });
    const dispatchUs = den > 0 ? Math.max(0, num / den) : 0;
    const errors = many.map((s, i) =>
      relativeError(cs[i]! + handOffs[i]! * (s.threads - 1) * 1e-3 * dispatchUs, s.measuredMs),
    );
    return { loss: errors.reduce((t, r, i) => t + (w[i]! * r) ** 2, 0), dispatchUs, errors };
  };
  // e by a grid of 101 values refined by golden section, for given weights.
  const bestE = (w: readonly number[]): number => {
    let eBest = 0;
    let lBest = Infinity;
    for (let k = 0; k <= 100; k++) {
      const l = atE(k / 100, w).loss;
      if (l < lBest) [eBest, lBest] = [k / 100, l];
    }
    const phi = (Math.sqrt(5) - 1) / 2;
    let lo = Math.max(0, eBest - 0.01);
    let hi = Math.min(1, eBest + 0.01);
    for (let it = 0; it < 60; it++) {
      const a = hi - phi * (hi - lo);
      const c = lo + phi * (hi - lo);
      if (atE(a, w).loss <= atE(c, w).loss) hi = c;
      else lo = a;
    }
    const mid = (lo + hi) / 2;
    return atE(mid, w).loss <= lBest ? mid : eBest;
  };
  let weights: readonly number[] = many.map(() => 1);
  let e = bestE(weights);
  for (let round = 0; round < ROBUST_ROUNDS; round++) {
    const w = huberWeights(atE(e, weights).errors);
    if (!w) break;
    weights = w;
    e = bestE(weights);
  }
  const fitE = atE(e, weights);
  const rmsThreads = Math.sqrt(fitE.errors.reduce((t, r) => t + r * r, 0) / many.length);
  params.model = { ...params.model, parallelEfficiency: e, dispatchUsPerThread: fitE.dispatchUs };
  return { params, rmsRelError: rms1, rmsRelErrorThreads: rmsThreads, determined };
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export { median };

/** Median and worst absolute relative error of predictions against measurements. */
export function errorSummary(rows: readonly { predictedMs: number; measuredMs: number }[]): {
  medianAbsRelError: number;
  worstAbsRelError: number;
} {
  const errs = rows.map((r) => Math.abs(relativeError(r.predictedMs, r.measuredMs)));
  return { medianAbsRelError: median(errs), worstAbsRelError: errs.length ? Math.max(...errs) : NaN };
}
