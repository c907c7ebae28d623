/**
 * The guard builder: at most K partitions covering the samples within the
 * tolerance, a tree that prefers cheap feature tiers, its accuracy on the
 * training samples recomputed here, fallbacks and ranges; the selector's
 * out-of-range reasons. gcn on real graphs for the paper-like GPU+FPGA box.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  buildGuards,
  sampleBindings,
  selectPartition,
  walkTree,
  fitTree,
  featureValue,
  treeFeatures,
} from '../../runtime/guards/index.js';
import type { GuardPlan } from '../../runtime/guards/types.js';
import { bindProblem } from '../../runtime/plan/bind.js';
import { evaluateChoices, objectiveValue, planPareto } from '../../runtime/plan/dp.js';
import type { Binding } from '../../runtime/plan/bind.js';
import { sparseFeaturesOf } from '../../runtime/guards/features.js';
import { gcnBinding, gcnSpec, graph, system } from './fixtures.js';
import { goal, STEADY } from '../helpers/goal.js';

const spec = gcnSpec();
const sys = system('paper-1g1f');
const GRAPHS = ['cora.cites', 'ca-GrQc.mtx', 'facebook_combined.txt', 'jazz.mtx', 'bcsstk13.mtx'];
let samples: Binding[];
let plan: GuardPlan;

beforeAll(() => {
  samples = sampleBindings(
    GRAPHS.map((g) => gcnBinding(graph(g), 16, 16, 16)),
    { perProfile: 20, shapeDims: { A: ['n', 'n'] } },
  );
  plan = buildGuards(spec, sys, samples, { ...goal('throughput'), maxPartitions: 4, lossTolerance: 0.05 });
});

describe('buildGuards on gcn, paper-1g1f', () => {
  it('chooses at most K distinct partitions, each with the others as ranked fallbacks', () => {
    expect(plan.partitions.length).toBeGreaterThan(1);
    expect(plan.partitions.length).toBeLessThanOrEqual(4);
    const keys = new Set(plan.partitions.map((p) => JSON.stringify(p.choices)));
    expect(keys.size).toBe(plan.partitions.length);
    for (const p of plan.partitions)
      expect([...p.fallbacks].sort()).toEqual(
        plan.partitions
          .map((q) => q.id)
          .filter((id) => id !== p.id)
          .sort(),
      );
    expect(plan.samples).toBe(samples.length);
  });

  it('reports the training accuracy and mean loss the tree actually achieves', () => {
    let good = 0;
    let loss = 0;
    for (const b of samples) {
      const p = bindProblem(spec, b);
      const opt = objectiveValue(planPareto(sys, p, goal('throughput')).pareto[0]!, 'throughput');
      const score = (c: GuardPlan['partitions'][number]): number =>
        objectiveValue(evaluateChoices(sys, p, c.choices, STEADY)!, 'throughput');
      const d = selectPartition(plan, b);
      const best = Math.min(...plan.partitions.map(score));
      // What the runtime takes: the cost model's best of the leaf's candidates.
      const pick = Math.min(...d.candidates.map(score));
      if (pick <= best * (1 + 1e-9)) good++;
      loss += pick / opt - 1;
    }
    expect(plan.trainingAccuracy).toBeCloseTo(good / samples.length, 10);
    expect(plan.meanLossPct).toBeCloseTo((loss / samples.length) * 100, 6);
    expect(plan.trainingAccuracy).toBeGreaterThanOrEqual(0.75);
    expect(plan.meanLossPct).toBeLessThan(5);
    expect(plan.coverage).toBeGreaterThan(0.8);
  });

  it('records ranges covering every sample, and flags inputs outside them with the reason', () => {
    for (const b of samples) expect(selectPartition(plan, b).inRange).toBe(true);
    const cora = gcnBinding(graph('cora.cites'), 16, 16, 16);
    const f = cora.sparse.get('A')!;
    const big: Binding = {
      ...cora,
      sparse: new Map([['A', { ...f, rows: 1e6, cols: 1e6, nnz: 4e7, rowLenMean: 40 }]]),
      dims: new Map([...cora.dims, ['n', 1e6]]),
    };
    const d = selectPartition(plan, big);
    expect(d.inRange).toBe(false);
    expect(d.outOfRange.join('\n')).toMatch(/A\.nnz = .* is above the guards' range/);
    const wide = gcnBinding(graph('cora.cites'), 16, 64, 16);
    expect(selectPartition(plan, wide).outOfRange).toEqual([
      expect.stringMatching(/^dim\.h = 64 is above the guards' range \[16, 16\]/),
    ]);
  });

  it('the guard path names each test with the value seen', () => {
    const d = selectPartition(plan, samples[0]!);
    expect(d.path.length).toBeGreaterThan(0);
    for (const step of d.path) expect(step).toMatch(/^[A-Za-z.]+ (<=|>) [-0-9.e+]+ \([-0-9.e+]+\)$/);
  });
});

describe('the tree prefers cheap tiers', () => {
  // Two partitions; a tier-0 and a tier-1 feature both separate the samples perfectly.
  const n = 40;
  const x = Array.from({ length: n }, (_, s) => [s, s * 2, s % 7]);
  const loss = Array.from({ length: n }, (_, s) => (s < n / 2 ? [0, 1] : [1, 0]));

  it('takes the tier-0 split when a tier-1 one is no better', () => {
    const t = fitTree(
      {
        keys: [
          { key: 'A.rowLenCv', tier: 1 },
          { key: 'A.nnz', tier: 0 },
          { key: 'A.localityScore', tier: 2 },
        ],
        x: x.map(([a, b, c]) => [b!, a!, c!]),
        loss,
      },
      2,
    );
    expect([...treeFeatures(t)]).toEqual([['A.nnz', 0]]);
  });

  it('takes a tier-1 split when it saves more than the margin', () => {
    // Only the tier-1 feature separates; the tier-0 one is noise.
    const t = fitTree(
      {
        keys: [
          { key: 'A.nnz', tier: 0 },
          { key: 'A.rowLenCv', tier: 1 },
        ],
        x: x.map(([a, , c]) => [c!, a!]),
        loss,
      },
      2,
    );
    expect(treeFeatures(t).get('A.rowLenCv')).toBe(1);
    for (let s = 0; s < n; s++)
      expect(walkTree(t, (k) => (k === 'A.nnz' ? x[s]![2]! : x[s]![0]!)).leaf).toBe(s < n / 2 ? 0 : 1);
  });

  it('uses tier 2 only where it changes the decision', () => {
    // Tier 2 separates, but both sides are best served by the same partition (0 always wins).
    const flat = Array.from({ length: n }, () => [0, 0.5]);
    const t = fitTree({ keys: [{ key: 'A.localityScore', tier: 2 }], x: x.map(([a]) => [a!]), loss: flat }, 2);
    expect(t).toEqual({ leaf: 0 });
  });
});

describe('samples', () => {
  it('are deterministic for a seed and keep rows = n and nnz = rows x mean', () => {
    const p = [gcnBinding(graph('jazz.mtx'))];
    const a = sampleBindings(p, { perProfile: 5, shapeDims: { A: ['n', 'n'] }, ranges: { 'dim.f': [8, 64] }, seed: 3 });
    const b = sampleBindings(p, { perProfile: 5, shapeDims: { A: ['n', 'n'] }, ranges: { 'dim.f': [8, 64] }, seed: 3 });
    expect(a).toEqual(b);
    expect(a).toHaveLength(6);
    for (const s of a) {
      const f = s.sparse.get('A')!;
      expect(s.dims.get('n')).toBe(f.rows);
      expect(f.nnz).toBe(Math.round(f.rowLenMean * f.rows));
      expect(f.rowLenMax).toBeGreaterThanOrEqual(Math.floor(f.rowLenMean));
      expect(featureValue(s, 'dim.f')).toBeGreaterThanOrEqual(8);
      expect(featureValue(s, 'dim.f')).toBeLessThanOrEqual(64);
    }
  });

  it('features of a tensor are the planner\u2019s, tier 2 adding the locality score', () => {
    const g = graph('karate.mtx');
    expect(sparseFeaturesOf(g, 1).localityScore).toBeUndefined();
    expect(sparseFeaturesOf(g, 2)).toMatchObject({ rows: 34, cols: 34, nnz: 156 });
  });
});
