/**
 * The report target of `dype compile` (DESIGN.md section 9, report.html):
 * for each kernel the profiles bind, the planner's Pareto set for the first
 * profile re-scored by the evaluation's event simulation, each objective's
 * guards (the partition table they share, accuracy, and a decision map over
 * density x row-length CV), and the simulated pipeline of
 * the best mapping. It lives in cli/ because it joins codegen (the guards
 * the runtime target builds) and eval (the simulation and the plots).
 */
import { buildKernelGuards } from '../codegen/runtime/project.js';
import type { CompileTarget, ProjectFiles, TargetContext } from '../codegen/project.js';
import { renderProgramReport } from '../eval/report/program.js';
import { bindProblem, type Binding } from '../runtime/plan/bind.js';
import { planPareto } from '../runtime/plan/dp.js';
import { partitionTable, planOptions } from '../runtime/guards/index.js';
import type { SparseFeatures } from '../runtime/plan/types.js';
import { InputError } from '../runtime/errors.js';

export const reportTarget: CompileTarget = {
  name: 'report',
  topLevelFiles: 'all',
  needsProfiles: true,
  async emit(ctx: TargetContext): Promise<ProjectFiles> {
    const { sys, kernels } = buildKernelGuards(ctx, { target: 'report' });
    const files: ProjectFiles = new Map();
    kernels.forEach((kg, i) => {
      const first = kg.profiles.bindings[0]!;
      const problem = bindProblem(kg.spec, first);
      const pareto = planPareto(sys, problem, planOptions(sys, kg.plans[kg.objective]!)).pareto;
      if (pareto.length === 0)
        throw new InputError(
          'DY3030',
          sys.name,
          undefined,
          `no mapping of kernel ${kg.kernel.name} is feasible for profile ${kg.profiles.sources[0]}`,
        );
      const sparseName = [...first.sparse.keys()][0];
      // The decision map varies the first sparse input's features; everything else stays as in the first profile.
      const bind = (f: SparseFeatures): Binding => ({
        ...first,
        sparse: new Map([...first.sparse].map(([n, v]) => [n, n === sparseName ? f : v])),
      });
      const t = partitionTable(kg.plans, kg.objective);
      const guards = t.objectives.map((o) => ({ objective: o, plan: kg.plans[o]!, ids: t.ids[o]! }));
      const html = renderProgramReport({
        title: `${ctx.program.name}: ${kg.kernel.name}`,
        sys,
        problem,
        objective: kg.objective,
        mappings: pareto,
        guards,
        partitions: t.partitions,
        bind,
        profileNames: kg.profiles.sources,
      });
      files.set(i === 0 ? 'report.html' : `report-${kg.kernel.name}.html`, html);
    });
    return files;
  },
};
