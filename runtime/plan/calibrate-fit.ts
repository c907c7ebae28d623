/**
 * Fitting the CPU cost model to measured kernel times (`dype calibrate`).
 *
 * The model is the planner's own (cost.ts, cpuVariants): for each op,
 *   ms = overhead + roofline(flops / F, bytes / B) * skew
 * with F = peakGflops * MODEL.cpu.compute and B = memBandwidthGBs *
 * MODEL.cpu.memory. The three free numbers are the effective compute F
 * (GFLOP/s), the effective bandwidth B (GB/s) and the per-op launch overhead
 * (us). They are fitted by minimising the sum of squared relative errors
 * (predicted / measured - 1)^2 over the samples with a coordinate search in
 * log space: each parameter in turn is multiplied or divided by a step while
 * that lowers the error; the step halves (in log) when no move helps, down
 * to a factor 1.0001. The loss has kinks, so the search runs from the given
 * start and from a 3 x 3 x 3 grid of others, and the best result is kept. Predictions go through variantTimes/bestOpTime, so the
 * fitted parameters reproduce exactly what the planner will predict.
 */
import type { DeviceSpec } from '../system/types.js';
import { bestOpTime, MODEL } from './cost.js';
import type { PlanOp } from './types.js';

export interface CpuParams {
  /** Effective compute the roofline sees, GFLOP/s (peak x MODEL.cpu.compute). */
  effGflops: number;
  /** Effective memory bandwidth the roofline sees, GB/s (peak x MODEL.cpu.memory). */
  effBandwidthGBs: number;
  /** Fixed cost per op, us. */
  overheadUs: number;
}

export interface CalibrationSample {
  /** The bound ops of one kernel on one matrix (bindProblem's output). */
  ops: readonly PlanOp[];
  measuredMs: number;
}

/** A CPU device whose cost model has exactly these effective parameters. */
export function cpuDeviceFor(p: CpuParams, threads: number, base?: DeviceSpec): DeviceSpec {
  const f32 = p.effGflops / MODEL.cpu.compute;
  const ratio = base ? base.peakGflops.f64 / base.peakGflops.f32 : 0.5;
  return {
    ...(base ?? { id: 'cpu', kind: 'cpu', name: 'cpu', count: 1, idlePowerW: 0, activePowerW: 0, memoryGB: 1 }),
    peakGflops: { f32, f64: f32 * ratio, i32: base?.peakGflops.i32 ?? f32 * 0.5, i64: base?.peakGflops.i64 ?? f32 * 0.25 },
    memBandwidthGBs: p.effBandwidthGBs / MODEL.cpu.memory,
    launchOverheadUs: p.overheadUs,
    threads,
  } as DeviceSpec;
}

/** The model's time of one kernel run (every op, once each trip, on one CPU instance). */
export function predictMs(ops: readonly PlanOp[], d: DeviceSpec): number {
  let ms = 0;
  for (const op of ops) ms += bestOpTime(op, d, 1).ms;
  return ms;
}

export function relativeError(predicted: number, measured: number): number {
  return (predicted - measured) / measured;
}

export interface FitOptions {
  threads: number;
  /** Starting point (default 10 GFLOP/s, 10 GB/s, 10 us). */
  start?: CpuParams;
  /** Upper bounds: a hardware peak the effective figures cannot exceed. */
  maxEffGflops?: number;
  maxEffBandwidthGBs?: number;
}

export interface FitResult {
  params: CpuParams;
  /** Root mean square relative error over the samples. */
  rmsRelError: number;
  iterations: number;
  /**
   * Whether the samples determine each parameter: false when scaling it by
   * 1.1 either way leaves the error unchanged (say, no sample is bound by
   * compute), so its fitted value is arbitrary within a flat region.
   */
  determined: Record<keyof CpuParams, boolean>;
}

const KEYS = ['effGflops', 'effBandwidthGBs', 'overheadUs'] as const;

/** Least squares (relative) fit of the three CPU parameters; see the file comment. */
export function fitCpuParams(samples: readonly CalibrationSample[], o: FitOptions): FitResult {
  if (samples.length === 0) throw new Error('no samples to fit');
  const lo: CpuParams = { effGflops: 1e-3, effBandwidthGBs: 1e-3, overheadUs: 1e-3 };
  const hi: CpuParams = { effGflops: o.maxEffGflops ?? 1e6, effBandwidthGBs: o.maxEffBandwidthGBs ?? 1e6, overheadUs: 1e6 };
  const loss = (p: CpuParams): number => {
    const d = cpuDeviceFor(p, o.threads);
    let s = 0;
    for (const x of samples) s += relativeError(predictMs(x.ops, d), x.measuredMs) ** 2;
    return s;
  };
  const search = (start: CpuParams): FitResult => {
    let p: CpuParams = { ...start };
    for (const k of KEYS) p[k] = Math.min(hi[k], Math.max(lo[k], p[k]));
    let best = loss(p);
    let step = 4;
    let iterations = 0;
    while (step > 1.0001 && iterations < 20_000) {
      let moved = false;
      for (const k of KEYS) {
        for (const f of [step, 1 / step]) {
          // Keep going in a direction while it helps.
          for (;;) {
            const v = Math.min(hi[k], Math.max(lo[k], p[k] * f));
            if (v === p[k]) break;
            const q = { ...p, [k]: v };
            const l = loss(q);
            iterations++;
            if (!(l < best)) break;
            p = q;
            best = l;
            moved = true;
          }
        }
      }
      if (!moved) step = Math.sqrt(step);
    }
    return { params: p, rmsRelError: Math.sqrt(best / samples.length), iterations, determined: { effGflops: true, effBandwidthGBs: true, overheadUs: true } };
  };
  // The loss has kinks (the roofline's max), so the search starts from the
  // given point and from a coarse grid of others, and keeps the best.
  const starts: CpuParams[] = [o.start ?? { effGflops: 10, effBandwidthGBs: 10, overheadUs: 10 }];
  for (const effGflops of [0.3, 3, 30]) for (const effBandwidthGBs of [1, 10, 100]) for (const overheadUs of [1, 30, 1000]) starts.push({ effGflops, effBandwidthGBs, overheadUs });
  let best: FitResult | undefined;
  let iterations = 0;
  for (const s of starts) {
    const r = search(s);
    iterations += r.iterations;
    if (!best || r.rmsRelError < best.rmsRelError) best = r;
  }
  const p = best!.params;
  const l0 = loss(p);
  const flat = (k: keyof CpuParams): boolean => [1.1, 1 / 1.1].every((f) => Math.abs(loss({ ...p, [k]: p[k] * f }) - l0) <= 1e-12 * Math.max(1, l0));
  return { ...best!, iterations, determined: { effGflops: !flat('effGflops'), effBandwidthGBs: !flat('effBandwidthGBs'), overheadUs: !flat('overheadUs') } };
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export { median };

/** Median and worst absolute relative error of predictions against measurements. */
export function errorSummary(rows: readonly { predictedMs: number; measuredMs: number }[]): { medianAbsRelError: number; worstAbsRelError: number } {
  const errs = rows.map((r) => Math.abs(relativeError(r.predictedMs, r.measuredMs)));
  return { medianAbsRelError: median(errs), worstAbsRelError: errs.length ? Math.max(...errs) : NaN };
}
