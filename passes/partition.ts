/**
 * partition: runs the planner on a kernel for given data features and a
 * system, and records the chosen mapping on the ops: `stage` (index in the
 * pipeline), `devices` (instances) and `variant` (kernel variant). Unlike the
 * other passes it needs the data, so it is built per call from the planner's
 * inputs; `dype ir --input ...` appends it to the pipeline.
 */
import type { Kernel, Module, Op } from '../ir/module.js';
import { bindProblem, type Binding } from '../runtime/plan/bind.js';
import { planPareto } from '../runtime/plan/dp.js';
import type { OpImpls } from '../runtime/catalogue/index.js';
import type { PlanGoal } from '../runtime/plan/figures.js';
import type { SystemSpec } from '../runtime/system/types.js';
import type { Pass } from './manager.js';
import { planSpec } from './plan-spec.js';

/** The goal (objective, energy scope, stream length) and the data. */
export interface PartitionOptions extends PlanGoal {
  system: SystemSpec;
  binding: Binding;
  /** Only this kernel (the others keep no mapping): the data belongs to one kernel. */
  kernel: string;
  /** The implementations its program has per op (codegen/implementations.ts). */
  impls: ReadonlyMap<string, OpImpls>;
}

export class PartitionError extends Error {}

function partitionKernel(k: Kernel, o: PartitionOptions): Kernel {
  const problem = bindProblem(planSpec(k, o.impls), o.binding);
  const out = planPareto(o.system, problem, {
    objective: o.objective,
    energyScope: o.energyScope,
    streamLength: o.streamLength,
    ...(o.system.constraints.powerCapW !== undefined ? { powerCapW: o.system.constraints.powerCapW } : {}),
    ...(o.system.constraints.latencyBoundMs !== undefined
      ? { latencyBoundMs: o.system.constraints.latencyBoundMs }
      : {}),
  });
  const best = out.pareto[0];
  if (!best)
    throw new PartitionError(
      `no mapping of kernel ${k.name} is feasible on ${o.system.name}: ${out.infeasible.slice(0, 2).join('; ')}`,
    );
  const where = new Map<string, { stage: number; devices: string[]; variant: string }>();
  best.stages.forEach((s, i) =>
    s.ops.forEach((id) => where.set(id, { stage: i, devices: s.devices, variant: s.variants[id] ?? '' })),
  );
  const visit = (ops: Op[]): Op[] =>
    ops.map((op) => {
      if (op.kind === 'repeat') return { ...op, body: visit(op.body) };
      const w = where.get(op.id)!;
      return { ...op, attrs: { ...op.attrs, stage: w.stage, devices: w.devices, variant: w.variant } };
    });
  return { ...k, body: visit(k.body) };
}

export function partitionPass(o: PartitionOptions): Pass {
  return {
    name: 'partition',
    description: `map ops to pipeline stages of ${o.system.name} for the given data (objective ${o.objective})`,
    run: (m: Module): Module => ({ kernels: m.kernels.map((k) => (k.name === o.kernel ? partitionKernel(k, o) : k)) }),
  };
}
