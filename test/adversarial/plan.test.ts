/**
 * The planner on adversarial inputs (issue 14 item 4): bound with the
 * features of an empty, 0 x 0, 1 x 1, n x 0, dense-row or 2^31 - 1 column
 * matrix, the cost model gives every mapping finite figures on every system
 * shipped and for every objective, and finds one: a NaN time or energy
 * would compare false both ways in the DP and in the runtime's weighing of
 * partitions, a silent wrong pick.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sparseFeaturesOf } from '../../runtime/guards/index.js';
import { bindProblem } from '../../runtime/plan/bind.js';
import { planPareto } from '../../runtime/plan/dp.js';
import { root, system } from '../guards/fixtures.js';
import { specOf } from '../helpers/compile.js';
import { goal } from '../helpers/goal.js';
import { csrOf, denseRowMatrix, emptyMatrix, wideMatrix } from './inputs.js';

const INPUTS = [
  ['0 x 0', () => emptyMatrix(0, 0)],
  ['every row empty', () => emptyMatrix(5, 5)],
  ['1 x 1', () => csrOf(1, 1, [[0]])],
  ['1 x 1 without an entry', () => emptyMatrix(1, 1)],
  ['5 x 0', () => emptyMatrix(5, 0)],
  ['a full row among 4000 short rows', () => denseRowMatrix(4000, 4000, 7)],
  ['3 x (2^31 - 1)', wideMatrix],
] as const;

describe('the cost model on adversarial inputs', () => {
  for (const ex of ['spmv', 'gcn'])
    it(`${ex}: a feasible mapping with finite figures on every system and objective`, () => {
      const spec = specOf(readFileSync(join(root, 'examples', `${ex}.dy`), 'utf8'), `${ex}.dy`);
      const bad: string[] = [];
      for (const s of ['paper-1g1f', 'paper-2g2f', 'h200-cpu', 'this-machine'])
        for (const [name, make] of INPUTS) {
          const A = make();
          if (ex === 'gcn' && A.rows !== A.cols) continue;
          const dims =
            ex === 'spmv'
              ? new Map([
                  ['m', A.rows],
                  ['n', A.cols],
                ])
              : new Map([
                  ['n', A.rows],
                  ['f', 16],
                  ['h', 16],
                  ['c', 16],
                ]);
          const problem = bindProblem(spec, {
            sparse: new Map([['A', sparseFeaturesOf(A, 2)]]),
            dims,
            scalars: new Map(),
          });
          for (const o of ['throughput', 'latency', 'energy'] as const) {
            const { pareto } = planPareto(system(s), problem, goal(o));
            if (pareto.length === 0) bad.push(`${s} ${name} ${o}: no mapping`);
            for (const m of pareto) {
              for (const [k, v] of Object.entries(m))
                if (typeof v === 'number' && !Number.isFinite(v)) bad.push(`${s} ${name} ${o}: ${k} = ${v}`);
              for (const st of m.stages)
                for (const [k, v] of Object.entries(st))
                  if (typeof v === 'number' && !Number.isFinite(v)) bad.push(`${s} ${name} ${o}: stage ${k} = ${v}`);
            }
          }
        }
      expect(bad).toEqual([]);
    }, 120_000);
});
