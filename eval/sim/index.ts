/**
 * simulate(): the ground truth the evaluation scores every mapping with.
 * A stream of inputs runs through the mapping as a task graph (build.ts) on
 * the discrete-event engine (engine.ts); throughput is measured over the
 * whole stream, fill and drain included, and energy integrates the busy,
 * DMA and waiting power of the instances the placement uses (device energy)
 * and the idle power of the others (added in system energy) over the makespan.
 */

import type { Mapping, PlanProblem } from '../../runtime/plan/types.js';
import type { SystemSpec } from '../../runtime/system/types.js';
import { buildTasks } from './build.js';
import { runTasks } from './engine.js';
import { SIM } from './params.js';
import type { SimResult, SimStage, TraceEvent } from './types.js';

export { SIM } from './params.js';
export type { SimResult, SimStage, TraceEvent } from './types.js';

/** The placement behind a planner mapping (pipeline or HEFT): ops by index, instances by name. */
export function simStages(sys: SystemSpec, p: PlanProblem, m: Mapping): SimStage[] {
  const index = new Map(p.ops.map((o, i) => [o.id, i]));
  return m.stages.map((s) => {
    const device = sys.devices.find((d) => d.id === s.device);
    if (!device) throw new Error(`simulation: mapping uses device ${s.device}, which ${sys.name} does not have`);
    return { ops: s.ops.map((id) => index.get(id)!), device, instances: s.devices.slice() };
  });
}

export interface SimOptions {
  stream?: number;
  trace?: boolean;
}

export function simulate(
  sys: SystemSpec,
  p: PlanProblem,
  stages: readonly SimStage[],
  opts: SimOptions = {},
): SimResult {
  const stream = opts.stream ?? SIM.streamLength;
  const { tasks, ends, top } = buildTasks(sys, p, stages, stream);
  const timing = runTasks(tasks, top.names.length, top.links);
  const makespan = Math.max(0, ...timing.map((t) => t.end));
  // Instances a stage uses are powered up for the whole stream (their waiting draw when not busy); the others stay idle.
  const used = new Set(stages.flatMap((st) => st.instances));
  const base = (i: number): number =>
    used.has(top.names[i]!) ? top.specs[i]!.waitingPowerW : top.specs[i]!.idlePowerW;
  const busy = new Array<number>(top.names.length).fill(0);
  const dma = new Array<number>(top.names.length).fill(0);
  // Power steps for the peak: +delta at start, -delta at end.
  const steps: [number, number][] = [];
  tasks.forEach((t, i) => {
    const tm = timing[i]!;
    if (t.kind === 'compute') {
      const d = tm.end - tm.start;
      busy[t.instance]! += d;
      const s = top.specs[t.instance]!;
      steps.push([tm.start, s.activePowerW - base(t.instance)], [tm.end, -(s.activePowerW - base(t.instance))]);
    } else if (t.kind === 'transfer') {
      for (const e of t.endpoints) dma[e]! += tm.end - tm.dataStart;
    }
  });
  let device = 0;
  let unused = 0;
  top.specs.forEach((s, i) => {
    if (!used.has(top.names[i]!)) {
      unused += (makespan / 1e3) * s.idlePowerW;
      return;
    }
    const above = s.activePowerW - s.waitingPowerW;
    device +=
      (makespan / 1e3) * s.waitingPowerW + (busy[i]! / 1e3) * above + (dma[i]! / 1e3) * SIM.dmaPowerFraction * above;
  });
  steps.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let draw = top.specs.reduce((a, _, i) => a + base(i), 0);
  let peak = draw;
  for (const [, d] of steps) {
    draw += d;
    peak = Math.max(peak, draw);
  }
  const starts = new Array<number>(stream).fill(Infinity);
  tasks.forEach((t, i) => void (starts[t.input] = Math.min(starts[t.input]!, timing[i]!.start)));
  const latency =
    ends.reduce((a, e, input) => a + (Math.max(...e.map((id) => timing[id]!.end)) - starts[input]!), 0) / stream;
  const periodMs = makespan / stream;
  const out: SimResult = {
    periodMs,
    throughput: periodMs > 0 ? 1000 / periodMs : Infinity,
    latencyMs: latency,
    deviceEnergyJ: device / stream,
    systemEnergyJ: (device + unused) / stream,
    makespanMs: makespan,
    peakPowerW: peak,
  };
  if (opts.trace) {
    const trace: TraceEvent[] = [];
    tasks.forEach((t, i) => {
      const tm = timing[i]!;
      if (t.kind === 'compute')
        trace.push({
          row: top.names[t.instance]!,
          kind: 'compute',
          input: t.input,
          label: t.label,
          startMs: tm.start,
          endMs: tm.end,
        });
      else if (t.kind === 'transfer' && tm.end > tm.start)
        trace.push({
          row: top.links[t.links[0]!]?.name ?? 'link',
          kind: 'transfer',
          input: t.input,
          label: t.label,
          startMs: tm.start,
          endMs: tm.end,
        });
    });
    out.trace = trace;
  }
  return out;
}

/** Simulates a planner mapping. */
export function simulateMapping(sys: SystemSpec, p: PlanProblem, m: Mapping, opts: SimOptions = {}): SimResult {
  return simulate(sys, p, simStages(sys, p, m), opts);
}
