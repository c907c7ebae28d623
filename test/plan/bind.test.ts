/**
 * bindProblem evaluates each cost expression over factors it resolved once
 * (runtime/plan/bind.ts): its work figures must equal sym.ts's general
 * evaluation of the same text bit for bit, on sampled and exact features,
 * and a factor the binding lacks must name the op, the figure and the factor.
 */
import { describe, expect, it } from 'vitest';
import { SampledFeatures } from '../../runtime/features/quick.js';
import { sparseFeaturesOf } from '../../runtime/guards/index.js';
import { bindProblem, type Binding } from '../../runtime/plan/bind.js';
import { compilePoly, evaluateCompiled } from '../../runtime/plan/sym.js';
import type { PlanSpec as Spec } from '../../runtime/plan/types.js';
import { gcnBinding, gcnSpec, graph } from '../guards/fixtures.js';

const FIELDS = [
  ['items', 'items'],
  ['flops', 'flops'],
  ['bytes', 'bytes'],
  ['gathers', 'gathers'],
  ['loops', 'loops'],
  ['columns', 'columns'],
  ['resultBytes', 'resultBytes'],
] as const;

/** sym.ts's evaluation of `text` on a binding, reading factors by their text. */
function general(text: string, b: Binding): number {
  return evaluateCompiled(compilePoly(text), (f) => {
    const m = /^(nnz|rows|cols)\(([A-Za-z_][A-Za-z0-9_]*)\)$/.exec(f);
    if (!m) return b.dims.get(f);
    return b.sparse.get(m[2]!)?.[m[1] as 'nnz' | 'rows' | 'cols'];
  });
}

describe('bindProblem', () => {
  const spec = gcnSpec();
  for (const file of ['ca-GrQc.mtx', 'bcsstk13.mtx'])
    for (const [kind, features] of [
      ['exact', (g: ReturnType<typeof graph>) => sparseFeaturesOf(g, 2)],
      ['sampled', (g: ReturnType<typeof graph>) => new SampledFeatures(g)],
    ] as const)
      it(`gives sym.ts's figures bit for bit on ${file}'s ${kind} features`, () => {
        const g = graph(file);
        const base = gcnBinding(g, 48, 32, 7);
        const b: Binding = { ...base, sparse: new Map([['A', features(g)]]) };
        const p = bindProblem(spec, b);
        expect(p.ops.map((o) => o.id)).toEqual(spec.ops.map((o) => o.id));
        spec.ops.forEach((o, i) => {
          for (const [field, key] of FIELDS) expect(Object.is(p.ops[i]![key], general(o[field], b))).toBe(true);
          expect(p.ops[i]!.sparse === undefined).toBe(o.sparse === undefined);
        });
        for (const q of spec.params) expect(p.paramBytes.get(q.name)).toBe(general(q.bytes, b));
        expect([...p.sparseParams]).toEqual(spec.params.filter((q) => q.sparse).map((q) => q.name));
      });

  it('reads rows, cols and nnz of the right input, with exponents, as sym.ts does', () => {
    // The shipped examples' expressions read nnz(A) only: a spec whose expressions read every field, of a wide
    // matrix and a second sparse input, with powers.
    const exprs = ['rows(A)*cols(B) + 3*rows(A)^2*n', '2*cols(A)*nnz(B) + f^3', 'nnz(A)^-1*h + rows(B)', '0', '7'];
    const wide: Spec = {
      ...spec,
      params: [...spec.params, { ...spec.params.find((q) => q.sparse)!, name: 'B', bytes: 'cols(B)*rows(A) + 4' }],
      ops: spec.ops.map((o, i) => ({
        ...o,
        items: exprs[i % 5]!,
        flops: exprs[(i + 1) % 5]!,
        bytes: exprs[(i + 2) % 5]!,
        gathers: exprs[(i + 3) % 5]!,
        resultBytes: exprs[(i + 4) % 5]!,
      })),
    };
    const f = (rows: number, cols: number, nnz: number) => ({
      ...sparseFeaturesOf(graph('ca-GrQc.mtx'), 2),
      rows,
      cols,
      nnz,
    });
    const b: Binding = {
      sparse: new Map([
        ['A', f(3, 2147483647, 11)],
        ['B', f(1000, 17, 4321)],
      ]),
      dims: new Map([
        ['n', 3],
        ['f', 5],
        ['h', 13],
        ['c', 2],
      ]),
      scalars: new Map(),
    };
    const p = bindProblem(wide, b);
    wide.ops.forEach((o, i) => {
      for (const [field, key] of FIELDS) expect(Object.is(p.ops[i]![key], general(o[field], b))).toBe(true);
    });
    expect(p.paramBytes.get('B')).toBe(17 * 3 + 4);
  });

  it('names the op, the figure and the factor a binding lacks', () => {
    const g = graph('ca-GrQc.mtx');
    const b = gcnBinding(g);
    const noDim: Binding = { ...b, dims: new Map([...b.dims].filter(([d]) => d !== 'h')) };
    const first = spec.ops.find((o) => /\bh\b/.test(o.items) || /\bh\b/.test(o.flops))!;
    expect(() => bindProblem(spec, noDim)).toThrow(
      new RegExp(`^${first.id} \\w+: cost expression needs 'h', which is not bound$`),
    );
    const noMatrix: Binding = { ...b, sparse: new Map() };
    expect(() => bindProblem(spec, noMatrix)).toThrow(/cost expression needs 'nnz\(A\)', which is not bound/);
  });

  it('names the count a spec built into an older generated runtime lacks', () => {
    const { loops: _, ...older } = spec.ops[0]!;
    const stale = { ...spec, ops: [older as Spec['ops'][number], ...spec.ops.slice(1)] };
    expect(() => bindProblem(stale, gcnBinding(graph('ca-GrQc.mtx')))).toThrow(
      `${older.id} loops: the plan spec has no such count (one an older dype wrote? recompile the program)`,
    );
  });
});
