/** The suite: at least 86 cases, deterministic, every strategy's mapping feasible, guards never trained on the case's input. */
import { describe, expect, it } from 'vitest';
import { problemFor } from '../../eval/binding.js';
import { buildCases } from '../../eval/cases.js';
import { runSuite, trainingInputs } from '../../eval/evaluate.js';
import { STRATEGIES } from '../../eval/strategies.js';
import { casesCsv, summarise } from '../../eval/summary.js';
import { systemFor } from '../../eval/systems.js';
import { choicesOf, evaluateChoices } from '../../runtime/plan/dp.js';
import { instances } from '../../runtime/system/types.js';

const selection = {
  workloads: ['spmv-chain', 'pagerank', 'gcn'],
  inputs: ['karate', 'cage8', 'ca-GrQc', 'rmat-128k-d16', 'banded-8k-d32'],
};

describe('suite', () => {
  it('has at least 86 cases over every workload, setting and objective; --quick is a subset', () => {
    const all = buildCases();
    expect(all.length).toBeGreaterThanOrEqual(86);
    expect(new Set(all.map((c) => c.workload.name)).size).toBe(6);
    expect(new Set(all.map((c) => c.setting.name)).size).toBe(7);
    expect(new Set(all.map((c) => c.goal.name))).toEqual(new Set(['throughput', 'energy-device', 'energy-system']));
    expect(new Set(all.map((c) => c.input.family))).toEqual(
      new Set(['real', 'erdos-renyi', 'rmat', 'banded', 'empty-rows']),
    );
    const quick = buildCases({ quick: true });
    expect(quick.length).toBeLessThan(all.length);
    expect(new Set(quick.map((c) => c.setting.name)).size).toBe(7);
    for (const c of all) expect(trainingInputs(c).map((i) => i.name)).not.toContain(c.input.name);
  });

  const first = runSuite(selection);

  it('is deterministic: the same figures twice', () => {
    const second = runSuite(selection);
    expect(casesCsv(second)).toBe(casesCsv(first));
    expect(summarise(second)).toEqual(summarise(first));
    // Per preset: every case counted once.
    const per = summarise(first).per_preset;
    expect(Object.values(per).reduce((a, p) => a + p.cases, 0)).toBe(first.length);
  });

  it("every strategy's mapping is feasible under the case's constraints and no better than the oracle unless it is HEFT", () => {
    expect(first.length).toBeGreaterThan(10);
    for (const r of first) {
      const sys = systemFor(r.case.setting);
      const p = problemFor(r.case.workload, r.case.input.features);
      const names = new Map(instances(sys).map((x) => [x.name, x.spec]));
      for (const s of STRATEGIES) {
        const x = r.strategies[s];
        if (!x.scored) {
          expect(x.infeasible, `${r.case.id} ${s}`).toBeDefined();
          continue;
        }
        const m = x.scored.mapping;
        const used = new Set(m.stages.flatMap((st) => st.devices));
        for (const u of used) expect(names.has(u), `${r.case.id} ${s}: ${u}`).toBe(true);
        const draw = [...names].reduce((a, [n, spec]) => a + (used.has(n) ? spec.activePowerW : spec.idlePowerW), 0);
        expect(draw, `${r.case.id} ${s} power`).toBeLessThanOrEqual(sys.constraints.powerCapW ?? Infinity);
        const placed = m.stages.flatMap((st) => st.ops).sort();
        expect(placed).toEqual(p.ops.map((o) => o.id).sort());
        if (s !== 'heft') {
          expect(evaluateChoices(sys, p, choicesOf(p, m), r.case.goal), `${r.case.id} ${s}`).toBeDefined();
          expect(used.size).toBe(m.stages.reduce((a, st) => a + st.devices.length, 0));
          expect(x.lossPct!, `${r.case.id} ${s}`).toBeGreaterThanOrEqual(-1e-9);
        }
      }
    }
  });
});
