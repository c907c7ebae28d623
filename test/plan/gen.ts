/**
 * Generators and checks shared by the planner's property tests: random small
 * PlanProblems (a DAG of 1-6 ops in program order, built directly rather
 * than through the compiler) and random small SystemSpecs (one host CPU,
 * up to two GPU and two FPGA device specs, at most 4 instances in all).
 */
import { typicalImpls } from '../helpers/impls.js';
import fc from 'fast-check';
import { expect } from 'vitest';
import {
  choicesOf,
  evaluateChoices,
  idlePowerW,
  peakPowerW,
  planPareto,
  type PlanOptions,
} from '../../runtime/plan/dp.js';
import { ENERGY_SCOPES, perInputMs, type EnergyScope, type StreamLength } from '../../runtime/plan/figures.js';
import { enumerateMappings, exhaustivePareto } from '../../runtime/plan/exhaustive.js';
import type {
  Dtype,
  Mapping,
  Objective,
  PlanOp,
  PlanProblem,
  SparseFeatures,
  ValueRead,
} from '../../runtime/plan/types.js';
import type { CpuModelSpec, DeviceSpec, FpgaSpec, PeerLink, SystemSpec } from '../../runtime/system/types.js';

export const KINDS = ['spmv', 'spmm', 'sddmm', 'gemm', 'map', 'reduce', 'copy'] as const;
export const DTYPES: readonly Dtype[] = ['f32', 'f64', 'i32', 'i64', 'bool'];
export const OBJECTIVES: readonly Objective[] = ['throughput', 'energy', 'latency'];

/** A positive number m * 10^e, m in [1, 10) with two decimals: spans orders of magnitude, shrinks to small readable values. */
export const mag = (lo: number, hi: number): fc.Arbitrary<number> =>
  fc.tuple(fc.integer({ min: lo, max: hi }), fc.integer({ min: 100, max: 999 })).map(([e, m]) => (m / 100) * 10 ** e);

/**
 * Exponent ranges of the random numbers. `wide` spans many orders of
 * magnitude (one device usually wins everything); `narrow` keeps devices
 * and ops comparable and transfers significant, so multi-stage pipelines
 * and placement-dependent transfer costs reach the Pareto front.
 */
export type Spread = 'wide' | 'narrow';
const R = {
  wide: {
    rows: [0, 6],
    cols: [0, 6],
    mean: [-2, 3],
    maxOver: [-2, 3],
    items: [0, 7],
    flops: [0, 10],
    bytes: [1, 10],
    gathers: [0, 9],
    resultBytes: [0, 9],
    param: [0, 9],
    peak: [1, 4],
    bw: [1, 3],
    mem: [0, 3],
    linkBw: [0, 2],
    linkLat: [0, 2],
    tinyMemWeight: 1,
    hbmCh: [0, 1],
    maxTrips: 20,
    maxWidth: 64,
    maxCount: 3,
  },
  narrow: {
    rows: [4, 5],
    cols: [4, 5],
    mean: [0, 2],
    maxOver: [-1, 1],
    items: [5, 5],
    flops: [7, 7],
    bytes: [7, 7],
    gathers: [5, 5],
    resultBytes: [5, 6],
    param: [5, 6],
    peak: [2, 2],
    bw: [2, 2],
    mem: [1, 2],
    linkBw: [1, 2],
    linkLat: [0, 1],
    tinyMemWeight: 0,
    hbmCh: [0, 0],
    maxTrips: 3,
    maxWidth: 2,
    maxCount: 1,
  },
} as const satisfies Record<Spread, Record<string, readonly [number, number] | number>>;
const rng = (r: readonly [number, number]): fc.Arbitrary<number> => mag(r[0], r[1]);

const unit = (max = 1): fc.Arbitrary<number> => fc.double({ min: 0, max, noNaN: true, noDefaultInfinity: true });

export const featuresArb = (spread: Spread = 'wide'): fc.Arbitrary<SparseFeatures> =>
  fc
    .record({
      rows: rng(R[spread].rows),
      cols: rng(R[spread].cols),
      mean: rng(R[spread].mean),
      maxOver: rng(R[spread].maxOver),
      cv: fc.oneof(fc.constant(0), unit(5)),
      empty: unit(0.9),
      top1: unit(1),
      locality: fc.option(unit(1), { nil: undefined }),
    })
    .map(({ rows, cols, mean, maxOver, cv, empty, top1, locality }) => {
      const r = Math.max(1, Math.round(rows));
      const nnz = Math.max(1, Math.round(r * mean));
      const rowLenMean = nnz / r;
      const f: SparseFeatures = {
        rows: r,
        cols: Math.max(1, Math.round(cols)),
        nnz,
        rowLenMean,
        rowLenMax: Math.min(nnz, Math.max(Math.ceil(rowLenMean), Math.round(rowLenMean * (1 + maxOver)))),
        rowLenCv: cv,
        emptyRowFraction: empty,
        top1PctNnzShare: top1,
      };
      if (locality !== undefined) f.localityScore = locality;
      return f;
    });

interface OpDraft {
  kind: (typeof KINDS)[number];
  dtype: Dtype;
  items: number;
  flops: number;
  bytes: number;
  gathers: number;
  resultBytes: number;
  sparse: SparseFeatures | undefined;
  withFeatures: boolean;
  readParams: number[];
  readOps: number[];
  overwrite: number | undefined;
  groupTag: number | undefined;
  trips: number;
  /** Dense columns per stored entry of spmm/sddmm, at most. */
  maxWidth: number;
  inResults: boolean;
}

const opDraftArb = (spread: Spread): fc.Arbitrary<OpDraft> =>
  fc.record({
    kind: fc.constantFrom(...KINDS),
    dtype: fc.constantFrom(...DTYPES),
    items: rng(R[spread].items),
    flops: fc.oneof({ weight: 1, arbitrary: fc.constant(0) }, { weight: 4, arbitrary: rng(R[spread].flops) }),
    bytes: rng(R[spread].bytes),
    gathers: fc.oneof(fc.constant(0), rng(R[spread].gathers)),
    resultBytes: rng(R[spread].resultBytes),
    sparse: featuresArb(spread),
    withFeatures: fc.boolean(),
    readParams: fc.array(fc.nat(), { maxLength: 2 }),
    readOps: fc.array(fc.nat(), { maxLength: 3 }),
    overwrite: fc.option(fc.nat(), { nil: undefined, freq: 5 }),
    groupTag: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
    trips: fc.integer({ min: 1, max: R[spread].maxTrips }),
    maxWidth: fc.constant(R[spread].maxWidth),
    inResults: fc.boolean(),
  });

/** The shape of a problem without its numbers, so a training set can share it. */
export interface ProblemShape {
  params: { name: string; sparse: boolean }[];
  ops: Omit<PlanOp, 'items' | 'flops' | 'bytes' | 'gathers' | 'resultBytes' | 'sparse'>[];
  results: string[];
  /** Which ops carry sparse features. */
  hasFeatures: boolean[];
}

function build(params: { sparse: boolean; bytes: number }[], drafts: OpDraft[]): PlanProblem {
  const names = params.map((_, i) => `p${i}`);
  const ops: PlanOp[] = [];
  drafts.forEach((d, i) => {
    const reads: ValueRead[] = [];
    for (const k of new Set(d.readParams.map((x) => x % names.length)))
      reads.push({ value: names[k]!, from: { kind: 'param' } });
    if (i > 0)
      for (const k of new Set(d.readOps.map((x) => x % i)))
        reads.push({ value: ops[k]!.result, from: { kind: 'op', id: ops[k]!.id } });
    if (reads.length === 0) reads.push({ value: names[0]!, from: { kind: 'param' } });
    // Repeat groups: a maximal run of equal tags is one group named after its first op; its trips are the first op's.
    let start = i;
    while (d.groupTag !== undefined && start > 0 && drafts[start - 1]!.groupTag === d.groupTag) start--;
    const sparseKind = d.kind === 'spmv' || d.kind === 'spmm' || d.kind === 'sddmm';
    const feat = sparseKind || (d.kind === 'reduce' && d.withFeatures) ? d.sparse : undefined;
    // Derived from the draft (no arbitrary of its own, so the generated problems stay as they were): a column loop
    // of the width the gathers give an SpMM, and of up to maxWidth a GEMM's; a map or copy over a vector's rows.
    const columns =
      d.kind === 'spmm' || d.kind === 'gemm'
        ? 1 + (d.gathers % d.maxWidth)
        : d.kind === 'map' || d.kind === 'copy'
          ? Math.max(1, d.items)
          : 1;
    const op: PlanOp = {
      id: `op${i}`,
      kind: d.kind,
      result: d.overwrite !== undefined && i > 0 ? ops[d.overwrite % i]!.result : `v${i}`,
      dtype: d.dtype,
      reads,
      items: d.items,
      flops: d.flops,
      bytes: d.bytes,
      gathers: feat
        ? Math.round(feat.nnz * (d.kind === 'spmv' || d.kind === 'reduce' ? 1 : 1 + (d.gathers % d.maxWidth)))
        : d.gathers,
      loops: feat ? feat.nnz : Math.ceil(d.items / columns),
      columns,
      resultBytes: d.resultBytes,
      impls: typicalImpls(d.kind),
      trips: d.groupTag === undefined ? 1 : drafts[start]!.trips,
    };
    if (feat) op.sparse = feat;
    if (d.groupTag !== undefined) op.group = `g${start}`;
    ops.push(op);
  });
  const results = [...new Set(ops.filter((_, i) => drafts[i]!.inResults).map((o) => o.result))];
  return {
    kernel: 'k',
    paramBytes: new Map(params.map((p, i) => [names[i]!, p.bytes])),
    sparseParams: new Set(params.flatMap((p, i) => (p.sparse ? [names[i]!] : []))),
    results,
    ops,
  };
}

const paramArb = (spread: Spread) => fc.record({ sparse: fc.boolean(), bytes: rng(R[spread].param) });

export const problemArb = (maxOps = 6, spread: Spread = 'wide'): fc.Arbitrary<PlanProblem> =>
  fc
    .record({
      params: fc.array(paramArb(spread), { minLength: 1, maxLength: 3 }),
      ops: fc.array(opDraftArb(spread), { minLength: 1, maxLength: maxOps, size: 'max' }),
    })
    .map(({ params, ops }) => build(params, ops));

/** Several problems with one structure (ops, reads, groups, results) and independent numbers: a training set. */
export const problemFamilyArb = (
  size: { min: number; max: number },
  maxOps = 5,
  spread: Spread = 'wide',
): fc.Arbitrary<PlanProblem[]> =>
  fc
    .record({
      params: fc.array(paramArb(spread), { minLength: 1, maxLength: 3 }),
      ops: fc.array(opDraftArb(spread), { minLength: 1, maxLength: maxOps, size: 'max' }),
    })
    .chain(({ params, ops }) =>
      fc
        .array(
          fc.tuple(
            fc.array(rng(R[spread].param), { minLength: params.length, maxLength: params.length }),
            fc.array(
              fc.record({
                items: rng(R[spread].items),
                flops: rng(R[spread].flops),
                bytes: rng(R[spread].bytes),
                resultBytes: rng(R[spread].resultBytes),
                sparse: featuresArb(spread),
                gathers: rng(R[spread].gathers),
              }),
              {
                minLength: ops.length,
                maxLength: ops.length,
              },
            ),
          ),
          { minLength: size.min, maxLength: size.max },
        )
        .map((variants) =>
          variants.map(([pb, nums]) =>
            build(
              params.map((p, i) => ({ ...p, bytes: pb[i]! })),
              ops.map((d, i) => ({ ...d, ...nums[i]! })),
            ),
          ),
        ),
    );

// ---------------------------------------------------------------- systems

const peaks = (sp: Spread) =>
  fc.record({ f32: rng(R[sp].peak), f64: rng(R[sp].peak), i32: rng(R[sp].peak), i64: rng(R[sp].peak) });
/** idle <= waiting <= active: a waiting (powered-up) instance sits anywhere from its idle to its active draw. */
const power = fc
  .tuple(mag(0, 2), mag(0, 2), fc.constantFrom(0, 0.25, 0.5, 1))
  .map(([idle, extra, wait]) => ({ idlePowerW: idle, waitingPowerW: idle + wait * extra, activePowerW: idle + extra }));
/** Device memory, GB: usually ample, sometimes (wide) tiny, 1 KB .. 1 MB, so stages fail the memory check. */
const memoryGB = (sp: Spread) =>
  R[sp].tinyMemWeight > 0
    ? fc.oneof({ weight: 6, arbitrary: rng(R[sp].mem) }, { weight: R[sp].tinyMemWeight, arbitrary: mag(-6, -3) })
    : rng(R[sp].mem);
const hostLink = (sp: Spread) => fc.record({ bandwidthGBs: rng(R[sp].linkBw), latencyUs: rng(R[sp].linkLat) });

/** A fitted CPU model (what dype calibrate writes), coefficients over a few decades around those measured here. */
const cpuModelArb: fc.Arbitrary<CpuModelSpec> = fc.record({
  nsPerNnz: mag(-2, 1),
  nsPerGather: mag(-3, 0),
  nsPerRow: mag(-1, 1),
  nsPerItem: mag(-3, 0),
  nsPerMiss: mag(0, 2),
  nsPerByte: mag(-3, -1),
  cacheMB: mag(-1, 2),
  parallelEfficiency: fc.double({ min: 0, max: 1, noNaN: true }),
  dispatchUsPerThread: mag(-1, 2),
});

/** The host's root complex: absent (not a shared limit) or a bandwidth in the range of the links', so it sometimes binds. */
const rootComplex = (sp: Spread) => fc.option(rng(R[sp].linkBw), { nil: undefined });

const cpuArb = (sp: Spread): fc.Arbitrary<DeviceSpec> =>
  fc
    .record({
      peakGflops: peaks(sp),
      mem: rng(R[sp].bw),
      launch: fc.integer({ min: 0, max: 50 }),
      power,
      memoryGB: memoryGB(sp),
      threads: fc.integer({ min: 1, max: 64 }),
      cpuModel: fc.option(cpuModelArb, { nil: undefined }),
      root: rootComplex(sp),
    })
    .map((r) => ({
      id: 'cpu',
      kind: 'cpu',
      name: 'host',
      count: 1,
      peakGflops: r.peakGflops,
      memBandwidthGBs: r.mem,
      launchOverheadUs: r.launch,
      ...r.power,
      memoryGB: r.memoryGB,
      threads: r.threads,
      ...(r.cpuModel ? { cpuModel: r.cpuModel } : {}),
      ...(r.root !== undefined ? { rootComplexGBs: r.root } : {}),
    }));

/**
 * FPGA resources as fractions of an Alveo U280's: often one scale for all
 * (0.2: only the stream design and gemm fit; 0.6: one sparse design, not
 * two), else per resource, so any one of them can be the one that runs out.
 */
const U280 = { lut: 1_304_000, ff: 2_607_000, bram: 2016, uram: 960, dsp: 9024 };
const fraction = fc.constantFrom(0.05, 0.2, 0.35, 0.6, 1, 2);
const fractions = fc.oneof(
  fc.constantFrom(0.2, 0.6, 1, 2).map((x) => ({ lut: x, ff: x, bram: x, uram: x, dsp: x })),
  fc.record({ lut: fraction, ff: fraction, bram: fraction, uram: fraction, dsp: fraction }),
);
const fpgaBlock = (sp: Spread): fc.Arbitrary<FpgaSpec> =>
  fc
    .record({
      clockMHz: fc.integer({ min: 100, max: 500 }),
      hbmChannels: fc.integer({ min: 1, max: 32 }),
      ch: rng(R[sp].hbmCh),
      f: fractions,
    })
    .map(({ f, ...r }) => ({
      clockMHz: r.clockMHz,
      hbmChannels: r.hbmChannels,
      channelBandwidthGBs: r.ch,
      resources: {
        lut: Math.round(U280.lut * f.lut),
        ff: Math.round(U280.ff * f.ff),
        bram: Math.round(U280.bram * f.bram),
        uram: Math.round(U280.uram * f.uram),
        dsp: Math.round(U280.dsp * f.dsp),
      },
      bitstreamLoadMs: 1000,
    }));

const accelArb = (kind: 'gpu' | 'fpga', sp: Spread): fc.Arbitrary<Omit<DeviceSpec, 'id'>> =>
  fc
    .record({
      count: fc.integer({ min: 1, max: R[sp].maxCount }),
      peakGflops: peaks(sp),
      mem: rng(R[sp].bw),
      launch: fc.integer({ min: 0, max: 50 }),
      power,
      memoryGB: memoryGB(sp),
      hostLink: hostLink(sp),
      fpga: fpgaBlock(sp),
      // The optional model blocks (gpuModel, fpgaModel), as fractions of the datasheet figures.
      model: fc.option(
        fc.record({
          sustained: fc.double({ min: 0.3, max: 1, noNaN: true }),
          floorExtraUs: mag(-1, 2),
          l2CacheMB: mag(-1, 2),
        }),
        { nil: undefined },
      ),
    })
    .map((r) => {
      const d: Omit<DeviceSpec, 'id'> = {
        kind,
        name: kind,
        count: r.count,
        peakGflops: r.peakGflops,
        memBandwidthGBs: r.mem,
        launchOverheadUs: r.launch,
        ...r.power,
        memoryGB: r.memoryGB,
        hostLink: r.hostLink,
      };
      if (kind === 'fpga') d.fpga = r.fpga;
      if (r.model && kind === 'gpu')
        d.gpuModel = {
          effectiveBandwidthGBs: r.mem * r.model.sustained,
          sparseFloorUs: r.launch + r.model.floorExtraUs,
          queuedLaunchUs: r.launch / 2,
          laneStepNs: r.launch * 10,
          residentWarps: 1024 + Math.round(r.mem),
          rowChainNs: r.launch * 200,
          searchStepNs: r.launch * 30,
          l2CacheMB: r.model.l2CacheMB,
        };
      if (r.model && kind === 'fpga')
        d.fpgaModel = { effectiveBandwidthGBs: r.fpga.hbmChannels * r.fpga.channelBandwidthGBs * r.model.sustained };
      return d;
    });

const linkArb = (sp: Spread) =>
  fc.record({ a: fc.nat(), b: fc.nat(), bandwidthGBs: rng(R[sp].linkBw), latencyUs: rng(R[sp].linkLat) });

export interface SystemGen {
  /** Instances of accelerators in all (the CPU adds one). */
  maxAccel?: number;
  minGpuSpecs?: number;
  minFpgaSpecs?: number;
  spread?: Spread;
}

/** Trims counts so the accelerators have at most `max` instances, in order; drops specs left with none. */
function trim<T extends { count: number }>(ds: T[], max: number): T[] {
  let left = max;
  const out: T[] = [];
  for (const d of ds) {
    const c = Math.min(d.count, left);
    if (c <= 0) continue;
    left -= c;
    out.push({ ...d, count: c });
  }
  return out;
}

export const systemArb = (g: SystemGen = {}): fc.Arbitrary<SystemSpec> => {
  const maxAccel = g.maxAccel ?? 3;
  const minG = g.minGpuSpecs ?? 0;
  const minF = g.minFpgaSpecs ?? 0;
  const sp = g.spread ?? 'wide';
  return fc
    .record({
      cpu: cpuArb(sp),
      gpus: fc.array(accelArb('gpu', sp), { minLength: minG, maxLength: 2 }),
      fpgas: fc.array(accelArb('fpga', sp), { minLength: minF, maxLength: 2 }),
      links: fc.array(linkArb(sp), { maxLength: 4 }),
      fpgaFirst: fc.boolean(),
    })
    .map(({ cpu, gpus, fpgas, links, fpgaFirst }) => {
      const named = [
        ...gpus.map((d, i) => ({ ...d, id: `g${'ab'[i]}` })),
        ...fpgas.map((d, i) => ({ ...d, id: `f${'ab'[i]}` })),
      ];
      // Keep the required kinds' first specs within the instance budget.
      const required = [
        ...named.filter((d) => d.id === 'ga' && minG > 0),
        ...named.filter((d) => d.id === 'fa' && minF > 0),
      ];
      const rest = named.filter((d) => !required.includes(d));
      const ordered = fpgaFirst ? [...required, ...rest.reverse()] : [...required, ...rest];
      const accel = trim(
        ordered.map((d) => ({
          ...d,
          count: required.includes(d) ? Math.min(d.count, Math.max(1, maxAccel - (required.length - 1))) : d.count,
        })),
        maxAccel,
      ) as DeviceSpec[];
      const peerLinks: PeerLink[] = [];
      const seen = new Set<string>();
      if (accel.length > 0)
        for (const l of links) {
          const a = accel[l.a % accel.length]!;
          const b = accel[l.b % accel.length]!;
          if (a === b && a.count < 2) continue;
          const key = [a.id, b.id].sort().join('-');
          if (seen.has(key)) continue;
          seen.add(key);
          peerLinks.push({ a: a.id, b: b.id, bandwidthGBs: l.bandwidthGBs, latencyUs: l.latencyUs });
        }
      return { name: 's', description: '', devices: [cpu, ...accel], peerLinks, constraints: {} } satisfies SystemSpec;
    });
};

/** Stream lengths worth telling apart: one input (latency is all), two, the evaluation's twelve, the steady state. */
export const STREAMS: readonly StreamLength[] = [1, 2, 12, 'unbounded'];

/** The goal, and fractions that become a power cap and a latency bound once the problem's mappings are known. */
export interface OptsDraft {
  objective: Objective;
  energyScope: EnergyScope;
  streamLength: StreamLength;
  cap: number | undefined;
  bound: number | undefined;
}

export const optsDraftArb: fc.Arbitrary<OptsDraft> = fc.record({
  objective: fc.constantFrom(...OBJECTIVES),
  energyScope: fc.constantFrom(...ENERGY_SCOPES),
  streamLength: fc.constantFrom(...STREAMS),
  cap: fc.option(
    fc.integer({ min: 0, max: 110 }).map((x) => x / 100),
    { nil: undefined },
  ),
  bound: fc.option(
    fc.integer({ min: 0, max: 120 }).map((x) => x / 100),
    { nil: undefined },
  ),
});

/**
 * Turns the fractions into constraints that bite: the cap and the bound at a
 * quantile of the unconstrained mappings' powers and latencies (an actual
 * value when the fraction is <= 1, so the boundary cases `power == cap` and
 * `latency == bound` are exercised; above 1, a little slack).
 */
export function resolveOpts(sys: SystemSpec, p: PlanProblem, d: OptsDraft): PlanOptions {
  const o: PlanOptions = { objective: d.objective, energyScope: d.energyScope, streamLength: d.streamLength };
  if (d.cap === undefined && d.bound === undefined) return o;
  const all = enumerateMappings(sys, p, { ...o });
  const quantile = (xs: number[], q: number): number | undefined => {
    xs.sort((a, b) => a - b);
    return xs.length === 0
      ? undefined
      : q <= 1
        ? xs[Math.min(xs.length - 1, Math.floor(q * xs.length))]!
        : xs[xs.length - 1]! * q;
  };
  if (d.cap !== undefined) {
    // Below 0.05: under every mapping's power (the all-idle draw), so nothing is feasible.
    o.powerCapW =
      d.cap < 0.05
        ? idlePowerW(sys)
        : (quantile(
            all.map((m) => m.powerW),
            d.cap,
          ) ??
          peakPowerW(
            sys,
            sys.devices.map((x) => x.count),
          ));
  }
  if (d.bound !== undefined) {
    const b = quantile(
      all.map((m) => m.latencyMs),
      d.bound,
    );
    if (b !== undefined) o.latencyBoundMs = b;
  }
  return o;
}

export type Triple = [number, number, number];

/** A front's figures as the Pareto filter keys them: time per input over the stream, latency, energy in the planned scope. */
export function triples(ms: readonly Mapping[]): Triple[] {
  return ms
    .map((m) => [m.perInputMs, m.latencyMs, m.energyJ] as Triple)
    .sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
}

/**
 * The DP's front is exactly the exhaustive enumeration's, every mapping on
 * either is well formed and within the constraints, and each DP mapping's
 * figures are what its stage choices score. Returns the DP's front.
 */
export function expectExact(sys: SystemSpec, p: PlanProblem, opts: PlanOptions): Mapping[] {
  const dp = planPareto(sys, p, opts);
  const ex = exhaustivePareto(sys, p, opts);
  expect(triples(dp.pareto)).toEqual(triples(ex));
  for (const m of dp.pareto) {
    checkMapping(sys, p, opts, m);
    const again = evaluateChoices(sys, p, choicesOf(p, m), opts)!;
    expect([
      again.periodMs,
      again.latencyMs,
      again.perInputMs,
      again.deviceEnergyJ,
      again.systemEnergyJ,
      again.powerW,
    ]).toEqual([m.periodMs, m.latencyMs, m.perInputMs, m.deviceEnergyJ, m.systemEnergyJ, m.powerW]);
  }
  for (const m of ex) checkMapping(sys, p, opts, m);
  return dp.pareto;
}

/** The structural checks every mapping the planner returns must pass. */
export function checkMapping(sys: SystemSpec, p: PlanProblem, opts: PlanOptions, m: Mapping): void {
  // Every op exactly once, in program order, stages contiguous.
  expect(m.stages.flatMap((s) => s.ops)).toEqual(p.ops.map((o) => o.id));
  expect(m.stages.length).toBeGreaterThan(0);
  // No repeat group split across stages.
  const stageOf = new Map<string, number>();
  m.stages.forEach((s, i) => s.ops.forEach((id) => stageOf.set(id, i)));
  const groupStage = new Map<string, number>();
  for (const op of p.ops) {
    if (op.group === undefined) continue;
    const at = groupStage.get(op.group);
    if (at === undefined) groupStage.set(op.group, stageOf.get(op.id)!);
    else expect(stageOf.get(op.id), `group ${op.group} split`).toBe(at);
  }
  // Instances: named after their device, within its count, disjoint across stages.
  const used = sys.devices.map(() => 0);
  const taken = new Set<string>();
  for (const s of m.stages) {
    const di = sys.devices.findIndex((d) => d.id === s.device);
    expect(di).toBeGreaterThanOrEqual(0);
    const dev = sys.devices[di]!;
    expect(s.kind).toBe(dev.kind);
    expect(s.count).toBeGreaterThanOrEqual(1);
    expect(s.devices.length).toBe(s.count);
    for (const name of s.devices) {
      const idx = Number(name.slice(dev.id.length));
      expect(
        name.startsWith(dev.id) && Number.isInteger(idx) && idx >= 0 && idx < dev.count,
        `instance ${name} of ${dev.id} (count ${dev.count})`,
      ).toBe(true);
      expect(taken.has(name), `instance ${name} used by two stages`).toBe(false);
      taken.add(name);
    }
    used[di]! += s.count;
    expect(Object.keys(s.variants).sort()).toEqual([...s.ops].sort());
  }
  sys.devices.forEach((d, i) => expect(used[i]).toBeLessThanOrEqual(d.count));
  expect(m.powerW).toBe(peakPowerW(sys, used));
  if (opts.powerCapW !== undefined) expect(m.powerW).toBeLessThanOrEqual(opts.powerCapW);
  if (opts.latencyBoundMs !== undefined) expect(m.latencyMs).toBeLessThanOrEqual(opts.latencyBoundMs);
  if (opts.kinds) for (const s of m.stages) expect(opts.kinds).toContain(s.kind);
  // Within the instances the options allow, numbered from 0 (what a runtime whose backend sees fewer devices runs).
  for (const [id, cap] of Object.entries(opts.instances ?? {}))
    for (const s of m.stages.filter((x) => x.device === id))
      for (const name of s.devices)
        expect(Number(name.slice(id.length)), `instance ${name} over ${cap}`).toBeLessThan(cap);
  // Figures consistent with the stages: the period is the slowest stage's
  // share of the pipeline (compute, inbound or outbound transfers, which
  // overlap), the latency what one input spends in all stages.
  for (const s of m.stages) {
    expect(s.periodMs).toBeGreaterThanOrEqual(s.computeMs);
    expect(s.periodMs).toBeLessThanOrEqual(s.timeMs);
    expect(s.timeMs).toBeCloseTo(s.computeMs + s.transferMs, 9);
    expect(s.transferMs).toBeGreaterThanOrEqual(0);
  }
  // The root complex bounds the period when a period's host traffic takes it longer than the slowest stage.
  expect(m.periodMs).toBe(Math.max(...m.stages.map((s) => s.periodMs), m.rootComplexMs));
  expect(m.latencyMs).toBe(m.stages.reduce((a, s) => a + s.timeMs, 0));
  for (const x of [m.periodMs, m.latencyMs, m.energyJ, m.perInputMs, m.deviceEnergyJ])
    expect(Number.isFinite(x) && x > 0).toBe(true);
  // Figures counted as the options say: the stream, the scope.
  expect(m.streamLength).toBe(opts.streamLength);
  expect(m.perInputMs).toBe(perInputMs(m.periodMs, m.latencyMs, opts.streamLength));
  // Between the period and the latency (up to rounding: (L + (N - 1) P) / N with L = P need not give P exactly).
  expect(m.perInputMs).toBeGreaterThanOrEqual(Math.min(m.periodMs, m.latencyMs) * (1 - 1e-12));
  expect(m.perInputMs).toBeLessThanOrEqual(Math.max(m.periodMs, m.latencyMs) * (1 + 1e-12));
  expect(m.energyScope).toBe(opts.energyScope);
  expect(m.energyJ).toBe(opts.energyScope === 'device' ? m.deviceEnergyJ : m.systemEnergyJ);
  expect(m.systemEnergyJ).toBeGreaterThanOrEqual(m.deviceEnergyJ);
}
