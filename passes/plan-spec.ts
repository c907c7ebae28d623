/**
 * From a kernel after annotate-cost to the planner's PlanSpec: the ops in
 * program order with their symbolic work, where each value they read comes
 * from, the repeat region each belongs to, and the implementations codegen
 * emits for each (given: passes may not import codegen; the callers get them
 * from codegen/implementations.ts). Sparse temporaries are charged to the
 * parameter whose pattern they share.
 */
import { tensorsRead } from '../ir/expr.js';
import { kernelFacts } from '../ir/facts.js';
import type { Kernel, Op } from '../ir/module.js';
import { Poly, parsePoly } from '../runtime/plan/sym.js';
import type { OpImpls } from '../runtime/catalogue/index.js';
import type { PlanOpSpec, PlanSpec, ValueRead } from '../runtime/plan/types.js';
import { storageBytes } from './annotate-cost.js';

/** A count annotate-cost attaches to every op: one it lacks means the pass did not run. */
function counted(a: Readonly<Record<string, unknown>>, name: string, kernel: string, op: string): string {
  const v = a[name];
  if (typeof v !== 'string')
    throw new Error(`plan-spec: kernel ${kernel}: op ${op} has no '${name}' count; run annotate-cost first`);
  return v;
}

/** `impls`: op id -> the implementations its program has; every op of the kernel must have an entry. */
export function planSpec(k: Kernel, impls: ReadonlyMap<string, OpImpls>): PlanSpec {
  const facts = kernelFacts(k);
  const lastWriter = new Map<string, string>();
  const ops: PlanOpSpec[] = [];
  const rootOf = (id: string, v: string): string => facts.ops.get(id)?.operands.get(v)?.root ?? v;
  type Group = NonNullable<PlanOpSpec['group']>;
  // The repeat regions around the ops being visited, outermost first.
  const visit = (list: readonly Op[], regions: readonly Group[]): void => {
    for (const op of list) {
      if (op.kind === 'repeat') {
        // Values read inside the loop before it writes them come from before the loop on the first trip.
        const trips = op.count.kind === 'lit' ? op.count.value : op.count.name;
        visit(op.body, [...regions, { id: op.id, trips, ...(op.until ? { until: true } : {}) }]);
        continue;
      }
      const group = regions[regions.length - 1];
      const info = facts.ops.get(op.id)!;
      const reads: ValueRead[] = [...tensorsRead(op.expr)].sort().map((v) => {
        const w = lastWriter.get(v);
        return w === undefined ? { value: v, from: { kind: 'param' } } : { value: v, from: { kind: 'op', id: w } };
      });
      const a = op.attrs;
      const sparseName = typeof a['sparse'] === 'string' ? rootOf(op.id, a['sparse']) : undefined;
      const opImpls = impls.get(op.id);
      if (!opImpls) throw new Error(`plan-spec: kernel ${k.name}: no implementations given for ${op.id}`);
      const resultNnz = info.sparsity.patternSource
        ? Poly.symbol(`nnz(${info.sparsity.root ?? rootOf(op.id, info.sparsity.patternSource)})`)
        : new Poly();
      const spec: PlanOpSpec = {
        id: op.id,
        kind: op.kind,
        result: op.result,
        dtype: info.type.dtype,
        reads,
        items: String(a['items'] ?? '0'),
        flops: String(a['flops'] ?? '0'),
        bytes: parsePoly(String(a['reads'] ?? '0'))
          .add(parsePoly(String(a['writes'] ?? '0')))
          .toString(),
        gathers: String(a['gathers'] ?? '0'),
        loops: counted(a, 'loops', k.name, op.id),
        columns: counted(a, 'columns', k.name, op.id),
        resultBytes: storageBytes(info.type, resultNnz).toString(),
        impls: opImpls,
      };
      if (sparseName !== undefined && k.params.some((p) => p.name === sparseName && p.type.format !== 'dense'))
        spec.sparse = sparseName;
      if (group) spec.group = group;
      if (regions.length > 1) spec.enclosing = regions.slice(0, -1);
      if (typeof a['semiring'] === 'string') spec.semiring = a['semiring'];
      ops.push(spec);
      lastWriter.set(op.result, op.id);
    }
  };
  visit(k.body, []);
  return {
    kernel: k.name,
    params: k.params.map((p) => ({
      name: p.name,
      sparse: p.type.format !== 'dense',
      bytes: storageBytes(p.type, Poly.symbol(`nnz(${p.name})`)).toString(),
    })),
    results: k.results.map((r) => r.name),
    ops,
  };
}
