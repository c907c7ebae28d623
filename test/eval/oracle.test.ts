/** The oracle equals a brute-force search written here: every stage cut, device and instance count, scored by the simulation. */
import { describe, expect, it } from 'vitest';
import { problemFor } from '../../eval/binding.js';
import { metric, oracle } from '../../eval/evaluate.js';
import { generatedInputs, realInputs } from '../../eval/inputs.js';
import { simulate, type SimResult, type SimStage } from '../../eval/sim/index.js';
import { SETTINGS, systemFor } from '../../eval/systems.js';
import { workloads } from '../../eval/workloads.js';
import { evaluateChoices } from '../../runtime/plan/dp.js';
import { GOALS, type EvalGoal } from '../../eval/cases.js';
import type { PlanProblem } from '../../runtime/plan/types.js';
import type { SystemSpec } from '../../runtime/system/types.js';

function bruteForce(sys: SystemSpec, p: PlanProblem, goal: EvalGoal): { best: number; count: number } {
  const n = p.ops.length;
  const cap = sys.constraints.powerCapW ?? Infinity;
  let best = Infinity;
  let count = 0;
  const rec = (i: number, used: Map<string, number>, stages: SimStage[]): void => {
    if (i === n) {
      const draw = sys.devices.reduce(
        (a, d) => a + (used.get(d.id) ?? 0) * d.activePowerW + (d.count - (used.get(d.id) ?? 0)) * d.idlePowerW,
        0,
      );
      if (draw > cap) return;
      // Stage-local constraints (memory, FPGA resources) as the planner states them.
      const choices = stages.map((s) => ({
        start: s.ops[0]!,
        end: s.ops[s.ops.length - 1]! + 1,
        device: s.device.id,
        count: s.instances.length,
      }));
      if (!evaluateChoices(sys, p, choices, goal)) return;
      count++;
      const r: SimResult = simulate(sys, p, stages);
      best = Math.min(best, metric(r, goal));
      return;
    }
    for (let j = i + 1; j <= n; j++) {
      // A repeat region stays in one stage.
      if (j < n && p.ops[j]!.group !== undefined && p.ops[j]!.group === p.ops[j - 1]!.group) continue;
      for (const d of sys.devices) {
        const taken = used.get(d.id) ?? 0;
        for (let k = 1; taken + k <= d.count; k++) {
          const next = new Map(used).set(d.id, taken + k);
          const instances = Array.from({ length: k }, (_, x) => `${d.id}${taken + x}`);
          rec(j, next, [...stages, { ops: Array.from({ length: j - i }, (_, x) => i + x), device: d, instances }]);
        }
      }
    }
  };
  rec(0, new Map(), []);
  return { best, count };
}

describe('oracle', () => {
  const input = (name: string) => [...realInputs(), ...generatedInputs()].find((x) => x.name === name)!;
  const cases: [string, string, string, string][] = [
    ['spmv-chain', 'karate', '1g1f', 'throughput'],
    ['spmv-chain', 'cage8', '2g2f-cap650', 'energy-system'],
    ['pagerank', 'rmat-128k-d16', '2g2f-no-p2p', 'throughput'],
    ['gcn', 'ca-GrQc', '1g1f-cap370', 'energy-device'],
    ['spmm-chain', 'banded-8k-d32', '1g1f-no-p2p', 'throughput'],
  ];
  for (const [wn, inn, sn, goalName] of cases) {
    const obj = GOALS.find((g) => g.name === goalName)!;
    it(`${wn} on ${inn}, ${sn}, ${goalName}: the best enumerated mapping is the brute-force optimum`, () => {
      const w = workloads().find((x) => x.name === wn)!;
      const sys = systemFor(SETTINGS.find((s) => s.name === sn)!);
      const p = problemFor(w, input(inn).features);
      const o = oracle(sys, p, obj);
      const bf = bruteForce(sys, p, obj);
      expect(o.space.length).toBe(bf.count);
      expect(metric(o.best.sim, obj)).toBe(bf.best);
    });
  }
});
