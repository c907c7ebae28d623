/**
 * classify: labels each tensor op with its pattern (gemm gemv spmv spmm sddmm
 * map reduce copy contract), the semiring of its core reduction, the sparse
 * operand that drives it, and the elementwise epilogue applied around it.
 * Later passes (costs, kernel lowering, partitioning) key on these labels.
 */
import { children, walkExpr, type BinOp, type Expr } from '../ir/expr.js';
import { kernelFacts, type OpInfo } from '../ir/facts.js';
import type { Attrs, Kernel, Module, Op, TensorOp, TensorOpKind } from '../ir/module.js';
import { topReductions } from '../ir/registry.js';
import type { Pass } from './manager.js';

type Reduce = Extract<Expr, { k: 'reduce' }>;

const BIN_NAMES: Record<BinOp, string> = {
  '+': 'add',
  '-': 'sub',
  '*': 'mul',
  '/': 'div',
  '<': 'lt',
  '<=': 'le',
  '>': 'gt',
  '>=': 'ge',
  '==': 'eq',
  '!=': 'ne',
  '&&': 'and',
  '||': 'or',
};

/**
 * The ops applied around `target`, innermost first. For a sparse result the
 * product with its own pattern operand (A[i,j] * ... in an SDDMM) is part of
 * the core, not an epilogue.
 */
function epilogueOf(root: Expr, target: Expr, pattern?: string): string[] {
  const path: Expr[] = [];
  const find = (n: Expr): boolean => {
    if (n === target) return true;
    const cs = n.k === 'reduce' ? [] : children(n);
    for (const c of cs) {
      if (find(c)) {
        path.push(n);
        return true;
      }
    }
    return false;
  };
  find(root);
  const isPatternLoad = (e: Expr): boolean => e.k === 'load' && e.tensor === pattern;
  return path
    .filter((n) => !(n.k === 'bin' && n.op === '*' && (isPatternLoad(n.lhs) || isPatternLoad(n.rhs))))
    .map((n) => (n.k === 'call' ? n.fn : n.k === 'bin' ? BIN_NAMES[n.op] : n.k === 'select' ? 'select' : n.k));
}

function semiringOf(r: Reduce): string {
  const add = r.op === 'sum' ? 'plus' : r.op === 'any' ? 'or' : r.op === 'all' ? 'and' : r.op;
  const b = r.body;
  if (b.k !== 'bin') return add;
  const mul =
    b.op === '*' ? 'times' : b.op === '+' ? 'plus' : b.op === '&&' ? 'and' : b.op === '||' ? 'or' : BIN_NAMES[b.op];
  return `${add}-${mul}`;
}

/** Accesses of tensors (rank >= 1) in a reduction's body; a tensor read twice counts twice. */
function tensorAccesses(r: Reduce, info: OpInfo): Extract<Expr, { k: 'load' }>[] {
  const out: Extract<Expr, { k: 'load' }>[] = [];
  walkExpr(r.body, (n) => {
    if (n.k === 'load' && n.idx.length > 0 && info.operands.has(n.tensor)) out.push(n);
  });
  return out;
}

export function classifyOp(info: OpInfo): { kind: TensorOpKind; attrs: Attrs } {
  const { op, type, sparsity } = info;
  const keep: Attrs = {};
  if (op.attrs['fused'] !== undefined) keep['fused'] = op.attrs['fused'];
  const tops = topReductions(op.expr);
  if (tops.length === 0) {
    if (op.expr.k === 'load' && op.expr.idx.length === op.indices.length) return { kind: 'copy', attrs: keep };
    const src = sparsity.patternSource;
    return { kind: 'map', attrs: src ? { ...keep, sparse: src } : keep };
  }
  if (tops.length > 1) return { kind: 'contract', attrs: keep };
  const r = tops[0]!;
  const attrs: Attrs = { ...keep, semiring: semiringOf(r) };
  const epi = epilogueOf(op.expr, r, sparsity.patternSource);
  if (epi.length > 0) attrs['epilogue'] = epi;
  const driver = sparsity.drivers.get(r);
  const rank = type.shape.length;
  if (type.format !== 'dense') {
    attrs['sparse'] = sparsity.patternSource!;
    return { kind: driver ? 'contract' : 'sddmm', attrs };
  }
  const operands = tensorAccesses(r, info);
  if (driver) {
    attrs['sparse'] = driver;
    const dense = operands.filter((l) => info.operands.get(l.tensor)?.type.format === 'dense');
    if (dense.length === 0) return { kind: 'reduce', attrs };
    if (dense.length === 1 && rank === 1) return { kind: 'spmv', attrs };
    if (dense.length === 1 && rank === 2) return { kind: 'spmm', attrs };
    return { kind: 'contract', attrs };
  }
  if (operands.length === 1) return { kind: 'reduce', attrs };
  if (operands.length === 2 && r.idx.length === 1) {
    if (rank === 1) return { kind: 'gemv', attrs };
    if (rank === 2) return { kind: 'gemm', attrs };
  }
  return { kind: 'contract', attrs };
}

export function classifyKernel(k: Kernel): Kernel {
  const facts = kernelFacts(k);
  const visit = (ops: Op[]): Op[] =>
    ops.map((op) => {
      if (op.kind === 'repeat') return { ...op, body: visit(op.body) };
      const { kind, attrs } = classifyOp(facts.ops.get(op.id)!);
      return { ...op, kind, attrs } satisfies TensorOp;
    });
  return { ...k, body: visit(k.body) };
}

export const classifyPass: Pass = {
  name: 'classify',
  description: 'label each op with its pattern, semiring, sparse driver and epilogue',
  run: (m: Module): Module => ({ kernels: m.kernels.map(classifyKernel) }),
};
