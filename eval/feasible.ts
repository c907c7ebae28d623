/**
 * Is a mapping runnable under a case's constraints? Every stage fits its
 * device (memory, FPGA resources, dtypes: the planner's stage checks), no
 * pipeline stage shares an instance with another, and the peak draw of the
 * instances it uses (the rest idle) stays under the power cap.
 */
import { peakDrawW } from '../runtime/plan/baselines.js';
import { bestOpTime } from '../runtime/plan/cost.js';
import { lastWriters } from '../runtime/plan/dp.js';
import { evalStage } from '../runtime/plan/stage.js';
import type { Mapping, PlanProblem } from '../runtime/plan/types.js';
import { instanceSpecs, type SystemSpec } from '../runtime/system/types.js';

export function feasibility(
  sys: SystemSpec,
  p: PlanProblem,
  m: Mapping,
  opts: { pipelined: boolean },
): string | undefined {
  const specs = instanceSpecs(sys);
  const where = new Map<string, string>();
  const seen = new Set<string>();
  const opById = new Map(p.ops.map((o) => [o.id, o]));
  const writers = lastWriters(p);
  const covered = new Set<string>();
  for (const st of m.stages) {
    const dev = sys.devices.find((d) => d.id === st.device);
    if (!dev) return `no device ${st.device}`;
    for (const inst of st.devices) {
      if (specs.get(inst) !== dev) return `no instance ${inst} of ${dev.id}`;
      if (opts.pipelined && seen.has(inst)) return `instance ${inst} holds two pipeline stages`;
      seen.add(inst);
    }
    const ops = st.ops.map((id) => opById.get(id)!);
    const ev = evalStage(
      {
        sys,
        problem: p,
        producerDevice: (id) => sys.devices.find((d) => d.id === where.get(id)),
        lastWriter: writers,
        opById,
        opTime: bestOpTime,
      },
      ops,
      dev,
      st.devices.length,
    );
    if (!ev.ok) return ev.why;
    for (const id of st.ops) {
      where.set(id, dev.id);
      covered.add(id);
    }
  }
  if (covered.size !== p.ops.length) return `${p.ops.length - covered.size} ops are not placed`;
  const cap = sys.constraints.powerCapW;
  if (cap !== undefined && peakDrawW(sys, m) > cap + 1e-9)
    return `peak draw ${peakDrawW(sys, m).toFixed(0)} W exceeds the cap ${cap} W`;
  return undefined;
}
