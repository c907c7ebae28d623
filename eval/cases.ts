/**
 * The case suite: workloads x inputs x system settings x objectives,
 * deterministic. Every workload meets every input; each (workload, input)
 * pair runs on one system setting, rotating so that each workload sees every
 * setting on several inputs; both objectives run on every pair. `quick`
 * keeps a representative subset: every workload and setting, both
 * objectives, on a few small real and generated inputs.
 */
import type { Objective } from '../runtime/plan/types.js';
import { generatedInputs, realInputs, type EvalInput } from './inputs.js';
import { SETTINGS, type Setting } from './systems.js';
import { workloads, type Workload } from './workloads.js';

export interface EvalCase {
  id: string;
  workload: Workload;
  input: EvalInput;
  setting: Setting;
  objective: Objective;
  /** Train/test fold of the input: guards and static are trained on the other folds' inputs. */
  fold: number;
}

export const FOLDS = 4;
const OBJECTIVES: readonly Objective[] = ['throughput', 'energy'];

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
  const inputs = all.filter(({ input }) => (sel.inputs ? sel.inputs.includes(input.name) : !sel.quick || QUICK_INPUTS.includes(input.name)));
  const cases: EvalCase[] = [];
  ws.forEach((w) => {
    const wi = workloads().indexOf(w);
    inputs.forEach(({ input, fold }) => {
      const ii = all.findIndex((x) => x.input.name === input.name);
      const setting = SETTINGS[(wi + ii) % SETTINGS.length]!;
      if (sel.settings && !sel.settings.includes(setting.name)) return;
      if (w.square && input.features.rows !== input.features.cols) return;
      for (const objective of OBJECTIVES) cases.push({ id: `${w.name}/${input.name}/${setting.name}/${objective}`, workload: w, input, setting, objective, fold });
    });
  });
  return cases;
}
