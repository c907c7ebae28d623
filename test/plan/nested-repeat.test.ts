/**
 * Nested repeat regions (passes/plan-spec.ts `enclosing`, runtime/plan/bind.ts):
 * an op inside `repeat 3 { repeat 4 { ... } ... }` runs 12 times per input,
 * and no stage boundary falls inside the outer region, which the engine runs
 * within one stage (a mapping that cut it failed at run time with DY3047).
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { sparseFeaturesOf } from '../../runtime/guards/index.js';
import { bindProblem } from '../../runtime/plan/bind.js';
import { planPareto } from '../../runtime/plan/dp.js';
import { loadSystemFile } from '../../runtime/system/load.js';
import { graph } from '../guards/fixtures.js';
import { specOf } from '../helpers/compile.js';

const NESTED = `kernel nest(A: csr<f32>[n, n], x0: dense<f32>[n]) -> (x: dense<f32>[n], c: dense<f32>[n]) {
  x[i] = x0[i];
  c[i] = x0[i];
  repeat 3 {
    repeat 4 { x[i] = 0.5 * A[i, j] * x[j] + 0.1; }
    c[i] = c[i] + x[i];
  }
}`;

describe('nested repeat regions', () => {
  const spec = specOf(NESTED);
  const A = graph('cage8.mtx');
  const problem = bindProblem(spec, {
    sparse: new Map([['A', sparseFeaturesOf(A, 2)]]),
    dims: new Map([['n', A.rows]]),
    scalars: new Map(),
  });
  const byResult = (r: string): (typeof problem.ops)[number][] => problem.ops.filter((o) => o.result === r);

  it('cost an op by every enclosing region: 3 x 4 trips inside, 3 in the outer body, 1 before', () => {
    expect(byResult('x').map((o) => o.trips)).toEqual([1, 12]);
    expect(byResult('c').map((o) => o.trips)).toEqual([1, 3]);
  });

  it('keep the outer region within one stage in every mapping of the Pareto set', () => {
    const inner = byResult('x')[1]!.id;
    const body = byResult('c')[1]!.id;
    expect(problem.ops.find((o) => o.id === inner)!.group).toBe(problem.ops.find((o) => o.id === body)!.group);
    for (const preset of ['paper-2g2f', 'paper-1g1f']) {
      const sys = loadSystemFile(fileURLToPath(new URL(`../../systems/${preset}.json`, import.meta.url)));
      for (const objective of ['throughput', 'energy', 'latency'] as const) {
        const pareto = planPareto(sys, problem, { objective, energyScope: 'system', streamLength: 16 }).pareto;
        expect(pareto.length, `${preset} ${objective}`).toBeGreaterThan(0);
        for (const m of pareto) {
          const stageOf = (id: string): number => m.stages.findIndex((s) => s.ops.includes(id));
          expect(stageOf(inner), `${preset} ${objective}: ${m.stages.map((s) => s.ops.join(' ')).join(' | ')}`).toBe(
            stageOf(body),
          );
        }
      }
    }
  });
});
