/**
 * Exhaustive enumeration of every mapping (all stage cuts, devices and
 * instance counts), scored with the same stage costs as the DP. Exponential:
 * for tests on small graphs and for the evaluation's oracle.
 */
import type { SystemSpec } from '../system/types.js';
import {
  cutPoints,
  evaluateChoices,
  paretoFilter,
  peakPowerW,
  sortByObjective,
  type PlanOptions,
  type StageChoice,
  usableInstances,
} from './dp.js';
import type { Mapping, PlanProblem } from './types.js';

export function enumerateMappings(sys: SystemSpec, p: PlanProblem, opts: PlanOptions): Mapping[] {
  const cuts = cutPoints(p);
  const n = p.ops.length;
  const out: Mapping[] = [];
  const rec = (i: number, used: number[], choices: StageChoice[]): void => {
    if (i === n) {
      if (opts.powerCapW !== undefined && peakPowerW(sys, used) > opts.powerCapW) return;
      const m = evaluateChoices(sys, p, choices, opts);
      if (!m) return;
      if (opts.latencyBoundMs !== undefined && m.latencyMs > opts.latencyBoundMs) return;
      out.push(m);
      return;
    }
    for (let j = i + 1; j <= n; j++) {
      if (!cuts[j]) continue;
      sys.devices.forEach((dev, s) => {
        for (let k = 1; k <= usableInstances(dev, opts) - used[s]!; k++) {
          const u = used.slice();
          u[s]! += k;
          rec(j, u, [...choices, { start: i, end: j, device: dev.id, count: k }]);
        }
      });
    }
  };
  rec(
    0,
    sys.devices.map(() => 0),
    [],
  );
  return out;
}

export function exhaustivePareto(sys: SystemSpec, p: PlanProblem, opts: PlanOptions): Mapping[] {
  const front = paretoFilter(enumerateMappings(sys, p, opts));
  sortByObjective(front, opts.objective);
  return front;
}
