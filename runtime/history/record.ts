/** The history records of one input's stage runs (what the runtime appends when given a history). */
import type { StageRun } from '../exec/engine.js';
import { copyFeatures } from '../guards/features.js';
import type { PlanProblem } from '../plan/types.js';
import { instanceSpecs, type SystemSpec } from '../system/types.js';
import { HISTORY_VERSION, type HistoryRecord } from './types.js';

export function historyRecords(
  sys: SystemSpec,
  kernel: string,
  problem: PlanProblem,
  runs: readonly StageRun[],
  /**
   * The (instance, op) pairs the caller has recorded before: a pair not in it is the op's first run there, whose
   * time holds first-call setup, and is marked cold (then added).
   */
  seen: Set<string>,
): HistoryRecord[] {
  const specs = instanceSpecs(sys);
  const opById = new Map(problem.ops.map((o) => [o.id, o]));
  const at = new Date().toISOString();
  const out: HistoryRecord[] = [];
  for (const st of runs)
    for (const r of st.opRuns) {
      const op = opById.get(r.op);
      const instance = r.devices[0];
      if (!op || instance === undefined) continue;
      const spec = specs.get(instance)!;
      const key = `${r.devices.join('+')}\0${op.id}`;
      const cold = !seen.has(key);
      seen.add(key);
      out.push({
        v: HISTORY_VERSION,
        at,
        system: sys.name,
        device: spec.id,
        instance,
        kind: spec.kind,
        backend: st.backend,
        kernel,
        op: op.id,
        opKind: op.kind,
        impl: r.impl,
        dtype: op.dtype,
        ...(cold ? { cold: true } : {}),
        split: r.devices.length,
        // The threads this op ran on (the plan's pick capped at the backend's), not the backend's: the fit keeps
        // each count's runs apart.
        ...(st.threads?.[r.op] !== undefined ? { threads: st.threads[r.op] } : {}),
        trips: 1,
        items: op.items,
        flops: op.flops,
        bytes: op.bytes,
        gathers: op.gathers,
        loops: op.loops,
        columns: op.columns,
        // The features the cost models read, and nothing else (the runtime's record carries more: the format, the sample).
        ...(op.sparse ? { sparse: copyFeatures(op.sparse) } : {}),
        ms: r.ms,
        concurrent: st.concurrent,
      });
    }
  return out;
}
