/** The history records of one input's stage runs (what the runtime appends when given a history). */
import type { StageRun } from '../exec/engine.js';
import type { StageBackend } from '../exec/backend.js';
import { OPTIONAL_FEATURES, REQUIRED_FEATURES, type PlanProblem, type SparseFeatures } from '../plan/types.js';
import { instanceSpecs, type SystemSpec } from '../system/types.js';
import { HISTORY_VERSION, type HistoryRecord } from './types.js';

export function historyRecords(
  sys: SystemSpec,
  kernel: string,
  problem: PlanProblem,
  runs: readonly StageRun[],
  backendOf: (instance: string) => StageBackend,
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
      const be = backendOf(instance);
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
        split: r.devices.length,
        ...(be.threads !== undefined ? { threads: be.threads } : {}),
        trips: 1,
        items: op.items,
        flops: op.flops,
        bytes: op.bytes,
        gathers: op.gathers,
        ...(op.sparse ? { sparse: modelFeatures(op.sparse) } : {}),
        ms: r.ms,
        concurrent: st.concurrent,
      });
    }
  return out;
}

/**
 * The features the cost models read, and nothing else: a runtime's features record carries more (the format, the
 * sample's size, statistics no model reads), which the history has no use for and its reader does not check.
 */
function modelFeatures(f: SparseFeatures): SparseFeatures {
  const out: Partial<Record<keyof SparseFeatures, number>> = {};
  for (const k of [...REQUIRED_FEATURES, ...OPTIONAL_FEATURES]) if (f[k] !== undefined) out[k] = f[k];
  return out as SparseFeatures;
}
