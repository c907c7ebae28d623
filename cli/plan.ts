/** `dype plan`: the Pareto set of mappings for a kernel on a system and the data at hand, with baselines. */
import { plannedSpec } from '../codegen/implementations.js';
import type { AllFeatures } from '../runtime/features/types.js';
import type { PlanGoal } from '../runtime/plan/figures.js';
import type { Mapping } from '../runtime/plan/types.js';
import { systemSummary } from '../runtime/system/load.js';
import type { Tensor } from '../runtime/tensor.js';
import { DEFAULT_PLAN_SYSTEM } from './defaults.js';
import { snakeValues } from './json-keys.js';
import { loadInputs, parseAssignments, parseScalars } from './inputs.js';
import {
  boundDims,
  loadSystem,
  parseGoal,
  planFor,
  sparseFeatures,
  type GoalOptions,
  type PlanReport,
  type SystemOptions,
} from './planning.js';
import { loadProgram, optimise, selectKernel } from './program.js';

export interface PlanCliOptions extends SystemOptions, GoalOptions {
  kernel?: string;
  input: string[];
  param: string[];
  json?: boolean;
}

export { DEFAULT_PLAN_SYSTEM };

function stageText(m: Mapping): string {
  return m.stages.map((s) => `[${s.ops.join(' ')}]@${s.devices.join('+')}`).join(' -> ');
}

/** A mapping as `dype plan --json` prints it (stream_length in the report is a number or 'unbounded'). */
export function mappingJson(m: Mapping | undefined): unknown {
  if (!m) return null;
  return {
    stages: m.stages.map((s) => ({
      ops: s.ops,
      devices: s.devices,
      variants: s.variants,
      compute_ms: s.computeMs,
      sync_ms: s.syncMs,
      transfer_ms: s.transferMs,
      root_bytes: s.rootBytes,
      time_ms: s.timeMs,
      period_ms: s.periodMs,
    })),
    period_ms: m.periodMs,
    root_complex_ms: m.rootComplexMs,
    latency_ms: m.latencyMs,
    per_input_ms: m.perInputMs,
    // energy_j is the planned scope's figure; both scopes are always given.
    energy_j: m.energyJ,
    device_energy_j: m.deviceEnergyJ,
    system_energy_j: m.systemEnergyJ,
    power_w: m.powerW,
    // Every figure above is the cost model's for the system; nothing ran (plan_ms, the planner's own time, is measured).
    clock: 'modelled',
  };
}

export function reportJson(
  kernel: string,
  systemName: string,
  goal: PlanGoal,
  feats: Map<string, AllFeatures>,
  r: PlanReport,
): unknown {
  return {
    kernel,
    system: systemName,
    objective: goal.objective,
    energy_scope: goal.energyScope,
    stream_length: goal.streamLength,
    features: snakeValues(Object.fromEntries(feats)),
    plan_ms: r.planMs,
    pareto: r.pareto.map(mappingJson),
    baselines: Object.fromEntries(
      Object.entries(r.baselines).map(([k, b]) => [k, b.mapping ? mappingJson(b.mapping) : null]),
    ),
    // How each baseline was found, or why there is none (no such device, the power cap, memory).
    baseline_notes: Object.fromEntries(Object.entries(r.baselines).map(([k, b]) => [k, b.note])),
  };
}

const f3 = (x: number): string => (x >= 100 ? x.toFixed(1) : x >= 1 ? x.toFixed(3) : x.toPrecision(3));

export function planCommand(file: string, o: PlanCliOptions, stdout: (s: string) => void): void {
  const goal = parseGoal(o);
  const sys = loadSystem(o, DEFAULT_PLAN_SYSTEM);
  const params = parseAssignments(o.param, '--param');
  const inputs = parseAssignments(o.input, '--input');
  const program = loadProgram(file);
  const module = optimise(program);
  const kernel = selectKernel(module, file, o.kernel);
  const scalars = parseScalars(kernel, params);
  const loaded = loadInputs(kernel, inputs, scalars);
  const tensors = new Map<string, Tensor>([...loaded].map(([n, li]) => [n, li.tensor]));
  const dims = boundDims(kernel, tensors, scalars, loaded);
  const feats = sparseFeatures(kernel, tensors);
  const r = planFor(plannedSpec(module, file, kernel.name), sys, feats, dims, scalars, goal);
  if (o.json) {
    stdout(JSON.stringify(reportJson(kernel.name, sys.name, goal, feats, r), null, 2) + '\n');
    return;
  }
  const gpu = r.baselines['gpu-only'].mapping;
  const lines: string[] = [];
  lines.push(`kernel ${kernel.name} on ${systemSummary(sys)}`);
  for (const [n, f] of feats)
    lines.push(
      `  ${n}: ${f.rows} x ${f.cols}, nnz ${f.nnz}, density ${f.density.toExponential(2)}, row length mean ${f3(f.rowLenMean)} max ${f.rowLenMax} cv ${f3(f.rowLenCv)}`,
    );
  lines.push(`  ops: ${r.problem.ops.map((op) => `${op.id}=${op.kind}(${op.result})`).join(' ')}`);
  const stream =
    goal.streamLength === 'unbounded'
      ? 'an unbounded stream (steady state)'
      : `a stream of ${goal.streamLength} input${goal.streamLength === 1 ? '' : 's'}`;
  lines.push(
    `Pareto-optimal mappings (objective ${goal.objective}, energy scope ${goal.energyScope}, ${stream}; planned in ${r.planMs.toFixed(1)} ms measured over ${r.states} states):`,
  );
  lines.push(`  every time, energy and power below is modelled (the cost model for ${sys.name}); nothing ran`);
  lines.push('  rank  ms/input   period ms   latency ms  device mJ  system mJ   power W  vs gpu-only  stages');
  r.pareto.forEach((m, i) => {
    const speed = gpu ? `${(gpu.perInputMs / m.perInputMs).toFixed(2)}x` : '-';
    lines.push(
      `  ${String(i + 1).padStart(4)}  ${f3(m.perInputMs).padStart(8)}  ${f3(m.periodMs).padStart(9)}  ${f3(m.latencyMs).padStart(10)}  ${f3(m.deviceEnergyJ * 1e3).padStart(9)}  ${f3(m.systemEnergyJ * 1e3).padStart(9)}  ${m.powerW.toFixed(0).padStart(7)}  ${speed.padStart(11)}  ${stageText(m)}`,
    );
  });
  lines.push('Baselines (modelled):');
  for (const [name, { mapping: m, note }] of Object.entries(r.baselines)) {
    if (!m) {
      lines.push(`  ${name.padEnd(9)} (none: ${note})`);
      continue;
    }
    const how = note === name ? '' : ` (${note})`;
    lines.push(
      `  ${name.padEnd(9)} ${f3(m.perInputMs)} ms/input, period ${f3(m.periodMs)} ms, latency ${f3(m.latencyMs)} ms, energy ${f3(m.deviceEnergyJ * 1e3)} mJ device / ${f3(m.systemEnergyJ * 1e3)} mJ system, ${m.powerW.toFixed(0)} W  ${stageText(m)}${how}`,
    );
  }
  stdout(lines.join('\n') + '\n');
}
