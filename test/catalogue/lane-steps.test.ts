/**
 * The GPU model's lane walk (runtime/catalogue/gpu.ts laneSteps, x gpuModel.laneStepNs): a schedule takes at least
 * its longest lane's steps, whatever its bytes. Held against what the H200 showed (docs/PERFORMANCE.md, "The H200
 * run"): one thread on a hub row, and row-per-thread SpMM walking every entry once per column, cost far more than
 * their bytes, while merge-path and warp-per-row over few columns do not; and a GPU without a gpuModel keeps the
 * roofline.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { plannedSpec } from '../../codegen/implementations.js';
import { lowerKernelsPass } from '../../passes/lower-kernels.js';
import { implTimes } from '../../runtime/catalogue/index.js';
import { GPU_SCHEDULE, laneSteps, mergeSearchSteps, roundsMs, warpRows } from '../../runtime/catalogue/gpu.js';
import type { GpuImpl } from '../../runtime/catalogue/names.js';
import { bindProblem } from '../../runtime/plan/bind.js';
import type { PlanOp, SparseFeatures } from '../../runtime/plan/types.js';
import { loadSystemFile } from '../../runtime/system/load.js';
import type { DeviceSpec } from '../../runtime/system/types.js';
import { optimised } from '../helpers/compile.js';

const root = join(import.meta.dirname, '..', '..');
const gpu = loadSystemFile(join(root, 'systems', 'h200-cpu.json')).devices.find((d) => d.kind === 'gpu')!;

function opOf(example: 'spmv' | 'spmm', f: SparseFeatures, k?: number): PlanOp {
  const file = `examples/${example}.dy`;
  const module = lowerKernelsPass.run(optimised(readFileSync(join(root, file), 'utf8')));
  const p = bindProblem(plannedSpec(module, file, example), {
    sparse: new Map([['A', f]]),
    dims: new Map([['m', f.rows], ['n', f.cols], ...(k === undefined ? [] : [['k', k] as [string, number]])]),
    scalars: new Map(),
  });
  return p.ops[0]!;
}

/** A square matrix of short rows (mean 4) and one row of `hub` entries. */
const withHub = (rows: number, hub: number): SparseFeatures => {
  const nnz = (rows - 1) * 4 + hub;
  const mean = nnz / rows;
  const sq = (rows - 1) * (4 - mean) ** 2 + (hub - mean) ** 2;
  return {
    rows,
    cols: rows,
    nnz,
    rowLenMean: mean,
    rowLenMax: hub,
    rowLenCv: Math.sqrt(sq / rows) / mean,
    emptyRowFraction: 0,
    top1PctNnzShare: Math.min(1, (hub + (Math.ceil(rows / 100) - 1) * 4) / nnz),
    localityScore: 0.5,
  };
};

const ms = (op: PlanOp, impl: GpuImpl, d: DeviceSpec = gpu): number =>
  implTimes(op, d).find((t) => t.impl === impl)!.ms;

describe('the GPU lane walk', () => {
  it('prices a thread on a hub row at its steps: row-per-thread over the entries, warp-per-row a 32nd of them', () => {
    const op = opOf('spmv', withHub(1 << 20, 600_000));
    expect(laneSteps('row-per-thread', op)).toBe(600_000);
    expect(laneSteps('warp-per-row', op)).toBe(Math.ceil(600_000 / 32));
    const step = gpu.gpuModel!.laneStepNs / 1e6;
    expect(ms(op, 'row-per-thread')).toBeGreaterThanOrEqual(600_000 * step);
    expect(ms(op, 'warp-per-row')).toBeGreaterThanOrEqual((600_000 / 32) * step);
    // merge-path walks a fixed number of diagonals per thread: its bytes price it, and it is now the cheapest.
    expect(laneSteps('merge-path', op)).toBe(GPU_SCHEDULE.mergeItems + 1);
    const impls: GpuImpl[] = ['row-per-thread', 'warp-per-row', 'adaptive-rows', 'merge-path'];
    const cheapest = impls.reduce((a, b) => (ms(op, b) < ms(op, a) ? b : a));
    expect(cheapest).toBe('merge-path');
  });

  it('grows row-per-thread SpMM with the columns on a long row, while warp-per-row stays flat up to 32 columns', () => {
    const f = withHub(2000, 1300);
    const rpt = [16, 32, 128].map((k) => ms(opOf('spmm', f, k), 'row-per-thread'));
    expect(rpt[1]! / rpt[0]!).toBeCloseTo(2, 1);
    expect(rpt[2]! / rpt[0]!).toBeCloseTo(8, 1);
    expect(laneSteps('row-per-thread', opOf('spmm', f, 32))).toBe(1300 * 32);
    // Lanes over the columns: one step per entry up to 32 columns (no vectors there), then K / (32 x 4) with float4.
    expect(laneSteps('warp-per-row', opOf('spmm', f, 16))).toBe(1300);
    expect(laneSteps('warp-per-row', opOf('spmm', f, 32))).toBe(1300);
    expect(laneSteps('warp-per-row', opOf('spmm', f, 256))).toBe(1300 * 2);
    expect(ms(opOf('spmm', f, 32), 'warp-per-row')).toBeLessThan(rpt[1]! / 10);
  });

  it('sends adaptive-rows long rows to a block, so its walk is the block share or the capped group walk', () => {
    const op = opOf('spmv', withHub(1 << 20, 600_000));
    // Mean below 2 entries: groups of 2 lanes, rows kept up to 32 x 2 entries; the hub on a block of 256 threads.
    expect(laneSteps('adaptive-rows', op)).toBe(Math.max(32, Math.ceil(600_000 / GPU_SCHEDULE.blockLanes)));
    const dense = opOf('spmm', withHub(1 << 20, 600_000), 128);
    // float4 columns, lanes 32: kept rows up to 1024 entries one step each; the hub over 8 warps.
    expect(laneSteps('adaptive-rows', dense)).toBe(Math.max(1024, Math.ceil(600_000 / 8)));
  });

  it('has no walk without a gpuModel (the roofline), and none for dense schedules', () => {
    const op = opOf('spmv', withHub(1 << 20, 600_000));
    const { gpuModel: _, ...bare } = gpu;
    const roofline: DeviceSpec = bare;
    expect(ms(op, 'row-per-thread', roofline)).toBeLessThan(600_000 * (gpu.gpuModel!.laneStepNs / 1e6));
    expect(laneSteps('tiled', op)).toBe(0);
    expect(laneSteps('elementwise', op)).toBe(0);
  });

  it('prices rounds of resident warps where more warps run than the GPU holds: a 2M-row stencil, not a small matrix', () => {
    // A 7-point stencil over 128^3 points: 2,097,152 rows of 7 entries (what the H200 ran).
    const rows = 1 << 21;
    const stencil: SparseFeatures = {
      rows,
      cols: rows,
      nnz: rows * 7,
      rowLenMean: 7,
      rowLenMax: 7,
      rowLenCv: 0,
      emptyRowFraction: 0,
      top1PctNnzShare: 0.01,
      localityScore: 1,
      bandwidthEstimateNorm: 16_384 / rows,
    };
    const m = gpu.gpuModel!;
    const spmv = opOf('spmv', stencil);
    // A row a warp, 7 entries in one step; adaptive-rows puts 4 rows of 8 lanes on a warp; row-per-thread 32 rows.
    expect(warpRows('warp-per-row', spmv)).toEqual({ warps: rows, steps: 1 });
    expect(warpRows('adaptive-rows', spmv)).toEqual({ warps: rows / 4, steps: 1 });
    expect(warpRows('row-per-thread', spmv)).toEqual({ warps: rows / 32, steps: 7 });
    // merge-path: blocks of 8 warps over 2,048 diagonals (rows + entries), 8 items a thread.
    expect(warpRows('merge-path', spmv)).toEqual({ warps: Math.ceil((rows * 8) / 2048) * 8, steps: 8 });
    const rounds = Math.ceil(rows / m.residentWarps);
    expect(roundsMs('warp-per-row', spmv, m)).toBeCloseTo((rounds * (m.rowChainNs + m.laneStepNs)) / 1e6, 9);
    // The rounds, not the bytes, set warp-per-row's time there (0.39 ms measured on the H200, 0.18 from its bytes).
    expect(ms(spmv, 'warp-per-row')).toBeGreaterThanOrEqual(roundsMs('warp-per-row', spmv, m));
    expect(ms(spmv, 'warp-per-row')).toBeGreaterThan(0.4);
    // Over a dense width a warp-per-row warp steps through its row's 7 entries.
    const spmm = opOf('spmm', stencil, 32);
    expect(warpRows('warp-per-row', spmm)).toEqual({ warps: rows, steps: 7 });
    expect(ms(spmm, 'warp-per-row')).toBeGreaterThanOrEqual(roundsMs('warp-per-row', spmm, m));
    // A small matrix fits in one round, which its call floor covers.
    const small = opOf('spmv', withHub(2000, 40));
    expect(roundsMs('warp-per-row', small, m)).toBeLessThan(m.sparseFloorUs / 1e3);
    // Without a gpuModel, the roofline.
    const { gpuModel: _, ...bare } = gpu;
    expect(ms(spmv, 'warp-per-row', bare)).toBeLessThan(roundsMs('warp-per-row', spmv, m));
  });

  it("adds merge-path's global searches to its bytes: two binary searches over the rows a block, in rounds", () => {
    const m = gpu.gpuModel!;
    const small = opOf('spmv', withHub(2000, 40));
    // 2 x ceil(log2(2001)) = 22 dependent steps, one round: a few microseconds on top of the call floor.
    expect(mergeSearchSteps(small)).toBe(22);
    expect(roundsMs('merge-path', small, m)).toBeCloseTo((22 * m.searchStepNs + 8 * m.laneStepNs) / 1e6, 9);
    const bare = { ...m, searchStepNs: 0, laneStepNs: 0 };
    const withSearch = ms(small, 'merge-path');
    const without = ms(small, 'merge-path', { ...gpu, gpuModel: bare });
    expect(withSearch - without).toBeGreaterThanOrEqual((22 * m.searchStepNs) / 1e6);
    // On the H200 merge-path SpMV cost 15-18 us on matrices of 10^4 entries where warp-per-row took 7-9.
    expect(withSearch).toBeGreaterThan(ms(small, 'warp-per-row'));
  });
});
