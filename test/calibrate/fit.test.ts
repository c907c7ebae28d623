/**
 * The calibration fit recovers known CPU parameters from timings the cost
 * model itself generates, using the planner's own work counts for SpMV and
 * SpMM (K = 16) on a ladder of matrix features.
 */
import { describe, expect, it } from 'vitest';
import { compileSource } from '../../frontend/compile.js';
import { DEFAULT_PIPELINE, runPipeline } from '../../passes/index.js';
import { planSpec } from '../../passes/plan-spec.js';
import { bindProblem } from '../../runtime/plan/bind.js';
import { cpuDeviceFor, errorSummary, fitCpuParams, predictMs, type CalibrationSample, type CpuParams } from '../../runtime/plan/calibrate-fit.js';
import type { PlanOp, SparseFeatures } from '../../runtime/plan/types.js';

const SPMV = 'kernel spmv(A: csr<f32>[m, n], x: dense<f32>[n]) -> (y: dense<f32>[m]) { y[i] = A[i, j] * x[j]; }';
const SPMM = 'kernel spmm16(A: csr<f32>[m, n], B: dense<f32>[n, c]) -> (Y: dense<f32>[m, c]) { Y[i, k] = A[i, j] * B[j, k]; }';

function ops(src: string, f: SparseFeatures): PlanOp[] {
  const k = runPipeline(compileSource(src, 'k.dy').module!, { passes: [...DEFAULT_PIPELINE] }).kernels[0]!;
  return bindProblem(planSpec(k), { sparse: new Map([['A', f]]), dims: new Map([['m', f.rows], ['n', f.cols], ['c', 16]]), scalars: new Map() }).ops;
}

function feats(rows: number, perRow: number, localityScore: number): SparseFeatures {
  return { rows, cols: rows, nnz: rows * perRow, rowLenMean: perRow, rowLenMax: Math.ceil(perRow * 1.5), rowLenCv: 0.29, emptyRowFraction: 0, top1PctNnzShare: 0.015, localityScore };
}

function synthetic(truth: CpuParams, threads: number): CalibrationSample[] {
  const d = cpuDeviceFor(truth, threads);
  const out: CalibrationSample[] = [];
  for (const rows of [1_000, 10_000, 50_000, 200_000])
    for (const perRow of [8, 16, 32])
      for (const src of [SPMV, SPMM]) {
        // Locality spreads the kernels' arithmetic intensity (about 0.08 to 0.38 flop/byte).
        const o = ops(src, feats(rows, perRow, [0.05, 0.5, 0.95][(rows + perRow) % 3]!));
        out.push({ ops: o, measuredMs: predictMs(o, d) });
      }
  return out;
}

describe('fitCpuParams', () => {
  for (const [truth, threads] of [
    [{ effGflops: 3, effBandwidthGBs: 12, overheadUs: 50 }, 2],
    [{ effGflops: 2, effBandwidthGBs: 10, overheadUs: 300 }, 1],
    [{ effGflops: 30, effBandwidthGBs: 200, overheadUs: 5 }, 4],
  ] as [CpuParams, number][]) {
    it(`recovers ${JSON.stringify(truth)} at ${threads} threads within 5%`, () => {
      const samples = synthetic(truth, threads);
      // Both roofline regimes are present, so both rates are identifiable.
      const r = fitCpuParams(samples, { threads });
      expect(r.determined).toEqual({ effGflops: true, effBandwidthGBs: true, overheadUs: true });
      expect(Math.abs(r.params.effGflops / truth.effGflops - 1)).toBeLessThan(0.05);
      expect(Math.abs(r.params.effBandwidthGBs / truth.effBandwidthGBs - 1)).toBeLessThan(0.05);
      expect(Math.abs(r.params.overheadUs / truth.overheadUs - 1)).toBeLessThan(0.05);
      expect(r.rmsRelError).toBeLessThan(0.01);
      const d = cpuDeviceFor(r.params, threads);
      expect(errorSummary(samples.map((s) => ({ predictedMs: predictMs(s.ops, d), measuredMs: s.measuredMs }))).worstAbsRelError).toBeLessThan(0.02);
    });
  }

  it('keeps the effective compute under a given hardware bound', () => {
    const samples = synthetic({ effGflops: 3, effBandwidthGBs: 12, overheadUs: 50 }, 2);
    expect(fitCpuParams(samples, { threads: 2, maxEffGflops: 2 }).params.effGflops).toBeLessThanOrEqual(2);
  });

  it('says when a rate is not determined (every sample memory-bound)', () => {
    const samples = synthetic({ effGflops: 1000, effBandwidthGBs: 10, overheadUs: 20 }, 2);
    const r = fitCpuParams(samples, { threads: 2 });
    expect(r.determined.effGflops).toBe(false);
    expect(r.determined.effBandwidthGBs).toBe(true);
    expect(Math.abs(r.params.effBandwidthGBs / 10 - 1)).toBeLessThan(0.05);
  });

  it('rejects an empty sample set', () => {
    expect(() => fitCpuParams([], { threads: 1 })).toThrow(/no samples/);
  });
});

describe('errorSummary', () => {
  it('gives the median and worst absolute relative error', () => {
    const s = errorSummary([
      { predictedMs: 1.1, measuredMs: 1 },
      { predictedMs: 0.5, measuredMs: 1 },
      { predictedMs: 2, measuredMs: 2 },
    ]);
    expect(s.medianAbsRelError).toBeCloseTo(0.1, 10);
    expect(s.worstAbsRelError).toBeCloseTo(0.5, 10);
  });
});
