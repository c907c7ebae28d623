/**
 * The planner's data: a kernel's ops with symbolic work (PlanSpec, written by
 * the compiler and stored in plan.json), the same bound to the numbers of
 * one input (PlanProblem), and mappings of ops onto pipeline stages of
 * devices with their predicted period, latency and energy.
 */
import type { OpImpls } from '../catalogue/index.js';
import type { DeviceKind } from '../system/types.js';
import type { Figures } from './figures.js';

export type Dtype = 'f32' | 'f64' | 'i32' | 'i64' | 'bool';

/** Where an op reads a value from: a kernel parameter, or an earlier op. */
export interface ValueRead {
  value: string;
  from: { kind: 'param' } | { kind: 'op'; id: string };
}

export interface PlanOpSpec {
  id: string;
  /** The classify label: spmv, spmm, sddmm, gemm, gemv, map, reduce, copy, contract. */
  kind: string;
  result: string;
  dtype: Dtype;
  reads: ValueRead[];
  /** Symbolic work counts from annotate-cost. */
  items: string;
  flops: string;
  bytes: string;
  gathers: string;
  /**
   * Trips of the op's innermost loop with its column loop taken whole, and the column loop's range (1 where there
   * is none): a CPU kernel runs the columns in blocks of vector lanes (runtime/catalogue/cpu.ts `denseTrips`).
   */
  loops: string;
  columns: string;
  /** Size of the result in bytes (symbolic). */
  resultBytes: string;
  /** The sparse parameter whose pattern drives or shapes this op, for skew features. */
  sparse?: string;
  /**
   * Enclosing repeat region and its trip count (literal or scalar parameter name); for a
   * convergence loop (`until`) the count is the maximum and the planner costs expected trips
   * (runtime/plan/bind.ts `expectedTrips`).
   */
  group?: { id: string; trips: number | string; until?: boolean };
  /**
   * The repeat regions around `group` when it is nested, outermost first: the op runs the product of every
   * enclosing region's trips, and a stage holds the outermost region whole (a cut inside it would split a loop
   * that runs within one stage).
   */
  enclosing?: { id: string; trips: number | string; until?: boolean }[];
  semiring?: string;
  /** The implementations codegen emitted for this op, per device kind (runtime/catalogue). */
  impls: OpImpls;
}

export interface PlanSpec {
  kernel: string;
  params: { name: string; sparse: boolean; bytes: string }[];
  results: string[];
  ops: PlanOpSpec[];
}

/** Row-structure features of a sparse input the cost models use (tiers 0-2). */
export interface SparseFeatures {
  rows: number;
  cols: number;
  nnz: number;
  rowLenMean: number;
  rowLenMax: number;
  rowLenCv: number;
  emptyRowFraction: number;
  top1PctNnzShare: number;
  /** Fraction of near-consecutive column indices (tier 2); 0.5 when unknown. */
  localityScore?: number;
  /** Share of rows whose length differs from the previous row's (tier 1); MODEL.defaultRowLenChange when unknown. */
  rowLenChangeFraction?: number;
  /**
   * The farthest column from its row over the sampled rows, / max(rows, cols) (tier 2); unknown: no band (the GPU
   * model's L2 reuse then spans the whole dense operand).
   */
  bandwidthEstimateNorm?: number;
}

/** The fields every features record holds, in record order. */
export const REQUIRED_FEATURES = [
  'rows',
  'cols',
  'nnz',
  'rowLenMean',
  'rowLenMax',
  'rowLenCv',
  'emptyRowFraction',
  'top1PctNnzShare',
] as const satisfies readonly (keyof SparseFeatures)[];
/** The fields a features record may lack (the models then assume a default). */
export const OPTIONAL_FEATURES = [
  'localityScore',
  'rowLenChangeFraction',
  'bandwidthEstimateNorm',
] as const satisfies readonly (keyof SparseFeatures)[];
/** A field of SparseFeatures in neither list makes this a type error (code that reads every field relies on them). */
type Unlisted = Exclude<keyof SparseFeatures, (typeof REQUIRED_FEATURES)[number] | (typeof OPTIONAL_FEATURES)[number]>;
export const EVERY_FEATURE_LISTED: [Unlisted] extends [never] ? true : never = true;

export interface PlanOp {
  id: string;
  kind: string;
  result: string;
  dtype: Dtype;
  reads: ValueRead[];
  items: number;
  flops: number;
  bytes: number;
  gathers: number;
  /** PlanOpSpec's loops and columns, bound. */
  loops: number;
  columns: number;
  resultBytes: number;
  sparse?: SparseFeatures;
  /** The outermost repeat region around the op: stages are cut between regions, never inside one. */
  group?: string;
  /** Times the op runs per input: the product of its enclosing regions' trips. */
  trips: number;
  impls: OpImpls;
}

export interface PlanProblem {
  kernel: string;
  /** Bytes of each parameter as given (they start in host memory). */
  paramBytes: Map<string, number>;
  /** Parameters stored sparse (split by rows across instances rather than broadcast). */
  sparseParams: Set<string>;
  results: string[];
  ops: PlanOp[];
}

/** One pipeline stage: consecutive ops on `count` instances of one device kind. */
export interface Stage {
  ops: string[];
  device: string;
  kind: DeviceKind;
  count: number;
  /** Device instances, e.g. gpu0, gpu1. */
  devices: string[];
  /** Implementation (runtime/catalogue) chosen per op. */
  variants: Record<string, string>;
  /** Kernel time of the stage's ops, all trips, on its instances (a split stage's exchanges and synchronisation included). */
  computeMs: number;
  /** A split stage's fixed cost of synchronising its instances after every op and trip (part of computeMs; 0 unsplit). */
  syncMs: number;
  /** Bytes one input's transfers into, out of and within the stage move across the host's root complex. */
  rootBytes: number;
  /** Inbound plus outbound transfers. */
  transferMs: number;
  /** What one input spends in the stage: compute plus transfers (adds up to the latency). */
  timeMs: number;
  /**
   * What the stage adds to the pipeline period: transfers of the next and
   * previous inputs overlap this one's compute (DMA/copy engines), so the
   * longest of compute, inbound and outbound.
   */
  periodMs: number;
}

/** A mapping and its figures (runtime/plan/figures.ts says how each is put together). */
export interface Mapping extends Figures {
  stages: Stage[];
  /** Peak power of the devices as used (active), the rest idle, W. */
  powerW: number;
}

export type Objective = 'throughput' | 'energy' | 'latency';
