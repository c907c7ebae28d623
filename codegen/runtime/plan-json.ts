/**
 * plan.json (top level of the output directory): per kernel the PlanSpec,
 * each profile's features and Pareto set, the guards (partitions with
 * fallbacks, tree, training accuracy and mean loss, ranges), plus the
 * system and the cost model's constants the predictions came from.
 */
import type { KernelProfiles } from './profiles.js';
import type { KernelRuntime } from './emit-ts.js';
import { planOptions } from '../../runtime/guards/build.js';
import { bindProblem } from '../../runtime/plan/bind.js';
import { MODEL } from '../../runtime/plan/cost.js';
import { planPareto } from '../../runtime/plan/dp.js';
import type { SystemSpec } from '../../runtime/system/types.js';

export function planJson(program: string, source: string, sys: SystemSpec, kernels: readonly (KernelRuntime & { profiles: KernelProfiles })[]): string {
  const out = {
    format: 'dype-plan',
    version: 1,
    program,
    source,
    system: sys,
    kernels: Object.fromEntries(
      kernels.map(({ kernel, spec, plan, profiles }) => {
        const popts = planOptions(sys, plan.objective);
        return [
          kernel.name,
          {
            objective: plan.objective,
            spec,
            profiles: profiles.bindings.map((b, i) => ({
              source: profiles.sources[i],
              features: Object.fromEntries([...b.sparse].map(([n, f]) => [n, f])),
              dims: Object.fromEntries(b.dims),
              scalars: Object.fromEntries(b.scalars),
              pareto: planPareto(sys, bindProblem(spec, b), popts).pareto.map((m) => ({
                stages: m.stages.map((s) => ({ ops: s.ops, devices: s.devices, variants: s.variants })),
                period_ms: m.periodMs,
                latency_ms: m.latencyMs,
                energy_j: m.energyJ,
                power_w: m.powerW,
              })),
            })),
            sampleRanges: profiles.ranges,
            guards: plan,
          },
        ];
      }),
    ),
    model: { costModel: MODEL, note: 'constants of runtime/plan/cost.ts; device figures are in system' },
  };
  return `${JSON.stringify(out, null, 2)}\n`;
}
