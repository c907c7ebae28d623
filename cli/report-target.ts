/**
 * The report target of `dype compile` (report.html; docs/CLI.md): for each
 * kernel the profiles bind, every profile's Pareto set re-scored by the
 * evaluation's event simulation, each objective's guards (the partition
 * table they share, accuracy, and a decision map over the density x
 * row-length CV ranges they were built for). It lives in cli/ because it
 * joins codegen (the guards the runtime target builds) and eval (the
 * simulation and the plots).
 */
import { buildKernelGuards } from '../codegen/runtime/project.js';
import type { CompileTarget, ProjectFiles, TargetContext } from '../codegen/project.js';
import { renderProgramReport, reportTitle, type ProfileView } from '../eval/report/program.js';
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
      const { bindings, sources, shapeDims } = kg.profiles;
      const profiles: ProfileView[] = bindings.map((b, j) => {
        const problem = bindProblem(kg.spec, b);
        const mappings = planPareto(sys, problem, planOptions(sys, kg.plans[kg.objective]!)).pareto;
        if (mappings.length === 0)
          throw new InputError(
            'DY3030',
            sys.name,
            undefined,
            `no mapping of kernel ${kg.kernel.name} is feasible for profile ${sources[j]}`,
          );
        return { name: sources[j]!, problem, mappings };
      });
      const first = bindings[0]!;
      const sparseName = [...first.sparse.keys()][0];
      // The decision map varies the first sparse input's features and the dims its shape binds; the rest stays as in the first profile.
      const bind = (f: SparseFeatures): Binding => {
        const dims = new Map(first.dims);
        const [r, c] = sparseName ? (shapeDims[sparseName] ?? []) : [];
        if (r !== undefined) dims.set(r, f.rows);
        if (c !== undefined) dims.set(c, f.cols);
        return { ...first, dims, sparse: new Map([...first.sparse].map(([n, v]) => [n, n === sparseName ? f : v])) };
      };
      const t = partitionTable(kg.plans, kg.objective);
      const guards = t.objectives.map((o) => ({ objective: o, plan: kg.plans[o]!, ids: t.ids[o]! }));
      const span = sparseName
        ? {
            param: sparseName,
            profiles: bindings.map((b, j) => ({ name: sources[j]!, features: b.sparse.get(sparseName)! })),
          }
        : undefined;
      const html = renderProgramReport({
        title: reportTitle(ctx.program.name, kg.kernel.name),
        sys,
        objective: kg.objective,
        profiles,
        guards,
        partitions: t.partitions,
        bind,
        ...(span ? { span } : {}),
      });
      files.set(i === 0 ? 'report.html' : `report-${kg.kernel.name}.html`, html);
    });
    return files;
  },
};
