/**
 * The CPU's thread count per op (runtime/catalogue/cpu.ts cpuThreadsFor)
 * prices the counts around the model's turning point, 1 and max instead of
 * every count: it must pick what pricing every count picks, the fewest on a
 * tie, for fitted and roofline devices, sparse and dense ops, every max.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { plannedSpec } from '../../codegen/implementations.js';
import { compileSource } from '../../frontend/compile.js';
import { DEFAULT_PIPELINE, runPipeline } from '../../passes/index.js';
import { cpuThreadsByEveryCount, cpuThreadsFor } from '../../runtime/catalogue/cpu.js';
import { sparseFeaturesOf } from '../../runtime/guards/index.js';
import { toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { bindProblem } from '../../runtime/plan/bind.js';
import type { PlanOp, SparseFeatures } from '../../runtime/plan/types.js';
import { loadSystemFile } from '../../runtime/system/load.js';
import type { CpuModelSpec, DeviceSpec } from '../../runtime/system/types.js';

const root = join(import.meta.dirname, '..', '..');
const M = join(root, '..', 'shared', 'data', 'matrices');
const cpuOf = (preset: string): DeviceSpec =>
  loadSystemFile(join(root, 'systems', `${preset}.json`)).devices.find((d) => d.kind === 'cpu')!;
const fitted = cpuOf('this-machine');
const roofline = cpuOf('paper-1g1f');

const features = (rows: number, nnz: number, rowLenMax: number, rowLenCv = 1): SparseFeatures => ({
  rows,
  cols: rows,
  nnz,
  rowLenMean: rows > 0 ? nnz / rows : 0,
  rowLenMax,
  rowLenCv,
  emptyRowFraction: 0,
  top1PctNnzShare: 0.05,
  localityScore: 0.5,
});

const opArb = fc
  .record({
    kind: fc.constantFrom('spmv', 'spmm', 'sddmm', 'gemm', 'map'),
    dtype: fc.constantFrom('f32' as const, 'f64' as const),
    rows: fc.integer({ min: 1, max: 5_000_000 }),
    perRow: fc.double({ min: 0, max: 200, noNaN: true }),
    longest: fc.double({ min: 0, max: 1, noNaN: true }),
    width: fc.integer({ min: 1, max: 256 }),
    cv: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 6, noNaN: true })),
  })
  .map(({ kind, dtype, rows, perRow, longest, width, cv }): PlanOp => {
    const nnz = Math.round(rows * perRow);
    const f = kind === 'gemm' || kind === 'map' ? undefined : features(rows, nnz, Math.round(nnz * longest), cv);
    const items = kind === 'spmv' ? rows : rows * width;
    return {
      id: 'op',
      kind,
      result: 'y',
      dtype,
      reads: [],
      items,
      flops: 2 * (f ? nnz * width : items * width),
      bytes: (f ? nnz * 8 : items * 4) + items * 4,
      gathers: f ? nnz * width : 0,
      // As annotate-cost counts them: an entry's (SDDMM: its dot's) trips, a dense row's (GEMM: by its k = width).
      loops: f ? (kind === 'sddmm' ? nnz * width : nnz) : kind === 'gemm' ? rows * width : rows,
      columns: kind === 'spmv' || kind === 'sddmm' ? 1 : width,
      resultBytes: items * 4,
      trips: 1,
      impls: { cpu: ['nnz-split'], gpu: [], fpga: [] },
      ...(f ? { sparse: f } : {}),
    };
  });

const deviceArb = fc.oneof(
  fc.constant(roofline),
  fc.integer({ min: 1, max: 256 }).map((threads): DeviceSpec => ({ ...roofline, threads })),
  fc
    .record({
      threads: fc.integer({ min: 1, max: 256 }),
      efficiency: fc.oneof(fc.constant(1), fc.constant(0), fc.double({ min: 0.01, max: 1, noNaN: true })),
      dispatchUs: fc.oneof(fc.constant(0), fc.double({ min: 0.001, max: 100, noNaN: true })),
      dense: fc.boolean(),
      // The preset's history in rows, or one in a thread's bits or trips, whose branch term shrinks with the count.
      history: fc.oneof(
        fc.constant(undefined),
        fc.record({
          unit: fc.constantFrom('changeBits', 'bits', 'trips'),
          size: fc.double({ min: 1, max: 1e6, noNaN: true }),
        }),
      ),
      nsPerBranchMiss: fc.double({ min: 0.1, max: 50, noNaN: true }),
    })
    .map(({ threads, efficiency, dispatchUs, dense, history, nsPerBranchMiss }): DeviceSpec => {
      const { nsPerDenseFlop, nsPerDenseByte, branchHistoryRows, ...rest } = fitted.cpuModel!;
      const cpuModel: CpuModelSpec = {
        ...rest,
        ...(history === undefined
          ? { branchHistoryRows }
          : history.unit === 'changeBits'
            ? { branchHistoryChangeBits: history.size, nsPerBranchMiss }
            : history.unit === 'bits'
              ? { branchHistoryBits: history.size, nsPerBranchMiss }
              : { branchHistoryTrips: history.size, nsPerBranchMiss }),
        parallelEfficiency: efficiency,
        dispatchUsPerThread: dispatchUs,
        ...(dense ? { nsPerDenseFlop, nsPerDenseByte } : {}),
      };
      return { ...fitted, threads, cpuModel };
    }),
);

describe('threads per CPU op', () => {
  it('equal pricing every count, on random ops and devices (fitted and roofline)', () => {
    fc.assert(
      fc.property(opArb, deviceArb, fc.integer({ min: 1, max: 300 }), (op, d, max) => {
        expect(cpuThreadsFor(op, d, max)).toBe(cpuThreadsByEveryCount(op, d, max));
        expect(cpuThreadsFor(op, d)).toBe(cpuThreadsByEveryCount(op, d));
      }),
      { numRuns: 3000 },
    );
  });

  for (const unit of ['changeBits', 'bits', 'trips'] as const)
    it(`equal pricing every count where the branch term shrinks with the count (a history in ${unit})`, () => {
      // Ops whose units (row-length bits, weighed by changes or not, or uncertain trips) span the counts: all misses below u / 2 threads, none from u.
      const caseArb = fc.record({
        rows: fc.integer({ min: 10_000, max: 10_000_000 }),
        perRow: fc.double({ min: 1, max: 40, noNaN: true }),
        cv: fc.double({ min: 0.1, max: 2, noNaN: true }),
        change: fc.double({ min: 0.05, max: 1, noNaN: true }),
        trips: fc.double({ min: 1_000, max: 200_000, noNaN: true }),
        nsPerBranchMiss: fc.double({ min: 1, max: 100, noNaN: true }),
        efficiency: fc.double({ min: 0.3, max: 1, noNaN: true }),
        dispatchUs: fc.double({ min: 0.01, max: 50, noNaN: true }),
        max: fc.integer({ min: 2, max: 128 }),
      });
      let inSpan = 0;
      fc.assert(
        fc.property(caseArb, (c) => {
          const nnz = Math.round(c.rows * c.perRow);
          const f = { ...features(c.rows, nnz, Math.ceil(c.perRow * 2), c.cv), rowLenChangeFraction: c.change };
          const op: PlanOp = {
            id: 'op',
            kind: 'spmv',
            result: 'y',
            dtype: 'f32',
            reads: [],
            items: c.rows,
            flops: 2 * nnz,
            bytes: nnz * 8 + c.rows * 8,
            gathers: nnz,
            loops: nnz,
            columns: 1,
            resultBytes: c.rows * 4,
            trips: 1,
            impls: { cpu: ['nnz-split'], gpu: [], fpga: [] },
            sparse: f,
          };
          const { branchHistoryRows: _, ...rest } = fitted.cpuModel!;
          const d: DeviceSpec = {
            ...fitted,
            threads: c.max,
            cpuModel: {
              ...rest,
              nsPerBranchMiss: c.nsPerBranchMiss,
              ...(unit === 'changeBits'
                ? { branchHistoryChangeBits: c.trips }
                : unit === 'bits'
                  ? { branchHistoryBits: c.trips }
                  : { branchHistoryTrips: c.trips }),
              parallelEfficiency: c.efficiency,
              dispatchUsPerThread: c.dispatchUs,
            },
          };
          const pick = cpuThreadsByEveryCount(op, d);
          const spread = Math.min(c.cv * c.perRow, c.perRow);
          const perRow =
            unit === 'changeBits'
              ? Math.log2(1 + spread) * Math.sqrt(c.change)
              : unit === 'bits'
                ? Math.log2(1 + spread)
                : spread;
          const u = (c.rows * perRow) / c.trips;
          if (pick > 1 && pick > Math.floor(u / 2) && pick <= Math.ceil(u)) inSpan++;
          expect(cpuThreadsFor(op, d)).toBe(pick);
        }),
        { numRuns: 3000 },
      );
      // The cases reach picks inside the span, which the turns alone would not price.
      expect(inSpan).toBeGreaterThan(100);
    });

  it('equal pricing every count on the ops of gcn and spmv over real matrices, each preset', () => {
    const compile = (file: string) => {
      const module = runPipeline(compileSource(readFileSync(join(root, 'examples', file), 'utf8'), file).module!, {
        passes: [...DEFAULT_PIPELINE, 'lower-kernels'],
      });
      return plannedSpec(module, file, module.kernels[0]!.name);
    };
    const gcn = compile('gcn.dy');
    const spmv = compile('spmv.dy');
    const devices = ['this-machine', 'paper-1g1f', 'paper-2g2f', 'h200-cpu'].map(cpuOf);
    let picked = 0;
    for (const file of ['cora.cites', 'adder_dcop_05.mtx', 'bcsstk33.mtx', 'luxembourg_osm.mtx']) {
      const A = toCsr(loadMatrix(join(M, file)));
      const sparse = new Map([['A', sparseFeaturesOf(A, 2)]]);
      const problems = [
        bindProblem(gcn, {
          sparse,
          dims: new Map([
            ['n', A.rows],
            ['f', 64],
            ['h', 64],
            ['c', 16],
          ]),
          scalars: new Map(),
        }),
        bindProblem(spmv, {
          sparse,
          dims: new Map([
            ['m', A.rows],
            ['n', A.cols],
          ]),
          scalars: new Map(),
        }),
      ];
      for (const p of problems)
        for (const op of p.ops)
          for (const d of devices) {
            const t = cpuThreadsFor(op, d);
            expect(t).toBe(cpuThreadsByEveryCount(op, d));
            if (t > 1) picked++;
          }
    }
    // Not every pick is one thread: the search's other side is exercised on real ops too.
    expect(picked).toBeGreaterThan(0);
  });
});
