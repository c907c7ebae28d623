/**
 * The runtime's model memo (runtime/engine/memo.ts) keeps a pattern's bound problem from its first input and the
 * partitions' mappings on it from its second: in a stream of new patterns, figures kept per pattern only fed V8's
 * collections (docs/PERFORMANCE.md). A pattern seen once keeps its mappings for its own input (the last problem).
 */
import { describe, expect, it } from 'vitest';
import { ModelMemo } from '../../runtime/engine/memo.js';
import { sparseFeaturesOf } from '../../runtime/guards/features.js';
import { planOptions } from '../../runtime/guards/build.js';
import { planPareto, choicesOf } from '../../runtime/plan/dp.js';
import type { Binding } from '../../runtime/plan/bind.js';
import { STEADY } from '../helpers/goal.js';
import { gcnSpec, graph, system } from './fixtures.js';

const sys = system('paper-1g1f');
const spec = gcnSpec();
const popts = planOptions(sys, { objective: 'throughput', ...STEADY });
const bindingOf = (file: string): Binding => {
  const g = graph(file);
  const f = sparseFeaturesOf(g, 2);
  return {
    sparse: new Map([['A', f]]),
    dims: new Map([
      ['n', g.rows],
      ['f', 64],
      ['h', 64],
      ['c', 16],
    ]),
    scalars: new Map(),
  };
};

describe('the model memo', () => {
  it('keeps a pattern’s mappings from its second input on, and the last problem’s for its own input', () => {
    const memo = new ModelMemo(sys, spec, popts);
    const a = bindingOf('ca-GrQc.mtx');
    const b = bindingOf('jazz.mtx');
    const p = memo.problem(a);
    const best = planPareto(sys, p, popts).pareto[0]!;
    const part = { key: 'best', choices: choicesOf(p, best) };
    const m1 = memo.mapping(p, part)!;
    expect(m1.periodMs).toBeCloseTo(best.periodMs, 9);
    // The same input asks again: the last problem's mapping.
    expect(memo.mapping(p, part)).toBe(m1);
    // Another pattern priced in between: the first one's mapping is priced again, to the same figures.
    const q = memo.problem(b);
    memo.mapping(q, { key: 'best', choices: choicesOf(q, planPareto(sys, q, popts).pareto[0]!) });
    const m2 = memo.mapping(p, part)!;
    expect(m2).not.toBe(m1);
    expect(m2).toEqual(m1);
    // The first pattern's second input: the same problem, and its mappings kept from now on.
    expect(memo.problem(a)).toBe(p);
    const m3 = memo.mapping(p, part)!;
    memo.mapping(q, { key: 'best', choices: choicesOf(q, planPareto(sys, q, popts).pareto[0]!) });
    expect(memo.mapping(p, part)).toBe(m3);
  });
});
