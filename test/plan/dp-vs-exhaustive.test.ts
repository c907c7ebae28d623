/**
 * The Pareto DP against brute force: on random small problems and systems
 * (with and without a root complex, every energy scope and stream length
 * optsDraftArb draws) the DP's front must be exactly the exhaustive
 * enumeration's front, and every mapping it returns must be well formed and
 * meet the constraints. Each planner term has a test of its own as well
 * (stream.test.ts, root-complex.test.ts, split-sync.test.ts, energy.test.ts).
 *
 * Exact equality of the figures (no tolerance) is intended: both sides build
 * a mapping's figures from the same evalStage results, in the same stage
 * order, with the same operations (stage period = running max of the
 * stages' periods, root-complex time, latency and energy above waiting =
 * running sums from 0, then figures.ts for the whole mapping).
 * Pruning in the DP is exact under floating point too, since IEEE rounding
 * is monotone (a <= b implies fl(a + c) <= fl(b + c), fl(max) likewise, and
 * fl(a x c) <= fl(b x c) for c >= 0).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PlanProblem } from '../../runtime/plan/types.js';
import type { SystemSpec } from '../../runtime/system/types.js';
import { expectExact, optsDraftArb, problemArb, resolveOpts, systemArb, type OptsDraft } from './gen.js';

function agree(p: PlanProblem, sys: SystemSpec, od: OptsDraft, seen: Counts): void {
  const opts = resolveOpts(sys, p, od);
  const front = expectExact(sys, p, opts);
  if (front.length > 0) seen.nonEmpty++;
  if (opts.powerCapW !== undefined) seen.cap++;
  if (opts.latencyBoundMs !== undefined) seen.bound++;
  if (front.some((m) => m.stages.length > 1)) seen.multiStage++;
  if (front.some((m) => m.stages.length > 2)) seen.threeStages++;
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
      fc.property(
        problemArb(6, 'narrow'),
        systemArb({ maxAccel: 3, spread: 'narrow', minGpuSpecs: 1, minFpgaSpecs: 1 }),
        optsDraftArb,
        (p, sys, od) => agree(p, sys, od, seen),
      ),
      { seed: 777, numRuns: 360 },
    );
    // A quarter of the runs plan for one input, where latency alone counts and pipelines rarely reach the front.
    expect(seen.threeStages).toBeGreaterThan(20);
  });
});
