/**
 * Runs the suite: per case the oracle (every mapping the exhaustive
 * enumeration yields, scored by the simulation) and each strategy's
 * mapping, scored by the same simulation. Training (guards, static) is
 * cached per workload, setting, goal and held-out fold; simulation scores
 * per workload, input and setting (every goal shares them: one run gives
 * the period and both energies).
 */
import type { GuardPlan } from '../runtime/guards/index.js';
import type { StageChoice } from '../runtime/plan/dp.js';
import { enumerateMappings } from '../runtime/plan/exhaustive.js';
import { energyIn, type EnergyScope, type PlanGoal } from '../runtime/plan/figures.js';
import type { Mapping, PlanProblem } from '../runtime/plan/types.js';
import { bindingFor, problemFor } from './binding.js';
import { buildCases, suiteInputs, type EvalCase, type SuiteSelection } from './cases.js';
import { staticPick } from '../runtime/plan/baselines.js';
import { feasibility } from './feasible.js';
import type { EvalInput } from './inputs.js';
import { simStages, simulate, type SimResult } from './sim/index.js';
import {
  dypePick,
  gpuOnlyPick,
  heftPick,
  onlineNoSplit,
  planOpts,
  STRATEGIES,
  trainGuards,
  trainStatic,
  online,
  type Strategy,
  type StrategyPick,
} from './strategies.js';
import { systemFor } from './systems.js';

/** Two mappings score the same within this relative tolerance. */
export const OPTIMAL_TOLERANCE = 0.001;

export interface Scored {
  mapping: Mapping;
  label: string;
  sim: SimResult;
}

export interface StrategyResult {
  strategy: Strategy;
  scored?: Scored;
  note: string;
  /** Feasibility under the case's constraints (undefined: feasible). */
  infeasible?: string;
  /** Objective loss against the oracle, percent (negative: better than the oracle). */
  lossPct?: number;
  optimal: boolean;
  partition?: number;
}

export interface CaseResult {
  case: EvalCase;
  oracle: Scored;
  /** Every enumerated mapping's simulated period and energies, for the Pareto plots. */
  space: { periodMs: number; deviceEnergyJ: number; systemEnergyJ: number; label: string }[];
  strategies: Record<Strategy, StrategyResult>;
  guards?: GuardPlan;
}

export function mappingLabel(m: Mapping): string {
  return m.stages.map((s) => `[${s.ops.join(' ')}]@${s.devices.join('+')}`).join(' -> ');
}

/** Simulated energy per input in a scope. */
export function simEnergyJ(s: SimResult, scope: EnergyScope): number {
  return energyIn(scope, s.deviceEnergyJ, s.systemEnergyJ);
}

/** The simulated figure a goal minimises: the period over the stream, energy in its scope, or latency. */
export function metric(s: SimResult, g: Pick<PlanGoal, 'objective' | 'energyScope'>): number {
  switch (g.objective) {
    case 'throughput':
      return s.periodMs;
    case 'energy':
      return simEnergyJ(s, g.energyScope);
    case 'latency':
      return s.latencyMs;
    default: {
      const never: never = g.objective;
      throw new Error(`unknown objective ${String(never)}`);
    }
  }
}

/** Lower is better: the goal's figure, then the other one (energy in the goal's scope, or the period). */
export function better(a: SimResult, b: SimResult, g: Pick<PlanGoal, 'objective' | 'energyScope'>): boolean {
  const other = { objective: g.objective === 'energy' ? 'throughput' : 'energy', energyScope: g.energyScope } as const;
  const d = metric(a, g) - metric(b, g);
  if (Math.abs(d) > 1e-12 * Math.max(metric(a, g), metric(b, g))) return d < 0;
  return metric(a, other) < metric(b, other);
}

export interface ScoreCache {
  get(key: string): SimResult | undefined;
  set(key: string, v: SimResult): void;
}

export function simScore(
  c: { sys: ReturnType<typeof systemFor>; p: PlanProblem },
  m: Mapping,
  cache?: ScoreCache,
): SimResult {
  const key = mappingLabel(m);
  const hit = cache?.get(key);
  if (hit) return hit;
  const r = simulate(c.sys, c.p, simStages(c.sys, c.p, m));
  cache?.set(key, r);
  return r;
}

/** The oracle: the best of every enumerated mapping by the simulation. */
export function oracle(
  sys: ReturnType<typeof systemFor>,
  p: PlanProblem,
  goal: PlanGoal,
  cache?: ScoreCache,
): { best: Scored; space: Scored[] } {
  const all = enumerateMappings(sys, p, planOpts(sys, goal));
  if (all.length === 0) throw new Error(`no mapping of ${p.kernel} is feasible on ${sys.name}`);
  const space = all.map((m) => ({ mapping: m, label: mappingLabel(m), sim: simScore({ sys, p }, m, cache) }));
  let best = space[0]!;
  for (const s of space) if (better(s.sim, best.sim, goal)) best = s;
  return { best, space };
}

export interface Trainer {
  guards(c: EvalCase): GuardPlan;
  static(c: EvalCase): StageChoice[] | undefined;
}

/** The inputs a case's guards and static mapping are trained on: every fold but the case's own. */
export function trainingInputs(c: EvalCase): EvalInput[] {
  return suiteInputs()
    .filter((x) => x.fold !== c.fold)
    .map((x) => x.input);
}

/** Training on the inputs of every fold but the case's own, cached. */
export function trainer(): Trainer {
  const g = new Map<string, GuardPlan>();
  const s = new Map<string, StageChoice[] | undefined>();
  const training = trainingInputs;
  const key = (c: EvalCase): string => `${c.workload.name}/${c.setting.name}/${c.goal.name}/${c.fold}`;
  return {
    guards(c) {
      let plan = g.get(key(c));
      if (!plan)
        g.set(
          key(c),
          (plan = trainGuards(
            systemFor(c.setting),
            c.workload.spec,
            training(c).map((i) => bindingFor(c.workload, i.features)),
            c.goal,
          )),
        );
      return plan;
    },
    static(c) {
      if (!s.has(key(c)))
        s.set(
          key(c),
          trainStatic(
            systemFor(c.setting),
            training(c).map((i) => problemFor(c.workload, i.features)),
            c.goal,
          ),
        );
      return s.get(key(c));
    },
  };
}

export function runCase(c: EvalCase, t: Trainer, cache?: ScoreCache): CaseResult {
  const sys = systemFor(c.setting);
  const b = bindingFor(c.workload, c.input.features);
  const p = problemFor(c.workload, c.input.features);
  const { best, space } = oracle(sys, p, c.goal, cache);
  const guards = t.guards(c);
  const picks: Record<Strategy, StrategyPick> = {
    dype: dypePick(sys, p, b, guards, c.goal),
    'dype-online': ((m) => ({ mapping: m, note: 'fresh plan with exact features' }))(online(sys, p, c.goal)),
    static: staticPick(sys, p, t.static(c), c.goal),
    'gpu-only': gpuOnlyPick(sys, p, c.goal),
    heft: heftPick(sys, p, c.goal),
    'online-no-split': onlineNoSplit(
      space.map((x) => x.mapping),
      c.goal.objective,
    ),
  };
  const ref = metric(best.sim, c.goal);
  const strategies = {} as Record<Strategy, StrategyResult>;
  for (const name of STRATEGIES) {
    const pick = picks[name];
    const r: StrategyResult = {
      strategy: name,
      note: pick.note,
      optimal: false,
      ...(pick.partition !== undefined ? { partition: pick.partition } : {}),
    };
    if (pick.mapping) {
      const why = feasibility(sys, p, pick.mapping, { pipelined: name !== 'heft' });
      if (why) r.infeasible = why;
      else {
        const sim = simScore({ sys, p }, pick.mapping, cache);
        r.scored = { mapping: pick.mapping, label: mappingLabel(pick.mapping), sim };
        r.lossPct = (metric(sim, c.goal) / ref - 1) * 100;
        r.optimal = r.lossPct <= OPTIMAL_TOLERANCE * 100;
      }
    } else r.infeasible = pick.note;
    strategies[name] = r;
  }
  return {
    case: c,
    oracle: best,
    space: space.map((s) => ({
      periodMs: s.sim.periodMs,
      deviceEnergyJ: s.sim.deviceEnergyJ,
      systemEnergyJ: s.sim.systemEnergyJ,
      label: s.label,
    })),
    strategies,
    guards,
  };
}

export interface SuiteOptions extends SuiteSelection {
  onProgress?: (done: number, total: number) => void;
}

export function runSuite(opts: SuiteOptions = {}): CaseResult[] {
  const cases = buildCases(opts);
  const t = trainer();
  const caches = new Map<string, Map<string, SimResult>>();
  const out: CaseResult[] = [];
  cases.forEach((c, i) => {
    const k = `${c.workload.name}/${c.input.name}/${c.setting.name}`;
    let cache = caches.get(k);
    if (!cache) caches.set(k, (cache = new Map()));
    out.push(runCase(c, t, cache));
    opts.onProgress?.(i + 1, cases.length);
  });
  return out;
}
