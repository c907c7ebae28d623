/**
 * Whether to switch to the partition an input picks: the switching policy
 * (runtime/policy) weighs the gain per run on this input's predicted figures
 * times the runs expected to stay against the cost of switching (drain,
 * migration of resident data, FPGA bitstreams).
 */
import { scoreChoices } from '../guards/build.js';
import { evaluateChoices, type PlanOptions, type StageChoice } from '../plan/dp.js';
import { energyIn, unusedIdleW, waitingDrawW } from '../plan/figures.js';
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

  /**
   * A switch's time in the objective's units. For energy: while the
   * pipeline drains, data moves and bitstreams load, the instances the new
   * partition uses are powered up and wait (device scope); the system scope
   * adds every other instance's idle draw.
   */
  private costInUnits(ms: number, next: readonly StageChoice[]): number {
    if (this.popts.objective !== 'energy') return ms;
    const used = this.sys.devices.map((d) => next.filter((c) => c.device === d.id).reduce((a, c) => a + c.count, 0));
    const waiting = waitingDrawW(this.sys, used);
    return (ms / 1e3) * energyIn(this.popts.energyScope, waiting, waiting + unusedIdleW(this.sys, used));
  }

  decide(c: Choice, pol: SwitchPolicy): Decision {
    const resident = new Set([...c.b.tensors].filter(([n, t]) => this.lastTensors.get(n) === t).map(([n]) => n));
    const cur = this.current;
    const curMapping = cur ? evaluateChoices(this.sys, c.problem, cur.choices, this.popts) : undefined;
    const cost = switchCost(this.sys, c.problem, cur ? { choices: cur.choices, mapping: curMapping } : undefined, c.selected.choices, resident, this.loaded);
    pol.observe(c.selected.key);
    if (!cur) return { switch: true, reason: 'initial partition', cost, gainPerRun: undefined, expectedRuns: undefined };
    const d = pol.decide(
      { current: scoreChoices(this.sys, c.problem, cur.choices, this.popts), candidate: scoreChoices(this.sys, c.problem, c.selected.choices, this.popts), cost: this.costInUnits(cost.totalMs, c.selected.choices), differs: c.selected.key !== cur.key },
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
