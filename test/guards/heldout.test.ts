/**
 * The guards' held-out figures on the case the guards are judged by: gcn
 * for the paper-like two-GPU, two-FPGA box, four real graphs as profiles
 * (ca-GrQc, bcsstk33, luxembourg_osm, dnn_n1024-l1) and the layer widths
 * sampled over [16, 256], built as `dype compile --profile` builds them.
 * Aim: held-out mean loss at most 3% against each sample's DP optimum and
 * at least 95% of held-out samples within the 5% tolerance.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { compileProgram } from '../../cli/compile.js';
import { buildKernelGuards } from '../../codegen/runtime/project.js';
import type { GuardPlan } from '../../runtime/guards/types.js';
import type { Objective } from '../../runtime/plan/types.js';
import { matrices, root } from './fixtures.js';
import { goal } from '../helpers/goal.js';

const PROFILES = ['ca-GrQc.mtx', 'bcsstk33.mtx', 'luxembourg_osm.mtx', 'dnn_n1024-l1.mtx'];
/**
 * The share within the tolerance each objective's guards must reach. Throughput's stood at 0.93 (0.80-0.93 over
 * other sampling seeds) while a leaf left open only the partitions clearly best on its training samples; with
 * every partition open to the runtime's cost model (runtime/guards/fit.ts addCandidates) it is 0.95 here and
 * 0.94-0.98 over sampling seeds 7-12 (docs/RUNTIME.md).
 */
const WITHIN: Record<Objective, number> = { throughput: 0.95, energy: 0.95, latency: 0.95 };
let plans: Partial<Record<Objective, GuardPlan>>;

beforeAll(() => {
  const { program } = compileProgram(join(root, 'examples', 'gcn.dy'));
  const { kernels } = buildKernelGuards(
    {
      program,
      system: 'paper-2g2f',
      goal: goal('throughput'),
      profiles: PROFILES.map((f) => ({ name: 'A', path: join(matrices, f) })),
      outDir: '',
    },
    { perProfile: 24 },
  );
  plans = kernels[0]!.plans;
}, 120_000);

describe.each(['throughput', 'energy', 'latency'] as const)(
  'gcn on paper-2g2f, four real graphs, widths over [16, 256]: the %s guards',
  (objective) => {
    const guards = (): GuardPlan => plans[objective]!;
    it('meet the held-out aim: mean loss <= 3%, >= 95% within the 5% tolerance', () => {
      const h = guards().heldOut!;
      expect(h.folds).toBe(5);
      expect(h.meanLossPct).toBeLessThanOrEqual(3);
      expect(h.withinTolerance).toBeGreaterThanOrEqual(WITHIN[objective]);
      expect(h.unserved).toBe(0);
    });

    it("chose the partitions by the runtime's cross-validated loss and the depth by the tree's alone", () => {
      const plan = guards();
      const g = plan.model.grid;
      // The fewest partitions within 0.05 points of the lowest loss of the runtime's pick.
      const best = Math.min(...g.map((x) => x.meanLossPct));
      const near = g.filter((x) => x.meanLossPct <= best + 0.05);
      expect(plan.model.partitions).toBe(Math.min(...near.map((x) => x.partitions)));
      // For that many, the shallowest tree within 0.05 points of the lowest loss of the tree alone.
      const same = g.filter((x) => x.partitions === plan.model.partitions);
      const bestTree = Math.min(...same.map((x) => x.treeMeanLossPct));
      const chosen = same.find((x) => x.depth === plan.model.depth)!;
      expect(chosen.treeMeanLossPct).toBeLessThanOrEqual(bestTree + 0.05);
      for (const x of same) if (x.depth < chosen.depth) expect(x.treeMeanLossPct).toBeGreaterThan(bestTree + 0.05);
      expect(plan.partitions).toHaveLength(plan.model.partitions);
    });

    it('are judged with each profile left out by guards built from the other three', () => {
      const plan = guards();
      const by = plan.heldOut!.byProfile!;
      expect(by.map((p) => p.profile)).toEqual([0, 1, 2, 3]);
      expect(by.reduce((a, p) => a + p.samples, 0)).toBe(plan.samples);
      for (const p of by) expect(p.replanned).toBeLessThanOrEqual(p.samples);
    });
  },
);
