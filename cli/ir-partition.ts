/** The partition pass for `dype ir --input ...`: the data's features and the system, bound for one kernel. */
import { plannedSpec } from '../codegen/implementations.js';
import { partitionPass } from '../passes/partition.js';
import type { Pass } from '../passes/index.js';
import type { Tensor } from '../runtime/tensor.js';
import { loadInputs, parseAssignments, parseScalars } from './inputs.js';
import { boundDims, loadSystem, parseGoal, sparseFeatures, type GoalOptions } from './planning.js';
import { DEFAULT_PLAN_SYSTEM } from './defaults.js';
import { optimise, selectKernel, type LoadedProgram } from './program.js';

export function partitionFor(
  p: LoadedProgram,
  file: string,
  o: GoalOptions & { kernel?: string; input: string[]; param: string[]; system?: string },
): Pass {
  const module = optimise(p);
  const kernel = selectKernel(module, file, o.kernel);
  const scalars = parseScalars(kernel, parseAssignments(o.param, '--param'));
  const loaded = loadInputs(kernel, parseAssignments(o.input, '--input'), scalars);
  const tensors = new Map<string, Tensor>([...loaded].map(([n, li]) => [n, li.tensor]));
  const system = loadSystem({ ...(o.system !== undefined ? { system: o.system } : {}) }, DEFAULT_PLAN_SYSTEM);
  return partitionPass({
    system,
    binding: { sparse: sparseFeatures(kernel, tensors), dims: boundDims(kernel, tensors, scalars, loaded), scalars },
    ...parseGoal(o),
    kernel: kernel.name,
    impls: new Map(plannedSpec(module, file, kernel.name).ops.map((op) => [op.id, op.impls])),
  });
}
