/**
 * plan.json (top level of the output directory): the program's hash (native
 * libraries must carry the same), per kernel the PlanSpec (each op with the
 * implementations its program has, runtime/catalogue names), each profile's
 * features and Pareto set (with the implementation chosen per op), the
 * guards (partitions with fallbacks, tree, training accuracy and mean loss,
 * ranges), each partition's stages with the implementations each op may run
 * as there, plus the system and the cost model's constants.
 */
import type { KernelProfiles } from './profiles.js';
import type { KernelRuntime } from './emit-ts.js';
import { planOptions } from '../../runtime/guards/build.js';
import { bindProblem } from '../../runtime/plan/bind.js';
import { MODEL } from '../../runtime/plan/cost.js';
import { planPareto } from '../../runtime/plan/dp.js';
import type { PlanSpec } from '../../runtime/plan/types.js';
import { stageInstances } from '../../runtime/policy/cost.js';
import type { GuardPlan } from '../../runtime/guards/types.js';
import type { SystemSpec } from '../../runtime/system/types.js';

/** Each guarded partition's stages: ops, device, instances, and per op the implementations the runtime picks among for each input. */
function partitionStages(spec: PlanSpec, sys: SystemSpec, plan: GuardPlan): unknown[] {
  return plan.partitions.map((p) => {
    const inst = stageInstances(p.choices);
    return {
      id: p.id,
      label: p.label,
      stages: p.choices.map((c, i) => {
        const kind = sys.devices.find((d) => d.id === c.device)!.kind;
        const ops = spec.ops.slice(c.start, c.end);
        return { ops: ops.map((o) => o.id), device: c.device, kind, instances: inst[i], implementations: Object.fromEntries(ops.map((o) => [o.id, o.impls[kind]])) };
      }),
    };
  });
}

/** The plan.json format this dype writes and reads (cli/run-project.ts refuses others). */
export const PLAN_JSON_VERSION = 3;

export function planJson(program: string, source: string, programHash: string, sys: SystemSpec, kernels: readonly (KernelRuntime & { profiles: KernelProfiles })[]): string {
  const out = {
    format: 'dype-plan',
    // 3: guard plans record their energy scope and stream length.
    version: PLAN_JSON_VERSION,
    program,
    source,
    programHash,
    system: sys,
    kernels: Object.fromEntries(
      kernels.map(({ kernel, spec, plan, profiles }) => {
        const popts = planOptions(sys, plan);
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
                per_input_ms: m.perInputMs,
                latency_ms: m.latencyMs,
                energy_j: m.energyJ,
                device_energy_j: m.deviceEnergyJ,
                system_energy_j: m.systemEnergyJ,
                power_w: m.powerW,
              })),
            })),
            sampleRanges: profiles.ranges,
            guards: plan,
            partitions: partitionStages(spec, sys, plan),
          },
        ];
      }),
    ),
    model: { costModel: MODEL, note: 'constants of runtime/plan/model.ts (implementations: runtime/catalogue); device figures are in system' },
  };
  return `${JSON.stringify(out, null, 2)}\n`;
}
