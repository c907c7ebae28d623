/**
 * `--threads T` against the machine: more worker threads than cores only add
 * memory (each wasm worker holds its own instance) and switching, so T is
 * capped at the cores this process may use, with a warning on stderr.
 */
import { availableParallelism } from 'node:os';
import { cpuThreadsFor } from '../runtime/catalogue/index.js';
import { bindProblem, type Binding } from '../runtime/plan/bind.js';
import type { PlanSpec } from '../runtime/plan/types.js';
import { systemForCpuBackend } from '../runtime/system/cpu-backend.js';
import type { CpuBackendName, SystemSpec } from '../runtime/system/types.js';

export function capThreads(asked: number, warn: (s: string) => void = (s) => void process.stderr.write(s)): number {
  const cores = availableParallelism();
  if (asked <= cores) return asked;
  warn(
    `--threads ${asked}: warning DY3050: this machine has ${cores} core${cores === 1 ? '' : 's'}; using ${cores} thread${cores === 1 ? '' : 's'} (threads beyond the cores add memory and switching, not speed)\n`,
  );
  return cores;
}

/** What `dype run` runs each op on, and where the counts came from. */
export interface OpThreads {
  counts: Map<string, number>;
  /** The CPU device whose model picked them (system name and device id), or why every op takes all T. */
  from: string;
}

/**
 * The threads each op of the kernel runs on, out of `max`: the count the
 * system's CPU model, as `backend` is fitted (runtime/system/cpu-backend.ts),
 * prices lowest for that op on this input (runtime/catalogue/cpu.ts
 * cpuThreadsFor, the planner's own pricing). A kernel its spec cannot bind
 * leaves every op on `max`, and says so.
 */
export function opThreads(
  spec: PlanSpec,
  sys: SystemSpec,
  binding: Binding,
  max: number,
  backend: CpuBackendName,
): OpThreads {
  const { system, fit } = systemForCpuBackend(sys, backend);
  const cpu = system.devices.find((d) => d.kind === 'cpu')!;
  let problem;
  try {
    problem = bindProblem(spec, binding);
  } catch (e) {
    return { counts: new Map(), from: `not priced (${(e as Error).message}): every op on ${max}` };
  }
  const counts = new Map(problem.ops.map((op) => [op.id, cpuThreadsFor(op, cpu, max)]));
  return { counts, from: `the model of ${sys.name}'s ${cpu.id}, ${fit}` };
}
