/**
 * The fitted CPU model (cost.ts, DeviceSpec.cpuModel): its terms and how the
 * time follows them: per entry, gathered element, row and output; cache
 * misses only for scattered columns over a dense operand larger than the
 * cache; streamed bytes beyond the cache; threads through the parallel
 * efficiency, bounded by the longest row. Without the block the CPU keeps the
 * roofline.
 */
import { describe, expect, it } from 'vitest';
import { typicalImpls } from '../helpers/impls.js';
import { cpuThreadsFor, MIN_SPLIT_ROWS } from '../../runtime/catalogue/index.js';
import { CPU_CATALOGUE, denseTrips } from '../../runtime/catalogue/cpu.js';
import { cpuTerms, variantTimes } from '../../runtime/plan/cost.js';
import { rowChangeBits, type BranchHistory } from '../../runtime/plan/model.js';
import type { PlanOp, SparseFeatures } from '../../runtime/plan/types.js';
import type { CpuModelSpec, DeviceSpec } from '../../runtime/system/types.js';

const MODEL: CpuModelSpec = {
  nsPerNnz: 0.5,
  nsPerGather: 0.1,
  nsPerRow: 2,
  nsPerItem: 0.25,
  nsPerMiss: 40,
  nsPerByte: 0.05,
  cacheMB: 4,
};
const cpu = (cpuModel: CpuModelSpec | undefined, threads = 1): DeviceSpec => ({
  id: 'cpu',
  kind: 'cpu',
  name: 'h',
  count: 1,
  peakGflops: { f32: 100, f64: 50, i32: 50, i64: 25 },
  memBandwidthGBs: 20,
  launchOverheadUs: 3,
  idlePowerW: 1,
  waitingPowerW: 1,
  activePowerW: 2,
  memoryGB: 8,
  threads,
  ...(cpuModel ? { cpuModel } : {}),
});

const feats = (rows: number, perRow: number, localityScore: number, rowLenMax = perRow): SparseFeatures => ({
  rows,
  cols: rows,
  nnz: rows * perRow,
  rowLenMean: perRow,
  rowLenMax,
  rowLenCv: 0,
  emptyRowFraction: 0,
  top1PctNnzShare: 0.01,
  localityScore,
});

/** SpMM Y = A B with k dense columns (k = 1: SpMV), f32, in annotate-cost's counts. */
function spmm(f: SparseFeatures, k: number): PlanOp {
  return {
    id: 'op0',
    kind: k === 1 ? 'spmv' : 'spmm',
    result: 'Y',
    dtype: 'f32',
    reads: [],
    items: f.rows * k,
    flops: 2 * f.nnz * k,
    bytes: f.nnz * 8 + (f.rows + 1) * 4 + f.cols * k * 4 + f.rows * k * 4,
    gathers: f.nnz * k,
    loops: f.nnz,
    columns: k,
    resultBytes: f.rows * k * 4,
    sparse: f,
    trips: 1,
    impls: typicalImpls(k === 1 ? 'spmv' : 'spmm'),
  };
}
const ms = (op: PlanOp, d: DeviceSpec): number => variantTimes(op, d)[0]!.ms;

/** An elementwise map over 1e6 f32 elements (1 flop and 8 bytes each). */
const map: PlanOp = {
  id: 'm',
  kind: 'map',
  result: 'z',
  dtype: 'f32',
  reads: [],
  items: 1e6,
  flops: 1e6,
  bytes: 8e6,
  gathers: 0,
  // A vector's: its row loop is its column loop.
  loops: 1,
  columns: 1e6,
  resultBytes: 4e6,
  trips: 1,
  impls: typicalImpls('map'),
};

describe('CPU model terms', () => {
  it('a small problem is entries, gathers, rows and outputs, plus the launch', () => {
    const op = spmm(feats(1_000, 8, 0), 16);
    const t = cpuTerms(op, MODEL.cacheMB);
    expect(t).toEqual({
      nnz: 8_000,
      gathers: 128_000,
      rows: 1_000,
      items: 16_000,
      missLines: 0,
      dramBytes: 0,
      blockEntries: 8_000,
      branchRows: 0,
      dotElements: 0,
      dotRowElements: 0,
    });
    expect(ms(op, cpu(MODEL))).toBeCloseTo((8_000 * 0.5 + 128_000 * 0.1 + 1_000 * 2 + 16_000 * 0.25) / 1e6 + 0.003, 12);
    // An SpMV's entries update one column: no block term.
    expect(cpuTerms(spmm(feats(1_000, 8, 0), 1), MODEL.cacheMB).blockEntries).toBe(0);
    expect(ms(op, cpu({ ...MODEL, nsPerBlockEntry: 3 })) - ms(op, cpu(MODEL))).toBeCloseTo((8_000 * 3) / 1e6, 12);
  });

  it("an SDDMM's gathered elements are also its in-order dot products' elements (nsPerDotElement); an SpMM's are not", () => {
    const f = feats(1_000, 8, 0);
    const sddmm: PlanOp = { ...spmm(f, 16), kind: 'sddmm', items: f.nnz, impls: typicalImpls('sddmm') };
    expect(cpuTerms(sddmm, MODEL.cacheMB).dotElements).toBe(128_000);
    expect(cpuTerms(spmm(f, 16), MODEL.cacheMB).dotElements).toBe(0);
    expect(ms(sddmm, cpu({ ...MODEL, nsPerDotElement: 0.5 })) - ms(sddmm, cpu(MODEL))).toBeCloseTo(
      (128_000 * 0.5) / 1e6,
      12,
    );
    expect(ms(spmm(f, 16), cpu({ ...MODEL, nsPerDotElement: 0.5 }))).toBe(ms(spmm(f, 16), cpu(MODEL)));
  });

  it("an SDDMM reads its row-side operand's d elements once a row (nsPerDotRowElement): rows x d, the same for any row length", () => {
    const sddmm = (f: ReturnType<typeof feats>, d: number): PlanOp => ({
      ...spmm(f, d),
      kind: 'sddmm',
      items: f.nnz,
      impls: typicalImpls('sddmm'),
    });
    expect(cpuTerms(sddmm(feats(1_000, 8, 0), 16), MODEL.cacheMB).dotRowElements).toBe(16_000);
    expect(cpuTerms(sddmm(feats(1_000, 2, 0), 32), MODEL.cacheMB).dotRowElements).toBe(32_000);
    expect(cpuTerms(spmm(feats(1_000, 8, 0), 16), MODEL.cacheMB).dotRowElements).toBe(0);
    // The same entries in rows of 2 instead of 16 pay the per-row part 8 times over.
    const short = sddmm(feats(8_000, 2, 0), 16);
    const long = sddmm(feats(1_000, 16, 0), 16);
    const extra = (op: PlanOp): number => ms(op, cpu({ ...MODEL, nsPerDotRowElement: 0.5 })) - ms(op, cpu(MODEL));
    expect(extra(short)).toBeCloseTo((8_000 * 16 * 0.5) / 1e6, 12);
    expect(extra(short) / extra(long)).toBeCloseTo(8, 9);
    // Empty rows read no row of Q.
    expect(cpuTerms(sddmm({ ...feats(1_000, 8, 0), emptyRowFraction: 0.25 }, 16), MODEL.cacheMB).dotRowElements).toBe(
      12_000,
    );
  });

  /** An SpMM over rows of mean 2 whose lengths spread by `cv`, 0.6 of them a change from the row before. */
  const spreadOp = (rows: number, cv: number): PlanOp =>
    spmm({ ...feats(rows, 2, 0.5), rowLenCv: cv, rowLenChangeFraction: 0.6 }, 1);
  /** Each case's branch rows are that share of its changing rows: [rows, cv, threads, share missed]. */
  const expectBranchRows = (h: BranchHistory, cases: [number, number, number, number][]): void => {
    for (const [rows, cv, threads, share] of cases)
      expect([rows, cv, threads, cpuTerms(spreadOp(rows, cv), 4, h, threads).branchRows]).toEqual([
        rows,
        cv,
        threads,
        expect.closeTo(rows * 0.6 * share, 6),
      ]);
  };

  it('rows whose length changes miss the branch predictor past its history: none up to H, all from 2H', () => {
    const op = (rows: number, change?: number): PlanOp =>
      spmm({ ...feats(rows, 2, 0.5), ...(change !== undefined ? { rowLenChangeFraction: change } : {}) }, 1);
    const m = { ...MODEL, nsPerBranchMiss: 5, branchHistoryRows: 10_000 };
    const h = { unit: 'rows', size: 10_000 } as const;
    expect(cpuTerms(op(10_000, 0.6), 4, h).branchRows).toBe(0);
    expect(cpuTerms(op(15_000, 0.6), 4, h).branchRows).toBeCloseTo(15_000 * 0.6 * 0.5, 9);
    expect(cpuTerms(op(40_000, 0.6), 4, h).branchRows).toBeCloseTo(40_000 * 0.6, 9);
    // Features without the change share take MODEL.defaultRowLenChange (0.5).
    expect(cpuTerms(op(40_000), 4, h).branchRows).toBeCloseTo(40_000 * 0.5, 9);
    // Counted in rows of the whole op (the older form), the history does not depend on the threads.
    expect(cpuTerms(op(15_000, 0.6), 4, h, 2).branchRows).toBeCloseTo(15_000 * 0.6 * 0.5, 9);
    // Without a fitted history the term is 0, whatever nsPerBranchMiss says.
    expect(cpuTerms(op(40_000, 0.6), 4).branchRows).toBe(0);
    expect(ms(op(40_000, 0.6), cpu(m)) - ms(op(40_000, 0.6), cpu(MODEL))).toBeCloseTo((40_000 * 0.6 * 5) / 1e6, 12);
    expect(ms(op(40_000, 0), cpu(m))).toBe(ms(op(40_000, 0), cpu(MODEL)));
  });

  it('counted in trips, the history covers rows x min(sd, mean) of one thread: each core learns its own rows', () => {
    // Rows of mean 2 and sd 0.5: one uncertain trip a row... of 0.5 (the sd); of mean 2 and sd 6: 2 (the mean).
    const op = (rows: number, cv: number): PlanOp => spreadOp(rows, cv);
    const h = { unit: 'trips', size: 10_000 } as const;
    expectBranchRows(h, [
      [20_000, 0.25, 1, 0], // 10,000 trips: learnt
      [30_000, 0.25, 1, 0.5], // 15,000
      [40_000, 0.25, 1, 1], // 20,000: all missed
      [7_500, 3, 1, 0.5], // capped at the mean: 15,000
      // On 2 threads each core holds half the trips; on 4, a quarter.
      [40_000, 0.25, 2, 0],
      [60_000, 0.25, 2, 0.5],
      [60_000, 0.25, 4, 0],
      // Uniform rows have no uncertain trip.
      [1_000_000, 0, 1, 0],
    ]);
    // The model prices the thread's share of the smaller term: 2 threads of a 40,000-row op save its branch misses.
    const m = { ...MODEL, nsPerBranchMiss: 5, branchHistoryTrips: 10_000, parallelEfficiency: 1 };
    const two = { ...cpu(m, 2) };
    const at = (d: DeviceSpec, t: number): number => CPU_CATALOGUE['nnz-split'].ms(op(40_000, 0.25), d, t);
    expect(at(two, 1) - at(cpu(MODEL, 2), 1)).toBeCloseTo((40_000 * 0.6 * 5) / 1e6, 12);
    expect(at(two, 2)).toBeCloseTo(at(cpu(MODEL, 2), 2), 12);
  });

  it('counted in bits, the history covers rows x log2(1 + min(sd, mean)) of one thread', () => {
    // Rows of mean 2: sd 1 gives 1 bit a row, sd 3 is capped at the mean (log2 3 bits), sd 0 none.
    const op = (rows: number, cv: number): PlanOp => spreadOp(rows, cv);
    const capped = 15_000 / Math.log2(3); // rows holding 15,000 bits at log2(3) a row
    expectBranchRows({ unit: 'bits', size: 10_000 }, [
      [10_000, 0.5, 1, 0], // 10,000 bits: learnt
      [15_000, 0.5, 1, 0.5],
      [20_000, 0.5, 1, 1], // all missed
      [capped, 1.5, 1, 0.5],
      [capped, 40, 1, 0.5],
      // Each core holds its own thread's bits.
      [20_000, 0.5, 2, 0],
      [30_000, 0.5, 2, 0.5],
      [1_000_000, 0, 1, 0],
    ]);
    // The form the system file gives is the one priced: 10,000 rows of sd 3 capped at the mean 2 hold
    // 10,000 x log2(3) bits and 20,000 trips; against 10,000 of either, 58.5% of the rows miss in bits, all in trips.
    const spread = op(10_000, 1.5);
    const m = { ...MODEL, nsPerBranchMiss: 5, parallelEfficiency: 1 };
    const price = (extra: object): number => CPU_CATALOGUE['nnz-split'].ms(spread, cpu({ ...m, ...extra }), 1);
    expect(price({ branchHistoryBits: 10_000 * Math.log2(3) })).toBeCloseTo(price({ branchHistoryTrips: 20_000 }), 12);
    expect(price({ branchHistoryTrips: 10_000 }) - price({ branchHistoryBits: 10_000 })).toBeCloseTo(
      (10_000 * 0.6 * (2 - Math.log2(3)) * 5) / 1e6,
      12,
    );
  });

  it('counted in bits weighed by changes, the history covers rowLengthBits x sqrt(share of rows that change)', () => {
    // Rows of mean 2 and sd 1 (1 bit a row), of which 0.6 change length (spreadOp): sqrt(0.6) bits a row.
    const w = Math.sqrt(0.6);
    expect(rowChangeBits(spreadOp(10_000, 0.5).sparse!)).toBeCloseTo(10_000 * w, 9);
    expectBranchRows({ unit: 'changeBits', size: 10_000 * w }, [
      [10_000, 0.5, 1, 0], // as many weighed bits as the history: learnt
      [15_000, 0.5, 1, 0.5],
      [20_000, 0.5, 1, 1],
      [30_000, 0.5, 2, 0.5], // each core holds its own thread's
    ]);
    // A file's form is the one priced: against the same history counted unweighed, 10,000 bits are past it.
    const m = { ...MODEL, nsPerBranchMiss: 5, parallelEfficiency: 1 };
    const price = (extra: object): number =>
      CPU_CATALOGUE['nnz-split'].ms(spreadOp(10_000, 0.5), cpu({ ...m, ...extra }), 1);
    expect(price({ branchHistoryBits: 10_000 * w }) - price({ branchHistoryChangeBits: 10_000 * w })).toBeCloseTo(
      (10_000 * 0.6 * (1 / w - 1) * 5) / 1e6,
      12,
    );
  });

  it(`an op of fewer than ${MIN_SPLIT_ROWS} rows runs on one thread whatever the count, as the executors run it`, () => {
    const few = spmm(feats(MIN_SPLIT_ROWS - 1, 64, 0.5), 1);
    const enough = spmm(feats(MIN_SPLIT_ROWS, 64, 0.5), 1);
    for (const d of [cpu(undefined, 4), cpu({ ...MODEL, parallelEfficiency: 1 }, 4)]) {
      expect(cpuThreadsFor(few, d)).toBe(1);
      const split = CPU_CATALOGUE['nnz-split'];
      expect(split.ms(few, d, 4)).toBe(split.ms(few, d, 1));
      expect(split.ms(enough, d, 4)).toBeLessThan(split.ms(enough, d, 1));
    }
    expect(cpuThreadsFor(enough, cpu(undefined, 4))).toBe(4);
  });

  it('column locality matters only once the dense operand outgrows the cache', () => {
    const small = (loc: number): number => ms(spmm(feats(20_000, 8, loc), 16), cpu(MODEL)); // B: 1.28 MB
    expect(small(0)).toBe(small(1));
    const big = (loc: number): PlanOp => spmm(feats(200_000, 8, loc), 16); // B: 12.8 MB
    const dense = 200_000 * 16 * 4;
    expect(cpuTerms(big(0), 4).missLines).toBeCloseTo(1_600_000 * (1 - 4e6 / dense), 6);
    expect(cpuTerms(big(1), 4).missLines).toBe(0);
    expect(ms(big(0), cpu(MODEL)) - ms(big(1), cpu(MODEL))).toBeCloseTo((1_600_000 * (1 - 4e6 / dense) * 40) / 1e6, 9);
    // A 128-byte row (K = 32, f32) is two lines; a 4-byte one (SpMV) still one.
    expect(cpuTerms(spmm(feats(200_000, 8, 0), 32), 4).missLines).toBeCloseTo(
      2 * 1_600_000 * (1 - 4e6 / (200_000 * 128)),
      6,
    );
    expect(cpuTerms(spmm(feats(2_000_000, 8, 0), 1), 4).missLines).toBeCloseTo(16_000_000 * (1 - 4e6 / 8e6), 6);
  });

  it('bytes count beyond the cache only', () => {
    expect(cpuTerms(spmm(feats(1_000, 8, 1), 1), 4).dramBytes).toBe(0);
    const op = spmm(feats(1_000_000, 8, 1), 1);
    expect(cpuTerms(op, 4).dramBytes).toBeCloseTo(op.bytes - 4e6, 3);
  });

  it('threads divide the work by 1 + (T - 1) e and add the dispatch', () => {
    const op = spmm(feats(100_000, 8, 0.5), 1);
    const one = ms(op, cpu(MODEL)) - 0.003;
    expect(ms(op, cpu({ ...MODEL, parallelEfficiency: 1 }, 4)) - 0.003).toBeCloseTo(one / 4, 12);
    expect(ms(op, cpu({ ...MODEL, parallelEfficiency: 0.5, dispatchUsPerThread: 10 }, 3)) - 0.003).toBeCloseTo(
      one / 2 + 0.02,
      12,
    );
    // Omitted thread figures: linear speedup, no dispatch.
    expect(ms(op, cpu(MODEL, 2)) - 0.003).toBeCloseTo(one / 2, 12);
  });

  it('each op runs on the thread count its model prices lowest: a small SpMV on one, a large one on all', () => {
    const d = cpu({ ...MODEL, parallelEfficiency: 0.5, dispatchUsPerThread: 10 }, 4);
    // Work w ns at T threads: w / (1 + (T - 1) / 2) + (T - 1) 10 us. 2 threads pay from w = 60 us.
    const small = spmm(feats(1_000, 8, 0.5), 1);
    const large = spmm(feats(1_000_000, 8, 0.5), 1);
    expect(cpuThreadsFor(small, d)).toBe(1);
    expect(cpuThreadsFor(large, d)).toBe(4);
    expect(cpuThreadsFor(large, d, 2)).toBe(2);
    // The price is the chosen count's: the least of the model's times over 1..T (launch 3 us, work w at one thread).
    for (const op of [small, large, spmm(feats(20_000, 8, 0.5), 1)]) {
      const w = ms(op, { ...d, threads: 1 }) - 0.003;
      const each = [1, 2, 3, 4].map((t) => w / (1 + (t - 1) * 0.5) + (t - 1) * 0.01);
      expect(ms(op, d) - 0.003).toBeCloseTo(Math.min(...each), 12);
      expect(each[cpuThreadsFor(op, d) - 1]).toBe(Math.min(...each));
    }
    // w = 42.3 us: 2 threads pay (38.2 us), a third does not (41.2 us: a third of the work saved for 10 us more).
    const mid = spmm(feats(6_000, 8, 0.5), 1);
    expect(cpuThreadsFor(mid, d)).toBe(2);
    // The roofline has no dispatch cost: every op takes all threads.
    expect(cpuThreadsFor(small, cpu(undefined, 4))).toBe(4);
  });

  it('one long row bounds the threaded time (rows are split by nnz)', () => {
    const skewed = spmm(feats(100_000, 8, 0.5, 600_000), 1);
    const one = ms(skewed, cpu(MODEL)) - 0.003;
    expect(ms(skewed, cpu(MODEL, 8)) - 0.003).toBeCloseTo(one * (600_000 / 800_000), 12);
  });

  it('dense ops keep the roofline, and without the block every op does', () => {
    expect(ms(map, cpu(MODEL))).toBe(ms(map, cpu(undefined)));
    const op = spmm(feats(10_000, 8, 0.5), 16);
    expect(ms(op, cpu(undefined))).not.toBe(ms(op, cpu(MODEL)));
  });

  it('dense ops take the fitted dense figures where the model has them: flops and bytes at their rates', () => {
    const dense = {
      ...MODEL,
      nsPerDenseFlop: 0.05,
      nsPerDenseByte: 0.1,
      parallelEfficiency: 0.5,
      dispatchUsPerThread: 10,
    };
    expect(ms(map, cpu(dense))).toBeCloseTo(0.003 + (1e6 * 0.05 + 8e6 * 0.1) / 1e6, 12);
    // At 2 threads: the work over 1 + e, plus one dispatch (0.85 ms of work: 2 threads pay).
    expect(ms(map, cpu(dense, 2))).toBeCloseTo(0.003 + 0.85 / 1.5 + 0.01, 12);
    // Sparse ops are unchanged by the dense figures.
    const op = spmm(feats(10_000, 8, 0.5), 16);
    expect(ms(op, cpu(dense))).toBe(ms(op, cpu({ ...MODEL, parallelEfficiency: 0.5, dispatchUsPerThread: 10 })));
  });

  it("and their loop trips where the fit has them: a block of columns a trip, the narrow block's trip priced alike", () => {
    const dense = { ...MODEL, nsPerDenseFlop: 0, nsPerDenseByte: 0.01, nsPerDenseTrip: 0.5, denseBlockBytes: 128 };
    /** GEMM of n rows, k in and h out, in annotate-cost's counts. */
    const gemm = (n: number, k: number, h: number, dtype: 'f32' | 'f64' = 'f32'): PlanOp => ({
      ...map,
      kind: 'gemm',
      dtype,
      items: n * h,
      flops: 2 * n * k * h,
      bytes: (n * k + k * h + n * h) * 4,
      loops: n * k,
      columns: h,
    });
    // 32 f32 lanes a block of 128 bytes: h = 16 and 32 take one trip per row and k, h = 128 four, h = 40 two.
    expect([16, 32, 40, 128].map((h) => denseTrips(gemm(1000, 64, h), 128))).toEqual([64e3, 64e3, 128e3, 256e3]);
    expect(denseTrips(gemm(1000, 64, 32, 'f64'), 128)).toBe(128e3);
    // The same flops at twice the width take half the trips, so less time.
    const narrow = gemm(100_000, 16, 16);
    const wide = gemm(50_000, 16, 32);
    expect(narrow.flops).toBe(wide.flops);
    const t = (op: PlanOp): number => 0.003 + (op.bytes * 0.01 + denseTrips(op, 128) * 0.5) / 1e6;
    expect(ms(narrow, cpu(dense))).toBeCloseTo(t(narrow), 12);
    expect(ms(wide, cpu(dense))).toBeCloseTo(t(wide), 12);
    expect(ms(narrow, cpu(dense))).toBeGreaterThan(ms(wide, cpu(dense)) * 1.5);
    // A vector's map: its row loop in blocks (1e6 / 32 trips).
    expect(ms(map, cpu(dense))).toBeCloseTo(0.003 + (8e6 * 0.01 + 31_250 * 0.5) / 1e6, 12);
    // Sparse ops are unchanged by the dense figures.
    const op = spmm(feats(10_000, 8, 0.5), 16);
    expect(ms(op, cpu(dense))).toBe(ms(op, cpu(MODEL)));
  });
});
