/**
 * The Pareto DP against brute force: on random small problems and systems
 * the DP's front must be exactly the exhaustive enumeration's front, and
 * every mapping it returns must be well formed and meet the constraints.
 *
 * Exact equality of the figures (no tolerance) is intended: both sides build
 * a mapping's figures from the same evalStage results, in the same stage
 * order, with the same operations (period = running max of the stages'
 * periods, latency = running sum of their times from 0, dynamic energy =
 * running sum from 0, energy = edyn + period/1e3 * idle).
 * Pruning in the DP is exact under floating point too, since IEEE rounding
 * is monotone (a <= b implies fl(a + c) <= fl(b + c)).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { choicesOf, evaluateChoices, planPareto } from '../../runtime/plan/dp.js';
import { exhaustivePareto } from '../../runtime/plan/exhaustive.js';
import type { PlanProblem } from '../../runtime/plan/types.js';
import type { SystemSpec } from '../../runtime/system/types.js';
import { checkMapping, optsDraftArb, problemArb, resolveOpts, systemArb, triples, type OptsDraft } from './gen.js';

function agree(p: PlanProblem, sys: SystemSpec, od: OptsDraft, seen: Counts): void {
  const opts = resolveOpts(sys, p, od);
  const dp = planPareto(sys, p, opts);
  const ex = exhaustivePareto(sys, p, opts);
  expect(triples(dp.pareto)).toEqual(triples(ex));
  for (const m of dp.pareto) {
    checkMapping(sys, p, opts, m);
    // The mapping's figures are what its stage choices score.
    const again = evaluateChoices(sys, p, choicesOf(p, m))!;
    expect([again.periodMs, again.latencyMs, again.energyJ, again.powerW]).toEqual([m.periodMs, m.latencyMs, m.energyJ, m.powerW]);
  }
  for (const m of ex) checkMapping(sys, p, opts, m);
  if (dp.pareto.length > 0) seen.nonEmpty++;
  if (opts.powerCapW !== undefined) seen.cap++;
  if (opts.latencyBoundMs !== undefined) seen.bound++;
  if (dp.pareto.some((m) => m.stages.length > 1)) seen.multiStage++;
  if (dp.pareto.some((m) => m.stages.length > 2)) seen.threeStages++;
}

interface Counts {
  nonEmpty: number;
  cap: number;
  bound: number;
  multiStage: number;
  threeStages: number;
}
const counts = (): Counts => ({ nonEmpty: 0, cap: 0, bound: 0, multiStage: 0, threeStages: 0 });

describe('planPareto equals exhaustive enumeration', () => {
  it('wide numbers: same Pareto triples; every mapping well formed and within the constraints', () => {
    const seen = counts();
    fc.assert(
      fc.property(problemArb(6), systemArb({ maxAccel: 3 }), optsDraftArb, (p, sys, od) => agree(p, sys, od, seen)),
      { seed: 20250611, numRuns: 300 },
    );
    // The generators reach the interesting cases.
    expect(seen.nonEmpty).toBeGreaterThan(150);
    expect(seen.cap).toBeGreaterThan(50);
    expect(seen.bound).toBeGreaterThan(50);
    expect(seen.multiStage).toBeGreaterThan(30);
  });

  it('comparable devices and ops (multi-stage fronts): same Pareto triples, well-formed mappings', () => {
    const seen = counts();
    fc.assert(
      fc.property(problemArb(6, 'narrow'), systemArb({ maxAccel: 3, spread: 'narrow', minGpuSpecs: 1, minFpgaSpecs: 1 }), optsDraftArb, (p, sys, od) => agree(p, sys, od, seen)),
      { seed: 777, numRuns: 300 },
    );
    expect(seen.threeStages).toBeGreaterThan(50);
  });
});
