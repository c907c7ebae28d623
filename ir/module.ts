/**
 * The graph-level IR: a module of kernels; a kernel is a list of ops over
 * named tensor values. Each tensor op computes the whole of one value from an
 * index-notation expression (Jacobi semantics: it reads the values that held
 * before it). A `repeat` op holds a region whose assignments carry over to
 * the next trip; with `until` it stops early once a value stops changing. Names are mutable slots rather than SSA values so that
 * loop-carried tensors need no phi nodes; def-use edges are recovered by
 * ir/graph.ts.
 */
import type { Span } from './diagnostics.js';
import type { Expr } from './expr.js';
import type { LoopFunc } from './loops.js';
import type { TensorType } from './types.js';

export type AttrValue = string | number | boolean | AttrValue[];
export type Attrs = Record<string, AttrValue>;

/** Labels given by the classify pass; `stmt` is an op not yet classified. */
export const TENSOR_OP_KINDS = [
  'stmt',
  'copy',
  'map',
  'reduce',
  'gemv',
  'gemm',
  'spmv',
  'spmm',
  'sddmm',
  'contract',
] as const;
export type TensorOpKind = (typeof TENSOR_OP_KINDS)[number];

export interface TensorOp {
  kind: TensorOpKind;
  /** Stable id, unique within the kernel, kept by every pass. */
  id: string;
  result: string;
  /** Index variables of the left side, in order (empty for a scalar). */
  indices: string[];
  expr: Expr;
  /** Undefined until infer-types for temporaries; always set for results. */
  type: TensorType | undefined;
  attrs: Attrs;
  span?: Span;
}

export type RepeatCount = { kind: 'lit'; value: number } | { kind: 'param'; name: string };

/**
 * A repeat's stop test: after each trip, compare `value` with what it held
 * before the trip; stop when every element is identical (`within` absent) or
 * when the L1 norm of the change, sum |new - old|, is at most `within`.
 * `count` stays the maximum number of trips.
 */
export interface Until {
  value: string;
  within?: number;
}

export interface RepeatOp {
  kind: 'repeat';
  id: string;
  count: RepeatCount;
  until?: Until;
  body: Op[];
  attrs: Attrs;
  span?: Span;
}

export type Op = TensorOp | RepeatOp;

export interface ValueDecl {
  name: string;
  type: TensorType;
  span?: Span;
}

export interface Kernel {
  name: string;
  params: ValueDecl[];
  results: ValueDecl[];
  body: Op[];
  /** Kernel-level loop IR of each tensor op, in program order (set by lower-kernels). */
  loops?: LoopFunc[];
  span?: Span;
}

export interface Module {
  kernels: Kernel[];
}

export function isTensorOp(op: Op): op is TensorOp {
  return op.kind !== 'repeat';
}

/** Every tensor op in program order, looking inside repeat regions. */
export function tensorOps(ops: readonly Op[]): TensorOp[] {
  const out: TensorOp[] = [];
  const visit = (list: readonly Op[]): void => {
    for (const op of list) {
      if (op.kind === 'repeat') visit(op.body);
      else out.push(op);
    }
  };
  visit(ops);
  return out;
}

export function findKernel(m: Module, name: string): Kernel | undefined {
  return m.kernels.find((k) => k.name === name);
}

/** Deep copy, so passes never share mutable structure with their input. */
export function cloneModule(m: Module): Module {
  return structuredClone(m);
}

/** Rebuilds a region bottom-up, letting `f` replace each tensor op list. */
export function mapRegions(ops: readonly Op[], f: (ops: Op[]) => Op[]): Op[] {
  const inner = ops.map((op) => (op.kind === 'repeat' ? { ...op, body: mapRegions(op.body, f) } : op));
  return f(inner);
}
