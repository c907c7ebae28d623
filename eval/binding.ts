/** A workload bound to one input's features: the Binding the planner and guards take, and the bound problem. */
import { bindProblem, type Binding } from '../runtime/plan/bind.js';
import type { PlanProblem, SparseFeatures } from '../runtime/plan/types.js';
import type { Workload } from './workloads.js';

export function bindingFor(w: Workload, f: SparseFeatures): Binding {
  return {
    sparse: new Map([[w.matrix, f]]),
    dims: new Map(Object.entries({ n: f.rows, ...w.dims })),
    scalars: new Map(Object.entries(w.scalars)),
    trips: new Map(Object.entries(w.trips)),
  };
}

export function problemFor(w: Workload, f: SparseFeatures): PlanProblem {
  return bindProblem(w.spec, bindingFor(w, f));
}
