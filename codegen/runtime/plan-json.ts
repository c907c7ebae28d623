/**
 * plan.json (top level of the output directory): the program's hash (native
 * libraries must carry the same), per kernel the PlanSpec (each op with the
 * implementations its program has, runtime/catalogue names), each profile's
 * features and Pareto set over the three objectives (with the
 * implementation chosen per op), the guards of every objective (partitions
 * with fallbacks, tree, training accuracy and mean loss, ranges, each
 * numbering its own partitions) with each one's partition ids in the table,
 * the table's partitions (every objective's, the same stage choices once)
 * with their stages and the implementations each op may run as there, plus
 * the system and the cost model's constants.
 */
import type { KernelProfiles } from './profiles.js';
import type { KernelRuntime } from './emit-ts.js';
import { planOptions } from '../../runtime/guards/build.js';
import { bindProblem } from '../../runtime/plan/bind.js';
import { MODEL } from '../../runtime/plan/cost.js';
import { planPareto } from '../../runtime/plan/dp.js';
import type { PlanSpec } from '../../runtime/plan/types.js';
import { stageInstances } from '../../runtime/policy/cost.js';
import type { PartitionTable } from '../../runtime/guards/objectives.js';
import { partitionTable } from '../../runtime/guards/objectives.js';
import type { SystemSpec } from '../../runtime/system/types.js';

/** Each partition of the table: the objectives whose guards hold it, its stages: ops, device, instances, and per op the implementations the runtime picks among for each input. */
function partitionStages(spec: PlanSpec, sys: SystemSpec, table: PartitionTable): unknown[] {
  return table.partitions.map((p) => {
    const inst = stageInstances(p.choices);
    return {
      id: p.id,
      label: p.label,
      objectives: p.objectives,
      stages: p.choices.map((c, i) => {
        const kind = sys.devices.find((d) => d.id === c.device)!.kind;
        const ops = spec.ops.slice(c.start, c.end);
        return {
          ops: ops.map((o) => o.id),
          device: c.device,
          kind,
          instances: inst[i],
          implementations: Object.fromEntries(ops.map((o) => [o.id, o.impls[kind]])),
        };
      }),
    };
  });
}

/** The plan.json format this dype writes and reads (cli/run-project.ts refuses others); 5: ops carry loops and columns. */
export const PLAN_JSON_VERSION = 5;

export function planJson(
  program: string,
  source: string,
  programHash: string,
  sys: SystemSpec,
  kernels: readonly (KernelRuntime & { profiles: KernelProfiles })[],
): string {
  const out = {
    format: 'dype-plan',
    // 3: guard plans record their energy scope and stream length.
    // 4: guards per objective (throughput, energy, latency) over one partition table; `objective` is the runtime's initial one.
    version: PLAN_JSON_VERSION,
    program,
    source,
    programHash,
    system: sys,
    kernels: Object.fromEntries(
      kernels.map(({ kernel, spec, objective, plans, profiles }) => {
        // The Pareto set is over all three objectives; it is listed best first for the initial one.
        const popts = planOptions(sys, plans[objective]!);
        const table = partitionTable(plans, objective);
        return [
          kernel.name,
          {
            objective,
            objectives: table.objectives,
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
            guards: Object.fromEntries(table.objectives.map((o) => [o, plans[o]])),
            partitionIds: table.ids,
            partitions: partitionStages(spec, sys, table),
          },
        ];
      }),
    ),
    model: {
      costModel: MODEL,
      note: 'constants of runtime/plan/model.ts (implementations: runtime/catalogue); device figures are in system',
    },
  };
  return `${JSON.stringify(out, null, 2)}\n`;
}
