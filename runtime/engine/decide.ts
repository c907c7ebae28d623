/**
 * Whether to switch to the partition an input picks: the switching policy
 * (runtime/policy) weighs the gain per run on this input's predicted figures
 * times the runs expected to stay against the cost of switching (drain,
 * migration of resident data, FPGA bitstreams).
 */
import { scoreChoices } from '../guards/build.js';
import { evaluateChoices, idlePowerW, type PlanOptions } from '../plan/dp.js';
import { fpgaNeeds, switchCost, type SwitchCost } from '../policy/cost.js';
import type { SwitchPolicy } from '../policy/policy.js';
import type { SystemSpec } from '../system/types.js';
import type { Tensor } from '../tensor.js';
import type { Choice, Part } from './choose.js';

export interface Decision {
  switch: boolean;
  reason: string;
  cost: SwitchCost;
  gainPerRun: number | undefined;
  expectedRuns: number | undefined;
}

export class Decider {
  current: Part | undefined;
  /** FPGA designs each instance holds. */
  readonly loaded = new Map<string, Set<string>>();
  lastTensors = new Map<string, Tensor>();

  constructor(
    private readonly sys: SystemSpec,
    private readonly popts: PlanOptions,
  ) {}

  get units(): 'ms' | 'J' {
    return this.popts.objective === 'energy' ? 'J' : 'ms';
  }

  private costInUnits(ms: number): number {
    return this.popts.objective === 'energy' ? (ms / 1e3) * idlePowerW(this.sys) : ms;
  }

  decide(c: Choice, pol: SwitchPolicy): Decision {
    const resident = new Set([...c.b.tensors].filter(([n, t]) => this.lastTensors.get(n) === t).map(([n]) => n));
    const cur = this.current;
    const curMapping = cur ? evaluateChoices(this.sys, c.problem, cur.choices) : undefined;
    const cost = switchCost(this.sys, c.problem, cur ? { choices: cur.choices, mapping: curMapping } : undefined, c.selected.choices, resident, this.loaded);
    pol.observe(c.selected.key);
    if (!cur) return { switch: true, reason: 'initial partition', cost, gainPerRun: undefined, expectedRuns: undefined };
    const d = pol.decide(
      { current: scoreChoices(this.sys, c.problem, cur.choices, this.popts), candidate: scoreChoices(this.sys, c.problem, c.selected.choices, this.popts), cost: this.costInUnits(cost.totalMs), differs: c.selected.key !== cur.key },
      this.units,
    );
    // Out of range the pick is the DP's, not the guards'.
    const reason = c.replanInfo ? d.reason.replace(/^the guards pick/, 'the re-plan picks').replace(/^the guards\u2019 pick/, 'the re-plan\u2019s pick') : d.reason;
    return { ...d, reason, cost, gainPerRun: d.gainPerRun, expectedRuns: d.expectedRuns };
  }

  /** The partition now runs: its FPGA stages hold their designs. */
  switchTo(p: Part, c: Choice): void {
    for (const [dev, designs] of fpgaNeeds(this.sys, c.problem, p.choices)) this.loaded.set(dev, designs);
    this.current = p;
  }
}
