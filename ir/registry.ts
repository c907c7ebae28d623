/**
 * The op registry: every op kind declared once, as data: what it means, the
 * attributes it may carry, and the structural rule the verifier enforces.
 * Passes that add attributes register them in COMMON_ATTRS or on the kind.
 */
import { containsReduce, walkExpr, type Expr } from './expr.js';
import type { Sparsity } from './infer.js';
import type { TensorOp, TensorOpKind } from './module.js';
import type { TensorType } from './types.js';

export type AttrKind = 'string' | 'number' | 'bool' | 'string[]';

/** Facts the verifier derives for an op before asking its kind's rule. */
export interface OpFacts {
  type: TensorType;
  sparsity: Sparsity;
  /** Reductions not nested inside another reduction. */
  topReductions: Extract<Expr, { k: 'reduce' }>[];
}

export interface OpSpec {
  kind: TensorOpKind | 'repeat';
  summary: string;
  /** The operands and result, as a reader of the IR should picture them. */
  signature: string;
  attrs: Record<string, AttrKind>;
  /** Returns a problem, or undefined when the op fits its kind. */
  verify?: (op: TensorOp, f: OpFacts) => string | undefined;
}

/** Attributes any tensor op may carry. */
export const COMMON_ATTRS: Record<string, AttrKind> = {
  /** Statements (by result name) merged into this op by fuse-elementwise, in order. */
  fused: 'string[]',
  /** Elementwise functions applied after the core reduction. */
  epilogue: 'string[]',
  /** Symbolic work counts from annotate-cost, over feature symbols such as nnz(A) and dims. */
  items: 'string',
  flops: 'string',
  reads: 'string',
  writes: 'string',
  gathers: 'string',
  /** The innermost loop's trips with the column loop whole, and the column loop's range (a CPU kernel's blocks). */
  loops: 'string',
  columns: 'string',
  /** From the partition pass: pipeline stage, device instances, kernel variant. */
  stage: 'number',
  devices: 'string[]',
  variant: 'string',
  /** From build-guards: per guarded partition, `p<id>:<instances>` this op runs on. */
  guards: 'string[]',
};

const CORE_ATTRS: Record<string, AttrKind> = {
  /** Sparse operand that drives the core reduction or gives the pattern. */
  sparse: 'string',
  /** (add, multiply) of the core reduction, e.g. plus-times, min-plus. */
  semiring: 'string',
};

const rank = (f: OpFacts): number => f.type.shape.length;
const driven = (f: OpFacts): boolean => f.topReductions.some((r) => f.sparsity.drivers.has(r));
const need = (ok: boolean, msg: string): string | undefined => (ok ? undefined : msg);

export const OP_REGISTRY: Record<TensorOpKind | 'repeat', OpSpec> = {
  stmt: { kind: 'stmt', summary: 'a tensor statement not yet classified', signature: 'T[idx] = expr', attrs: {} },
  copy: {
    kind: 'copy',
    summary: 'copies (possibly permuting) one tensor',
    signature: 'T[idx] = S[perm(idx)]',
    attrs: {},
    verify: (op) => need(op.expr.k === 'load', 'a copy must read exactly one tensor element'),
  },
  map: {
    kind: 'map',
    summary: 'elementwise function of its operands, dense or at a sparse pattern',
    signature: 'T[idx] = f(operands[idx...])',
    attrs: CORE_ATTRS,
    verify: (op) => need(!containsReduce(op.expr), 'a map must not reduce'),
  },
  reduce: {
    kind: 'reduce',
    summary: 'row/column reduction of one tensor',
    signature: 'T[i] = op(j: f(S[i, j]))',
    attrs: CORE_ATTRS,
    verify: (_op, f) => need(f.topReductions.length > 0, 'a reduce must contain a reduction'),
  },
  gemv: {
    kind: 'gemv',
    summary: 'dense matrix times dense vector',
    signature: 'y[i] = sum(j: M[i, j] * x[j])',
    attrs: CORE_ATTRS,
    verify: (_op, f) =>
      need(
        rank(f) === 1 && f.topReductions.length > 0 && !driven(f),
        'a gemv has a rank-1 result and a dense reduction',
      ),
  },
  gemm: {
    kind: 'gemm',
    summary: 'dense matrix product',
    signature: 'C[i, k] = sum(j: X[i, j] * W[j, k])',
    attrs: CORE_ATTRS,
    verify: (_op, f) =>
      need(
        rank(f) === 2 && f.type.format === 'dense' && f.topReductions.length > 0 && !driven(f),
        'a gemm has a dense rank-2 result and a dense reduction',
      ),
  },
  spmv: {
    kind: 'spmv',
    summary: 'sparse matrix times dense vector over a semiring',
    signature: 'y[i] = add(j: mul(A[i, j], x[j]))',
    attrs: CORE_ATTRS,
    verify: (_op, f) =>
      need(rank(f) === 1 && driven(f), 'an spmv has a rank-1 result and a reduction over a sparse operand'),
  },
  spmm: {
    kind: 'spmm',
    summary: 'sparse matrix times dense matrix over a semiring',
    signature: 'Y[i, k] = add(j: mul(A[i, j], B[j, k]))',
    attrs: CORE_ATTRS,
    verify: (_op, f) =>
      need(
        rank(f) === 2 && f.type.format === 'dense' && driven(f),
        'an spmm has a dense rank-2 result and a reduction over a sparse operand',
      ),
  },
  sddmm: {
    kind: 'sddmm',
    summary: 'dense-dense product sampled at a sparse pattern',
    signature: 'S[i, j] = A[i, j] * sum(k: Q[i, k] * K[j, k])',
    attrs: CORE_ATTRS,
    verify: (_op, f) =>
      need(f.type.format !== 'dense' && f.topReductions.length > 0, 'an sddmm has a sparse result and a reduction'),
  },
  contract: {
    kind: 'contract',
    summary: 'any other reduction (generic index-notation contraction)',
    signature: 'T[idx] = expr with reductions',
    attrs: CORE_ATTRS,
    verify: (op) => need(containsReduce(op.expr), 'a contract must contain a reduction'),
  },
  repeat: {
    kind: 'repeat',
    summary:
      'runs its region N times (with until: at most N, stopping once the watched value stops changing); values assigned inside carry to the next trip',
    signature: 'repeat N [until %v stable | until %v within TOL] { ops }',
    attrs: {},
  },
};

export function allowedAttrs(kind: TensorOpKind | 'repeat'): Record<string, AttrKind> {
  return kind === 'repeat' ? OP_REGISTRY.repeat.attrs : { ...COMMON_ATTRS, ...OP_REGISTRY[kind].attrs };
}

export function topReductions(e: Expr): Extract<Expr, { k: 'reduce' }>[] {
  const out: Extract<Expr, { k: 'reduce' }>[] = [];
  walkExpr(e, (n, scope) => {
    if (n.k === 'reduce' && scope.length === 0) out.push(n);
  });
  return out;
}
