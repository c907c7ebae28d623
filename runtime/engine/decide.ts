/**
 * Whether to switch to the partition an input picks: the switching policy
 * (runtime/policy) weighs the gain per run on this input's predicted figures
 * times the runs expected to stay against the cost of switching (drain,
 * migration of resident data, FPGA bitstreams), both in the units of the
 * objective that chose the input (ms, or J for energy). The policy's state
 * (streaks, dwell) is one across objectives.
 */
import { type PlanOptions, type StageChoice } from '../plan/dp.js';
import type { Objective } from '../plan/types.js';
import { energyIn, unusedIdleW, waitingDrawW } from '../plan/figures.js';
import { fpgaNeeds, switchCost, type SwitchCost } from '../policy/cost.js';
import type { SwitchPolicy } from '../policy/policy.js';
import type { SystemSpec } from '../system/types.js';
import type { Tensor } from '../tensor.js';
import type { Choice, Part } from './choose.js';
import type { ModelMemo } from './memo.js';

export interface Decision {
  switch: boolean;
  reason: string;
  cost: SwitchCost;
  gainPerRun: number | undefined;
  expectedRuns: number | undefined;
}

/** The switch cost of staying. */
const NO_SWITCH: SwitchCost = { drainMs: 0, migrationMs: 0, bitstreamMs: 0, bitstreams: [], totalMs: 0 };

export class Decider {
  current: Part | undefined;
  /** FPGA designs each instance holds. */
  readonly loaded = new Map<string, Set<string>>();
  lastTensors = new Map<string, Tensor>();

  constructor(
    private readonly sys: SystemSpec,
    /** The planner's options (goal, constraints) of each objective with guards. */
    private readonly popts: (o: Objective) => PlanOptions,
    private readonly memo: ModelMemo,
  ) {}

  static unitsOf(o: Objective): 'ms' | 'J' {
    return o === 'energy' ? 'J' : 'ms';
  }

  /**
   * A switch's time in the objective's units. For energy: while the
   * pipeline drains, data moves and bitstreams load, the instances the new
   * partition uses are powered up and wait (device scope); the system scope
   * adds every other instance's idle draw.
   */
  private costInUnits(ms: number, next: readonly StageChoice[], popts: PlanOptions): number {
    if (popts.objective !== 'energy') return ms;
    const used = this.sys.devices.map((d) => next.filter((c) => c.device === d.id).reduce((a, c) => a + c.count, 0));
    const waiting = waitingDrawW(this.sys, used);
    return (ms / 1e3) * energyIn(popts.energyScope, waiting, waiting + unusedIdleW(this.sys, used));
  }

  /** Weighs the switch to the input's pick in the units of the objective that chose it. */
  decide(c: Choice, pol: SwitchPolicy): Decision {
    const cur = this.current;
    const units = Decider.unitsOf(c.objective);
    pol.observe(c.selected.key);
    if (cur && cur.key === c.selected.key) {
      // The guards pick the running partition: nothing moves, nothing to weigh.
      const d = pol.decide({ current: 0, candidate: 0, cost: 0, differs: false }, units);
      return {
        switch: d.switch,
        reason: d.reason,
        cost: NO_SWITCH,
        gainPerRun: d.gainPerRun,
        expectedRuns: d.expectedRuns,
      };
    }
    const resident = new Set([...c.b.tensors].filter(([n, t]) => this.lastTensors.get(n) === t).map(([n]) => n));
    const curMapping = cur ? this.memo.mapping(c.problem, cur) : undefined;
    const cost = switchCost(
      this.sys,
      c.problem,
      cur ? { choices: cur.choices, mapping: curMapping } : undefined,
      c.selected.choices,
      resident,
      this.loaded,
    );
    if (!cur)
      return { switch: true, reason: 'initial partition', cost, gainPerRun: undefined, expectedRuns: undefined };
    const popts = this.popts(c.objective);
    const d = pol.decide(
      {
        current: this.memo.score(c.problem, cur, popts),
        candidate: this.memo.score(c.problem, c.selected, popts),
        cost: this.costInUnits(cost.totalMs, c.selected.choices, popts),
        differs: true,
      },
      units,
    );
    // Out of range the pick is the DP's, not the guards'.
    const reason = c.replanInfo
      ? d.reason
          .replace(/^the guards pick/, 'the re-plan picks')
          .replace(/^the guards\u2019 pick/, 'the re-plan\u2019s pick')
      : d.reason;
    return { switch: d.switch, reason, cost, gainPerRun: d.gainPerRun, expectedRuns: d.expectedRuns };
  }

  /** The partition now runs: its FPGA stages hold their designs. */
  switchTo(p: Part, c: Choice): void {
    for (const [dev, designs] of fpgaNeeds(this.sys, c.problem, p.choices)) this.loaded.set(dev, designs);
    this.current = p;
  }
}
