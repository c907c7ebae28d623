/**
 * The fixed cost of a split stage: its k > 1 instances synchronise after
 * every op and trip (MODEL.splitSyncUs, the figure the event simulation
 * charges too). The cost is stage-local, so the DP stays exact; it stops the
 * planner from splitting ops whose halved kernels save less than it costs,
 * and leaves splits of large ops alone.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MODEL } from '../../runtime/plan/cost.js';
import { evaluateChoices, planPareto } from '../../runtime/plan/dp.js';
import type { PlanProblem, SparseFeatures } from '../../runtime/plan/types.js';
import { goal, STEADY } from '../helpers/goal.js';
import { CPU, features, GPU, spmv, system } from './devices.js';
import { expectExact, optsDraftArb, problemArb, resolveOpts, systemArb } from './gen.js';

describe('a split stage synchronises its instances after every op and trip', () => {
  it('the DP equals exhaustive enumeration; every split stage carries the synchronisation of its ops and trips', () => {
    let splits = 0;
    fc.assert(
      fc.property(problemArb(4), systemArb({ maxAccel: 3 }), optsDraftArb, (p, sys, od) => {
        const front = expectExact(sys, p, resolveOpts(sys, p, od));
        for (const m of front)
          for (const s of m.stages) {
            const trips = s.ops.reduce((a, id) => a + p.ops.find((o) => o.id === id)!.trips, 0);
            expect(s.syncMs).toBe(s.count > 1 ? trips * (MODEL.splitSyncUs / 1e3) : 0);
            expect(s.computeMs).toBeGreaterThanOrEqual(s.syncMs);
            if (s.count > 1) splits++;
          }
      }),
      { seed: 51, numRuns: 250 },
    );
    expect(splits).toBeGreaterThan(20);
  });

  // One SpMV whose operands are all broadcast and whose result stays on the device: a split changes only the kernel time.
  const G2 = { ...GPU, count: 2 };
  const sys = system([CPU, G2]);
  const problem = (f: SparseFeatures): PlanProblem => ({
    kernel: 'k',
    paramBytes: new Map([
      ['A', f.nnz * 8],
      ['x', f.rows * 4],
    ]),
    sparseParams: new Set(),
    results: [],
    ops: [spmv(f)],
  });
  const on = (p: PlanProblem, count: number) =>
    evaluateChoices(sys, p, [{ start: 0, end: 1, device: 'gpu', count }], STEADY)!;
  const pick = (p: PlanProblem): number =>
    planPareto(sys, p, { ...goal('latency'), kinds: ['gpu'] }).pareto[0]!.stages[0]!.count;

  it('moves the decision: a small SpMV that halving would speed up stays on one GPU', () => {
    const p = problem(features(2_000, 8, 0.5, 40, 0.02));
    const [one, two] = [on(p, 1), on(p, 2)];
    expect(two.stages[0]!.syncMs).toBe(MODEL.splitSyncUs / 1e3);
    // Without the synchronisation the split would be faster...
    expect(two.stages[0]!.computeMs - two.stages[0]!.syncMs).toBeLessThan(one.stages[0]!.computeMs);
    // ...with it, slower: the planner keeps one instance.
    expect(two.latencyMs).toBeGreaterThan(one.latencyMs);
    expect(pick(p)).toBe(1);
  });

  it('leaves a large SpMV split: the synchronisation is small beside the halved kernel', () => {
    const p = problem(features(4_000_000, 16, 0.5, 64, 0.02));
    const [one, two] = [on(p, 1), on(p, 2)];
    expect(two.latencyMs).toBeLessThan(one.latencyMs);
    expect(pick(p)).toBe(2);
  });
});
