/**
 * The case suite: workloads x inputs x system settings x goals,
 * deterministic. Every workload meets every input; each (workload, input)
 * pair runs on one system setting, rotating so that each workload sees every
 * setting on several inputs; every goal (throughput, energy counted on the
 * devices used, energy of the whole system) runs on every pair. `quick`
 * keeps a representative subset: every workload, setting and goal, on a few
 * small real and generated inputs.
 */
import { DEFAULT_ENERGY_SCOPE, ENERGY_SCOPES, type PlanGoal } from '../runtime/plan/figures.js';
import { generatedInputs, realInputs, type EvalInput } from './inputs.js';
import { SIM } from './sim/params.js';
import { SETTINGS, type Setting } from './systems.js';
import { workloads, type Workload } from './workloads.js';

export interface EvalCase {
  id: string;
  workload: Workload;
  input: EvalInput;
  setting: Setting;
  goal: EvalGoal;
  /** Train/test fold of the input: guards and static are trained on the other folds' inputs. */
  fold: number;
}

export const FOLDS = 4;

/** What a case optimises, and how every strategy plans for it: for the simulation's stream, energy in one scope. */
export interface EvalGoal extends PlanGoal {
  /** `throughput`, `energy-device`, `energy-system`: the case id's last part. */
  name: string;
}

/**
 * Throughput (its energy counted in the planner's default scope, which only
 * breaks ties), and energy in each scope. Every strategy plans for the
 * stream the simulation runs (one fact: SIM.streamLength).
 */
export const GOALS: readonly EvalGoal[] = [
  { name: 'throughput', objective: 'throughput', energyScope: DEFAULT_ENERGY_SCOPE, streamLength: SIM.streamLength },
  ...ENERGY_SCOPES.map((energyScope): EvalGoal => ({
    name: `energy-${energyScope}`,
    objective: 'energy',
    energyScope,
    streamLength: SIM.streamLength,
  })),
];

export interface SuiteSelection {
  quick?: boolean;
  /** Only these workloads / settings / inputs (tests). */
  workloads?: readonly string[];
  settings?: readonly string[];
  inputs?: readonly string[];
}

/** Every input of the suite, real then generated, each with its fold. */
export function suiteInputs(): { input: EvalInput; fold: number }[] {
  return [...realInputs(), ...generatedInputs()].map((input, i) => ({ input, fold: i % FOLDS }));
}

const QUICK_INPUTS = ['karate', 'cage8', 'ca-GrQc', 'rmat-128k-d16', 'banded-8k-d32', 'erdos-renyi-2M-d8'];

export function buildCases(sel: SuiteSelection = {}): EvalCase[] {
  const all = suiteInputs();
  const ws = workloads().filter((w) => !sel.workloads || sel.workloads.includes(w.name));
  const inputs = all.filter(({ input }) =>
    sel.inputs ? sel.inputs.includes(input.name) : !sel.quick || QUICK_INPUTS.includes(input.name),
  );
  const cases: EvalCase[] = [];
  ws.forEach((w) => {
    const wi = workloads().indexOf(w);
    inputs.forEach(({ input, fold }) => {
      const ii = all.findIndex((x) => x.input.name === input.name);
      const setting = SETTINGS[(wi + ii) % SETTINGS.length]!;
      if (sel.settings && !sel.settings.includes(setting.name)) return;
      if (w.square && input.features.rows !== input.features.cols) return;
      for (const goal of GOALS)
        cases.push({
          id: `${w.name}/${input.name}/${setting.name}/${goal.name}`,
          workload: w,
          input,
          setting,
          goal,
          fold,
        });
    });
  });
  return cases;
}
