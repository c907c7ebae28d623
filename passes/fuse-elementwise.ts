/**
 * fuse-elementwise: an elementwise op (map or copy) that is the only reader
 * of a temporary is merged into the op that produces it, so the temporary is
 * never stored: `T = A*B; H = relu(T)` becomes one op computing relu(A*B).
 * The merged op sits where the consumer stood (its other operands are ready
 * there), keeps the producer's id, lists both statements in `fused`, and is
 * classified again, so the elementwise part shows up as its epilogue.
 */
import { freeIndices, mapExpr, walkExpr, type Expr } from '../ir/expr.js';
import { kernelFacts } from '../ir/facts.js';
import { opReads, opWrites } from '../ir/graph.js';
import { tensorOps, type AttrValue, type Kernel, type Module, type Op, type TensorOp } from '../ir/module.js';
import { classifyOp } from './classify.js';
import type { Pass } from './manager.js';

function allIndexNames(e: Expr, into: Set<string>): void {
  walkExpr(e, (n) => {
    if (n.k === 'load') n.idx.forEach((i) => into.add(i));
    if (n.k === 'reduce') n.idx.forEach((i) => into.add(i));
  });
}

/** The producer's expression as seen through one load `T[idx]` of the consumer. */
function substitute(producer: TensorOp, at: readonly string[], taken: Set<string>): Expr {
  const rename = new Map<string, string>();
  producer.indices.forEach((i, p) => rename.set(i, at[p]!));
  const bound = new Set<string>();
  allIndexNames(producer.expr, bound);
  for (const i of bound) {
    if (rename.has(i)) continue;
    let name = i;
    for (let n = 1; taken.has(name); n++) name = `${i}${n}`;
    taken.add(name);
    rename.set(i, name);
  }
  const r = (i: string): string => rename.get(i) ?? i;
  return mapExpr(producer.expr, (n) => {
    if (n.k === 'load') return { ...n, idx: n.idx.map(r) };
    if (n.k === 'reduce') return { ...n, idx: n.idx.map(r) };
    return n;
  });
}

function countLoads(k: Kernel, value: string): number {
  let n = 0;
  for (const op of tensorOps(k.body)) walkExpr(op.expr, (e) => void (e.k === 'load' && e.tensor === value && n++));
  return n;
}

function countDefs(k: Kernel, value: string): number {
  return tensorOps(k.body).filter((o) => o.result === value).length;
}

function asList(v: AttrValue | undefined, fallback: string): string[] {
  return Array.isArray(v) ? (v as string[]) : [fallback];
}

/** Tries one fusion in a region; returns the new region or undefined. */
function fuseOnce(k: Kernel, ops: Op[]): Op[] | undefined {
  const isResult = (v: string): boolean => k.results.some((r) => r.name === v) || k.params.some((p) => p.name === v);
  for (let c = 0; c < ops.length; c++) {
    const consumer = ops[c]!;
    if (consumer.kind !== 'map' && consumer.kind !== 'copy') continue;
    for (let p = c - 1; p >= 0; p--) {
      const producer = ops[p]!;
      if (producer.kind === 'repeat') {
        if ([...opWrites(producer)].some((w) => opReads(consumer).has(w))) break;
        continue;
      }
      const t = producer.result;
      if (!opReads(consumer).has(t)) continue;
      if (isResult(t) || countDefs(k, t) !== 1) break;
      const loads = consumerLoads(consumer, t);
      if (countLoads(k, t) !== loads.length || loads.length !== 1) break;
      // One producer element per consumer element: fusing a broadcast read
      // (m[i] inside a loop over [i, j]) would recompute the producer per j.
      const at = (loads[0] as { idx: string[] }).idx;
      if (at.length !== consumer.indices.length || !consumer.indices.every((i) => at.includes(i))) break;
      // Nothing between producer and consumer may overwrite what the producer reads.
      const between = ops.slice(p + 1, c);
      const producerReads = opReads(producer);
      if (between.some((b) => [...opWrites(b)].some((w) => producerReads.has(w)))) break;
      const taken = new Set<string>(consumer.indices);
      allIndexNames(consumer.expr, taken);
      const expr = mapExpr(consumer.expr, (n) =>
        n.k === 'load' && n.tensor === t ? substitute(producer, n.idx, taken) : n,
      );
      if ([...freeIndices(expr)].some((i) => !consumer.indices.includes(i))) break;
      const fused: TensorOp = {
        ...consumer,
        id: producer.id,
        kind: 'stmt',
        expr,
        attrs: { fused: [...asList(producer.attrs['fused'], t), ...asList(consumer.attrs['fused'], consumer.result)] },
      };
      return [...ops.slice(0, p), ...between, fused, ...ops.slice(c + 1)];
    }
  }
  return undefined;
}

function consumerLoads(op: TensorOp, t: string): Expr[] {
  const out: Expr[] = [];
  walkExpr(op.expr, (n) => void (n.k === 'load' && n.tensor === t && out.push(n)));
  return out;
}

function fuseRegion(k: Kernel, ops: Op[]): { ops: Op[]; changed: boolean } {
  let changed = false;
  let cur = ops.map((op) => {
    if (op.kind !== 'repeat') return op;
    const inner = fuseRegion(k, op.body);
    changed ||= inner.changed;
    return { ...op, body: inner.ops };
  });
  for (;;) {
    const next = fuseOnce(k, cur);
    if (!next) break;
    cur = next;
    changed = true;
  }
  return { ops: cur, changed };
}

export function fuseKernel(k: Kernel): Kernel {
  let cur = k;
  for (;;) {
    const { ops, changed } = fuseRegion(cur, cur.body);
    if (!changed) break;
    cur = { ...cur, body: ops };
  }
  // Reclassify the merged ops: their elementwise part becomes an epilogue.
  const facts = kernelFacts(cur);
  const relabel = (ops: Op[]): Op[] =>
    ops.map((op) => {
      if (op.kind === 'repeat') return { ...op, body: relabel(op.body) };
      if (op.kind !== 'stmt') return op;
      const { kind, attrs } = classifyOp(facts.ops.get(op.id)!);
      return { ...op, kind, attrs };
    });
  return { ...cur, body: relabel(cur.body) };
}

export const fuseElementwisePass: Pass = {
  name: 'fuse-elementwise',
  description: 'merge single-use elementwise consumers into the op producing their operand',
  run: (m: Module): Module => ({ kernels: m.kernels.map(fuseKernel) }),
};
