/**
 * The cost models' qualitative claims (docs/COST-MODEL.md): row skew hurts
 * row-per-thread but not merge-path, warp-per-row wins on long rows and
 * loses on short ones, FPGA stages need their designs to fit one bitstream,
 * and transfers take a peer link in one hop or two host hops without one.
 */
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { typicalImpls } from '../helpers/impls.js';
import { heft, singleKind } from '../../runtime/plan/baselines.js';
import { variantTimes } from '../../runtime/plan/cost.js';
import { adaptiveDenseLanes, adaptiveLanes, denseVector, QUEUED_AFTER_FIRST } from '../../runtime/catalogue/gpu.js';
import { FPGA_UNIT_COSTS, fpgaDesignResources, fpgaProjectResources } from '../../runtime/plan/fpga-designs.js';
import { evaluateChoices, planPareto } from '../../runtime/plan/dp.js';
import { splitExchangeMs, transferMs } from '../../runtime/plan/stage.js';
import type { PlanOp, PlanProblem, SparseFeatures } from '../../runtime/plan/types.js';
import { SampledFeatures } from '../../runtime/features/quick.js';
import { copyFeatures } from '../../runtime/guards/features.js';
import { toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { ROOT } from '../cuda/helpers.js';
import type { DeviceSpec } from '../../runtime/system/types.js';
import { CPU, features, fpga, GPU, spmv, system, U280 } from './devices.js';
import { featuresArb } from './gen.js';
import { goal, STEADY } from '../helpers/goal.js';

/** What the launches a schedule's stub queues after its first add on GPU, ms. */
const queuedMs = (impl: 'adaptive-rows' | 'merge-path'): number =>
  (QUEUED_AFTER_FIRST[impl] * (GPU.gpuModel?.queuedLaunchUs ?? GPU.launchOverheadUs)) / 1e3;

const ms = (op: PlanOp, d: DeviceSpec, variant: string): number => {
  const v = variantTimes(op, d).find((x) => x.variant === variant);
  expect(v, `${variant} on ${d.kind}`).toBeDefined();
  return v!.ms;
};

describe('adaptive-rows', () => {
  it("takes the smallest power of two of lanes at least the mean row length, within 2..32 (the CUDA stub's rule)", () => {
    const lanes = (rows: number, nnz: number): number => adaptiveLanes({ ...features(rows, 1, 0, 1, 0), rows, nnz });
    expect([lanes(300, 450), lanes(472, 1314), lanes(198, 2742), lanes(40, 1600), lanes(0, 0), lanes(10, 20)]).toEqual([
      2, 4, 16, 32, 2, 2,
    ]);
  });

  it("over an SpMM's columns: the lanes of the dense width; narrow widths beat warp-per-row, wide ones tie it", () => {
    expect([1, 2, 5, 16, 17, 32, 128].map((k) => adaptiveDenseLanes(k))).toEqual([1, 2, 8, 16, 32, 32, 32]);
    // With float4 columns a lane: K / 4 lanes, rounded up to a power of two.
    expect([4, 16, 20, 64, 128, 256].map((k) => adaptiveDenseLanes(k, 4))).toEqual([1, 4, 8, 16, 32, 32]);
    expect([8, 12, 30, 32].map((k) => denseVector(k, 'f32'))).toEqual([4, 4, 1, 4]);
    expect([8, 7, 30].map((k) => denseVector(k, 'f64'))).toEqual([2, 1, 2]);
    expect(denseVector(16, 'i32')).toBe(1);
    const f = features(200_000, 8, 0, 8, 0.01);
    const spmm = (k: number): PlanOp => ({ ...spmv(f), kind: 'spmm', gathers: f.nnz * k, impls: typicalImpls('spmm') });
    expect(ms(spmm(4), GPU, 'adaptive-rows')).toBeLessThan(ms(spmm(4), GPU, 'warp-per-row') / 4);
    // No row of more than 1024 entries: no long-row pass, so the same time.
    expect(ms(spmm(64), GPU, 'adaptive-rows')).toBeCloseTo(ms(spmm(64), GPU, 'warp-per-row'), 9);
    // A row of more than denseLongEntries (1024) entries runs on a block of its own: the longest row a warp's groups
    // wait for is at most 1024 entries (without the cap, 2000 entries over a mean of 500 would price 4x, not 2x).
    const withMax = (max: number): PlanOp => {
      const g = features(20_000, 500, 3, max, 0.05);
      return { ...spmv(g), kind: 'spmm', gathers: g.nnz * 16, impls: typicalImpls('spmm') };
    };
    // The same lockstep time; the 2000-entry row's block is the long-row pass, queued only where such a row is.
    expect(ms(withMax(2000), GPU, 'adaptive-rows') - queuedMs('adaptive-rows')).toBeCloseTo(
      ms(withMax(1024), GPU, 'adaptive-rows'),
      9,
    );
    expect(ms(withMax(1024), GPU, 'adaptive-rows')).toBeGreaterThan(ms(withMax(600), GPU, 'adaptive-rows'));
  });

  it('prices a sampled features record (its statistics are getters) as its plain copy, in both forms', () => {
    const m = toCsr(loadMatrix(join(ROOT, '..', 'shared', 'data', 'matrices', 'jazz.mtx')));
    const sampled = new SampledFeatures(m);
    const plain = copyFeatures(sampled);
    for (const f of [sampled, plain]) expect(Number.isFinite(f.rowLenCv)).toBe(true);
    const asSpmm = (f: SparseFeatures): PlanOp => ({
      ...spmv(f),
      kind: 'spmm',
      gathers: f.nnz * 16,
      impls: typicalImpls('spmm'),
    });
    for (const op of [spmv, asSpmm]) {
      const a = ms(op(sampled), GPU, 'adaptive-rows');
      expect(Number.isFinite(a)).toBe(true);
      expect(a).toBeCloseTo(ms(op(plain), GPU, 'adaptive-rows'), 12);
    }
  });

  it('beats warp-per-row on short rows and matches it on uniform rows of a warp or more', () => {
    const short = spmv(features(1_000_000, 3, 0.3, 8, 0.01));
    expect(ms(short, GPU, 'adaptive-rows')).toBeLessThan(ms(short, GPU, 'warp-per-row') / 4);
    const exact = spmv(features(100_000, 64, 0, 64, 0.01));
    // Its schedule the same, and no row past 32 steps of its 32 lanes: its stub queues nothing more.
    expect(ms(exact, GPU, 'adaptive-rows')).toBeCloseTo(ms(exact, GPU, 'warp-per-row'), 9);
  });

  it('pays for its long-row pass (a memset and a launch) only where a row is longer than its groups keep', () => {
    // A mean of 3 entries: groups of 4 lanes, which keep rows of up to 128 entries.
    const upTo = (max: number): PlanOp => spmv(features(1_000_000, 3, 0.3, max, 0.01));
    const pass = ms(upTo(129), GPU, 'adaptive-rows') - ms(upTo(128), GPU, 'adaptive-rows');
    expect(pass).toBeGreaterThanOrEqual(queuedMs('adaptive-rows'));
    expect(pass).toBeLessThan(queuedMs('adaptive-rows') * 1.01);
  });
});

describe('GPU SpMV variants and row skew', () => {
  const uniform = spmv(features(1_000_000, 10, 0, 10, 0.01));
  const skewed = spmv(features(1_000_000, 10, 3, 5000, 0.2));

  it('row-per-thread slows down with skew (same nnz and rows); merge-path does not', () => {
    expect(ms(skewed, GPU, 'row-per-thread')).toBeGreaterThan(2 * ms(uniform, GPU, 'row-per-thread'));
    expect(ms(skewed, GPU, 'merge-path')).toBe(ms(uniform, GPU, 'merge-path'));
    // So merge-path is the pick on the skewed matrix, not on the uniform one.
    const best = (op: PlanOp): string => variantTimes(op, GPU).reduce((a, b) => (b.ms < a.ms ? b : a)).variant;
    expect(best(uniform)).toBe('row-per-thread');
    expect(best(skewed)).toBe('merge-path');
  });

  it('for any features: merge-path ignores the skew features, row-per-thread never gets faster with more cv', () => {
    fc.assert(
      fc.property(
        featuresArb(),
        fc.double({ min: 0, max: 5, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (f, cv2, top1) => {
          const a = spmv(f);
          const b = spmv({ ...f, rowLenCv: cv2, top1PctNnzShare: top1, rowLenMax: f.rowLenMax * 3 });
          expect(ms(b, GPU, 'merge-path')).toBe(ms(a, GPU, 'merge-path'));
          const lo = spmv({ ...f, rowLenCv: Math.min(f.rowLenCv, cv2) });
          const hi = spmv({ ...f, rowLenCv: Math.max(f.rowLenCv, cv2) });
          expect(ms(hi, GPU, 'row-per-thread')).toBeGreaterThanOrEqual(ms(lo, GPU, 'row-per-thread'));
        },
      ),
      { seed: 7, numRuns: 200 },
    );
  });

  it('warp-per-row beats row-per-thread on long near-uniform rows and loses on very short rows', () => {
    const long = spmv(features(100_000, 512, 0.1, 600, 0.012));
    expect(ms(long, GPU, 'warp-per-row')).toBeLessThan(ms(long, GPU, 'row-per-thread'));
    const short = spmv(features(1_000_000, 2, 0, 2, 0.01));
    expect(ms(short, GPU, 'warp-per-row')).toBeGreaterThan(4 * ms(short, GPU, 'row-per-thread'));
    // Perfectly uniform long rows (cv 0, max = mean): the model has no
    // coalescing term, so the two tie; warp-per-row is never worse there.
    const exact = spmv(features(100_000, 512, 0, 512, 0.01));
    expect(ms(exact, GPU, 'warp-per-row')).toBeLessThanOrEqual(ms(exact, GPU, 'row-per-thread'));
  });
});

describe('FPGA resources', () => {
  const f = features(100_000, 10, 0.5, 40, 0.02);
  const spmm: PlanOp = {
    ...spmv(f, 'op1'),
    kind: 'spmm',
    impls: typicalImpls('spmm'),
    gathers: f.nnz * 64,
    columns: 64,
    flops: 2 * f.nnz * 64,
    resultBytes: f.rows * 64 * 4,
  };
  const scale: PlanOp = {
    id: 'op2',
    kind: 'map',
    result: 'z',
    dtype: 'f32',
    reads: [{ value: 'op0_y', from: { kind: 'op', id: 'op0' } }],
    items: f.rows,
    flops: f.rows,
    bytes: f.rows * 8,
    gathers: 0,
    // A vector's map: its row loop is its column loop.
    loops: 1,
    columns: f.rows,
    resultBytes: f.rows * 4,
    trips: 1,
    impls: typicalImpls('map'),
  };
  const problem = (ops: PlanOp[]): PlanProblem => ({
    kernel: 'k',
    paramBytes: new Map([
      ['A', f.nnz * 8],
      ['x', f.rows * 4],
    ]),
    sparseParams: new Set(['A']),
    results: [ops[ops.length - 1]!.result],
    ops,
  });
  const whole = (p: PlanProblem): { start: number; end: number; device: string; count: number }[] => [
    { start: 0, end: p.ops.length, device: 'fpga', count: 1 },
  ];

  it('a stage is infeasible when its designs and the shell together exceed the device; exactly enough fits', () => {
    const justSpmv = system([CPU, fpga(fpgaProjectResources([fpgaDesignResources('spmv')]))]);
    const one = problem([spmv(f)]);
    expect(evaluateChoices(justSpmv, one, whole(one), STEADY)).toBeDefined();
    // spmv + the stream design of the map: one bitstream needs both.
    const two = problem([spmv(f), scale]);
    expect(evaluateChoices(justSpmv, two, whole(two), STEADY)).toBeUndefined();
    const out = planPareto(justSpmv, two, { ...goal('throughput'), kinds: ['fpga'] });
    expect(out.pareto).toEqual([]);
    expect(out.infeasible.join('\n')).toContain(
      `kernels serpens-spmv+stream and the shell need ${FPGA_UNIT_COSTS.shell.lut + fpgaDesignResources('spmv').lut + fpgaDesignResources('stream').lut} LUT on fpga, which has ${FPGA_UNIT_COSTS.shell.lut + fpgaDesignResources('spmv').lut}`,
    );
    // The spmm design alone does not fit either.
    const mm = problem([spmm]);
    expect(evaluateChoices(justSpmv, mm, whole(mm), STEADY)).toBeUndefined();
  });

  it('counts a kernel instance per op: two ops of one design need it twice', () => {
    const mm = problem([spmm, { ...spmm, id: 'op3', result: 'w' }]);
    const r = fpgaProjectResources([fpgaDesignResources('spmm')]);
    expect(evaluateChoices(system([CPU, fpga(r)]), problem([spmm]), whole(problem([spmm])), STEADY)).toBeDefined();
    expect(evaluateChoices(system([CPU, fpga(r)]), mm, whole(mm), STEADY)).toBeUndefined();
  });

  it('designs that fit one at a time but not together force separate FPGA stages', () => {
    // 0.4 of a U280: spmv or spmm fits with the shell (URAM 256 each of 384), both need 512.
    const r = {
      lut: U280.lut * 0.4,
      ff: U280.ff * 0.4,
      bram: U280.bram * 0.4,
      uram: U280.uram * 0.4,
      dsp: U280.dsp * 0.4,
    };
    const sys = system([CPU, fpga(r, 2)]);
    const p = problem([
      spmv(f),
      {
        ...spmm,
        reads: [
          { value: 'A', from: { kind: 'param' } },
          { value: 'op0_y', from: { kind: 'op', id: 'op0' } },
        ],
      },
    ]);
    expect(evaluateChoices(sys, p, [{ start: 0, end: 2, device: 'fpga', count: 1 }], STEADY)).toBeUndefined();
    expect(evaluateChoices(sys, p, [{ start: 0, end: 2, device: 'fpga', count: 2 }], STEADY)).toBeUndefined();
    const split = evaluateChoices(
      sys,
      p,
      [
        { start: 0, end: 1, device: 'fpga', count: 1 },
        { start: 1, end: 2, device: 'fpga', count: 1 },
      ],
      STEADY,
    );
    expect(split).toBeDefined();
    const only = singleKind(sys, p, 'fpga', goal('throughput'));
    expect(only?.stages.map((s) => s.ops)).toEqual([['op0'], ['op1']]);
    expect(only?.stages.map((s) => s.devices)).toEqual([['fpga0'], ['fpga1']]);
  });
});

describe('transfers', () => {
  const F = fpga(U280);
  const link = { a: 'gpu', b: 'fpga', bandwidthGBs: 10, latencyUs: 10 };
  const hop = (d: DeviceSpec, bytes: number): number =>
    d.hostLink!.latencyUs / 1e3 + (bytes / (d.hostLink!.bandwidthGBs * 1e9)) * 1e3;

  it('GPU -> FPGA is one hop over a peer link, else the two host hops in turn', () => {
    const bytes = 64e6;
    const peer = link.latencyUs / 1e3 + (bytes / (link.bandwidthGBs * 1e9)) * 1e3;
    const linked = system([CPU, GPU, F], [link]);
    const bare = system([CPU, GPU, F]);
    expect(transferMs(linked, GPU, F, bytes)).toBe(peer);
    expect(transferMs(linked, F, GPU, bytes)).toBe(peer);
    expect(transferMs(bare, GPU, F, bytes)).toBe(hop(GPU, bytes) + hop(F, bytes));
    expect(transferMs(bare, F, GPU, bytes)).toBe(hop(F, bytes) + hop(GPU, bytes));
    // Host ends: one hop, or nothing for host to host.
    expect(transferMs(bare, undefined, F, bytes)).toBe(hop(F, bytes));
    expect(transferMs(bare, GPU, CPU, bytes)).toBe(hop(GPU, bytes));
    expect(transferMs(bare, CPU, undefined, bytes)).toBe(0);
    expect(transferMs(linked, GPU, F, 0)).toBe(0);
  });

  it("a stage reading a GPU stage's result on the FPGA pays exactly that transfer", () => {
    const f = features(100_000, 10, 0.5, 40, 0.02);
    const op0 = spmv(f);
    const op1: PlanOp = {
      id: 'op1',
      kind: 'map',
      result: 'z',
      dtype: 'f32',
      reads: [{ value: op0.result, from: { kind: 'op', id: 'op0' } }],
      items: f.rows,
      flops: f.rows,
      bytes: f.rows * 8,
      gathers: 0,
      // A vector's map: its row loop is its column loop.
      loops: 1,
      columns: f.rows,
      resultBytes: f.rows * 4,
      trips: 1,
      impls: typicalImpls('map'),
    };
    const p: PlanProblem = {
      kernel: 'k',
      paramBytes: new Map([
        ['A', f.nnz * 8],
        ['x', f.rows * 4],
      ]),
      sparseParams: new Set(['A']),
      results: [],
      ops: [op0, op1],
    };
    const choices = [
      { start: 0, end: 1, device: 'gpu', count: 1 },
      { start: 1, end: 2, device: 'fpga', count: 1 },
    ];
    const linked = evaluateChoices(system([CPU, GPU, F], [link]), p, choices, STEADY)!;
    const bare = evaluateChoices(system([CPU, GPU, F]), p, choices, STEADY)!;
    expect(linked.stages[1]!.transferMs).toBe(
      link.latencyUs / 1e3 + (op0.resultBytes / (link.bandwidthGBs * 1e9)) * 1e3,
    );
    expect(bare.stages[1]!.transferMs).toBe(hop(GPU, op0.resultBytes) + hop(F, op0.resultBytes));
    expect(bare.latencyMs).toBeGreaterThan(linked.latencyMs);
    // The GPU stage itself is unaffected.
    expect(bare.stages[0]).toEqual(linked.stages[0]);
  });
});

describe('dtypes a device cannot run', () => {
  // peakGflops 0 for a dtype means the device cannot compute in it: an op
  // with flops in that dtype is infeasible there, while a flop-free op (a
  // copy) is costed by its bytes alone. Either way no plan is NaN or infinite.
  it('never yields a NaN or infinite plan, and never computes on that device', () => {
    const gpuNoF64: DeviceSpec = { ...GPU, peakGflops: { ...GPU.peakGflops, f64: 0 } };
    const sys = system([gpuNoF64, CPU]);
    for (const flops of [0, 1e6]) {
      const p: PlanProblem = {
        kernel: 'k',
        paramBytes: new Map([['x', 1e3]]),
        sparseParams: new Set(),
        results: ['y'],
        ops: [
          {
            id: 'op0',
            kind: 'copy',
            result: 'y',
            dtype: 'f64',
            reads: [{ value: 'x', from: { kind: 'param' } }],
            items: 1e6,
            flops,
            bytes: 1e9,
            gathers: 0,
            loops: 1,
            columns: 1e6,
            resultBytes: 1e3,
            trips: 1,
            impls: typicalImpls('copy'),
          },
        ],
      };
      const finite = (m: { periodMs: number; latencyMs: number; energyJ: number }): boolean =>
        [m.periodMs, m.latencyMs, m.energyJ].every(Number.isFinite);
      const out = planPareto(sys, p, goal('throughput'));
      expect(out.pareto.length).toBeGreaterThan(0);
      for (const m of out.pareto)
        expect(finite(m), `${flops} flops: ${m.periodMs} ms on ${m.stages[0]!.device}`).toBe(true);
      if (flops > 0) for (const m of out.pareto) expect(m.stages[0]!.device).toBe('cpu');
      const g = singleKind(sys, p, 'gpu', goal('throughput'));
      if (g) expect(finite(g)).toBe(true);
      expect(finite(heft(sys, p, STEADY)!)).toBe(true);
    }
  });
});

describe('stages split over several instances', () => {
  const G2: DeviceSpec = { ...GPU, count: 2, hostLink: { bandwidthGBs: 25, latencyUs: 10 } };
  const peer = { a: 'gpu', b: 'gpu', bandwidthGBs: 20, latencyUs: 10 };
  const f = features(100_000, 8, 0.5, 40, 0.02);
  const problem = (ops: PlanOp[], g = f): PlanProblem => ({
    kernel: 'k',
    paramBytes: new Map([
      ['A', g.nnz * 8],
      ['x', g.rows * 4],
    ]),
    sparseParams: new Set(['A']),
    results: [ops[ops.length - 1]!.result],
    ops,
  });

  it('an SpMV chain split over two GPUs all-gathers the vector the second SpMV gathers; one GPU exchanges nothing', () => {
    const sys = system([CPU, G2], [peer]);
    const second = {
      ...spmv(f, 'op1'),
      reads: [
        { value: 'A', from: { kind: 'param' } },
        { value: 'op0_y', from: { kind: 'op', id: 'op0' } },
      ],
    } as PlanOp;
    const p = problem([spmv(f), second]);
    const allGather = transferMs(sys, G2, G2, (f.rows * 4) / 2);
    expect(splitExchangeMs(sys, p.ops, G2, 1)).toBe(0);
    expect(splitExchangeMs(sys, p.ops, G2, 2)).toBeCloseTo(allGather, 12);
    // The first op gathers only a parameter, which each instance receives whole: nothing to exchange.
    expect(splitExchangeMs(sys, [p.ops[0]!], G2, 2)).toBe(0);
  });

  it('a repeat region split over k instances exchanges its loop-carried vector between trips, and the split then costs more than it saves on a small graph', () => {
    const sys = system([CPU, G2], [peer]);
    const small = features(2_000, 8, 0.5, 40, 0.02);
    const it20 = { ...spmv(small), trips: 20 };
    const p = problem([it20], small);
    expect(splitExchangeMs(sys, p.ops, G2, 2)).toBeCloseTo(19 * transferMs(sys, G2, G2, (small.rows * 4) / 2), 12);
    const one = evaluateChoices(sys, p, [{ start: 0, end: 1, device: 'gpu', count: 1 }], STEADY)!;
    const two = evaluateChoices(sys, p, [{ start: 0, end: 1, device: 'gpu', count: 2 }], STEADY)!;
    expect(two.periodMs).toBeGreaterThan(one.periodMs);
    expect(planPareto(sys, p, goal('throughput')).pareto[0]!.stages[0]!.count).toBe(1);
  });
});
