/**
 * The GPU model's L2 reuse within a band of the diagonal and the sectors of lanes that gather apart
 * (runtime/catalogue/gpu.ts dramBytes, sectorBytes, mergePath's row pass). Held against what the H200 showed on
 * the 128^3 7-point stencil (docs/PERFORMANCE.md, "The L2 band"): warp-per-row and adaptive-rows SpMM at 128
 * columns ran in a tenth of the time uniform reuse over the 1 GB dense operand priced, while row-per-thread and
 * merge-path SpMM ran 10-60x slower than the band alone would price them (merge-path's row kernel then walked a
 * row's columns in one thread; it now takes an element a thread, and its row pass is priced as the partials it
 * writes and reads back).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { plannedSpec } from '../../codegen/implementations.js';
import { lowerKernelsPass } from '../../passes/lower-kernels.js';
import { implTimes } from '../../runtime/catalogue/index.js';
import { roundsMs } from '../../runtime/catalogue/gpu.js';
import type { GpuImpl } from '../../runtime/catalogue/names.js';
import { bindProblem } from '../../runtime/plan/bind.js';
import type { PlanOp, SparseFeatures } from '../../runtime/plan/types.js';
import { loadSystemFile } from '../../runtime/system/load.js';
import { optimised } from '../helpers/compile.js';

const root = join(import.meta.dirname, '..', '..');
const gpu = loadSystemFile(join(root, 'systems', 'h200-cpu.json')).devices.find((d) => d.kind === 'gpu')!;

function spmm(f: SparseFeatures, k: number): PlanOp {
  const file = 'examples/spmm.dy';
  const module = lowerKernelsPass.run(optimised(readFileSync(join(root, file), 'utf8')));
  return bindProblem(plannedSpec(module, file, 'spmm'), {
    sparse: new Map([['A', f]]),
    dims: new Map([
      ['m', f.rows],
      ['n', f.cols],
      ['k', k],
    ]),
    scalars: new Map(),
  }).ops[0]!;
}

/** The stencil's shape: 2M rows of 7 entries, its farthest column a plane (128^2 rows) away. */
const N = 128 ** 3;
const stencil = (band?: number): SparseFeatures => ({
  rows: N,
  cols: N,
  nnz: 7 * N,
  rowLenMean: 7,
  rowLenMax: 7,
  rowLenCv: 0,
  emptyRowFraction: 0,
  top1PctNnzShare: 7 / (7 * 100),
  localityScore: 0.6,
  ...(band === undefined ? {} : { bandwidthEstimateNorm: band }),
});
const PLANE = (128 * 128) / N;

const ms = (op: PlanOp, impl: GpuImpl): number => implTimes(op, gpu).find((t) => t.impl === impl)!.ms;

describe('the GPU model on a banded matrix whose dense operand overflows the L2', () => {
  const K = 128;
  const banded = spmm(stencil(PLANE), K);
  const unknown = spmm(stencil(), K);
  // The operands once, the result once: what a kernel whose gathers all hit the L2 moves.
  const compulsoryMs = (banded.bytes / (gpu.gpuModel!.effectiveBandwidthGBs * 1e9)) * 1e3;

  it('prices the coalesced schedules at their compulsory bytes when the band fits the L2, and as before without a band', () => {
    for (const impl of ['warp-per-row', 'adaptive-rows'] as const) {
      expect(ms(banded, impl), impl).toBeLessThan(1.5 * compulsoryMs);
      expect(ms(unknown, impl) / ms(banded, impl), impl).toBeGreaterThan(5);
    }
    // A band past the L2 (each row reaching a quarter of the matrix) reuses as the whole operand does.
    const wide = spmm(stencil(0.5), K);
    expect(ms(wide, 'warp-per-row')).toBeCloseTo(ms(unknown, 'warp-per-row'), 6);
  });

  it('prices row-per-thread over a dense width at a sector per gathered element, band or not', () => {
    const sectors = ((banded.bytes + banded.gathers * 32) / (gpu.gpuModel!.effectiveBandwidthGBs * 1e9)) * 1e3;
    expect(ms(banded, 'row-per-thread')).toBeGreaterThanOrEqual(sectors);
    expect(ms(banded, 'row-per-thread')).toBeCloseTo(ms(unknown, 'row-per-thread'), 6);
    expect(ms(banded, 'row-per-thread') / ms(banded, 'warp-per-row')).toBeGreaterThan(10);
  });

  it("adds merge-path's row pass, two values an output element (its partials written and read back), to the SpMM form only", () => {
    const rowPassMs = ((N * K * 2 * 4) / (gpu.gpuModel!.effectiveBandwidthGBs * 1e9)) * 1e3;
    expect(ms(banded, 'merge-path')).toBeGreaterThanOrEqual(ms(banded, 'warp-per-row') + rowPassMs);
    // It grows with the width: at one column it is a 128th of that at 128 (past the blocks' global searches, the
    // same at every width: roundsMs).
    const searches = (op: PlanOp): number => roundsMs('merge-path', op, gpu.gpuModel!);
    const one = spmm(stencil(PLANE), 1);
    expect(ms(one, 'merge-path') - searches(one)).toBeLessThan((ms(banded, 'merge-path') - searches(banded)) / 20);
  });
});
