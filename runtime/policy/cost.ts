/**
 * What switching from one partition to another costs before the first
 * input runs on the new one: draining the pipeline, moving the data that
 * stays resident across inputs (parameters whose tensors did not change) to
 * the devices the new partition reads them on, and loading another FPGA
 * bitstream where a new FPGA stage needs kernel designs the loaded one lacks.
 */
import type { StageChoice } from '../plan/dp.js';
import { stageFpgaImpls, transferMs } from '../plan/stage.js';
import type { Mapping, PlanProblem } from '../plan/types.js';
import { instanceName, instanceSpecs, type DeviceSpec, type SystemSpec } from '../system/types.js';

export interface SwitchCost {
  drainMs: number;
  migrationMs: number;
  bitstreamMs: number;
  totalMs: number;
  /** FPGA instances that must load a new bitstream, with the designs it holds. */
  bitstreams: { device: string; designs: string[] }[];
}

/** Device instances of each stage, named as the planner names them (gpu0, gpu1). */
export function stageInstances(choices: readonly StageChoice[]): string[][] {
  const taken = new Map<string, number>();
  return choices.map((c) => {
    const first = taken.get(c.device) ?? 0;
    taken.set(c.device, first + c.count);
    return Array.from({ length: c.count }, (_, j) => instanceName(c.device, first + j));
  });
}

/** Kernel designs each FPGA instance needs for a partition. */
export function fpgaNeeds(sys: SystemSpec, p: PlanProblem, choices: readonly StageChoice[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const inst = stageInstances(choices);
  choices.forEach((c, i) => {
    const dev = sys.devices.find((d) => d.id === c.device);
    if (dev?.kind !== 'fpga') return;
    const designs = new Set<string>(stageFpgaImpls(p.ops.slice(c.start, c.end)));
    for (const name of inst[i]!) out.set(name, designs);
  });
  return out;
}

/** Which device (spec) reads each parameter first in a partition; the host when no stage reads it. */
function readers(sys: SystemSpec, p: PlanProblem, choices: readonly StageChoice[]): Map<string, DeviceSpec[]> {
  const out = new Map<string, DeviceSpec[]>();
  for (const c of choices) {
    const dev = sys.devices.find((d) => d.id === c.device)!;
    for (const op of p.ops.slice(c.start, c.end))
      for (const r of op.reads) {
        if (r.from.kind !== 'param') continue;
        const list = out.get(r.value) ?? [];
        if (!list.includes(dev)) list.push(dev);
        out.set(r.value, list);
      }
  }
  return out;
}

export function switchCost(
  sys: SystemSpec,
  p: PlanProblem,
  from: { choices: readonly StageChoice[]; mapping: Mapping | undefined } | undefined,
  to: readonly StageChoice[],
  resident: ReadonlySet<string>,
  loaded: ReadonlyMap<string, ReadonlySet<string>>,
): SwitchCost {
  // The first input on the new partition waits until the last one on the old leaves the pipeline.
  const drainMs = from?.mapping ? Math.max(0, from.mapping.latencyMs - from.mapping.periodMs) : 0;
  let migrationMs = 0;
  if (from) {
    const before = readers(sys, p, from.choices);
    const after = readers(sys, p, to);
    for (const name of resident) {
      const bytes = p.paramBytes.get(name) ?? 0;
      const olds = before.get(name) ?? [];
      for (const d of after.get(name) ?? []) {
        if (olds.includes(d) || d.kind === 'cpu') continue;
        // From the nearest device that holds it, else from host memory.
        const options = olds.filter((o) => o.kind !== 'cpu').map((o) => transferMs(sys, o, d, bytes));
        migrationMs += Math.min(transferMs(sys, undefined, d, bytes), ...options);
      }
    }
  }
  const bitstreams: SwitchCost['bitstreams'] = [];
  let bitstreamMs = 0;
  const specs = instanceSpecs(sys);
  for (const [name, designs] of fpgaNeeds(sys, p, to)) {
    const have = loaded.get(name);
    if (have && [...designs].every((d) => have.has(d))) continue;
    const spec = specs.get(name);
    bitstreams.push({ device: name, designs: [...designs].sort() });
    // Instances load their bitstreams in parallel.
    bitstreamMs = Math.max(bitstreamMs, spec?.fpga?.bitstreamLoadMs ?? 0);
  }
  return { drainMs, migrationMs, bitstreamMs, totalMs: drainMs + migrationMs + bitstreamMs, bitstreams };
}
