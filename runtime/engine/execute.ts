/**
 * Running one input on a partition: its stages as the engine runs them (the
 * implementation of each op is the one the planner picks for this input),
 * and device faults turned into errors that name the input, stage, op,
 * device and backend.
 */
import { InputError } from '../errors.js';
import { KernelEngine, StageFault, type Slot, type StagePlan, type StageRun } from '../exec/index.js';
import type { StageChoice } from '../plan/dp.js';
import { cpuThreadsFor } from '../catalogue/index.js';
import type { Mapping, PlanProblem, PlanSpec } from '../plan/types.js';
import { stageInstances } from '../policy/cost.js';
import type { SystemSpec } from '../system/types.js';
import type { Part } from './choose.js';

/**
 * The engine's stages of a partition, for one input's mapping (which names each op's implementation). With the
 * input's bound problem, a CPU stage's ops carry the thread count the device's model picks for each
 * (runtime/catalogue/cpu.ts cpuThreadsFor; the backend caps it at its own threads), as `dype run` runs them.
 */
export function stagePlans(
  sys: SystemSpec,
  spec: PlanSpec,
  part: { choices: readonly StageChoice[] },
  m: Mapping,
  problem?: PlanProblem,
): StagePlan[] {
  const inst = stageInstances(part.choices);
  const bound = new Map(problem?.ops.map((op) => [op.id, op]));
  return part.choices.map((c, i) => {
    const dev = sys.devices.find((d) => d.id === c.device)!;
    const ops = spec.ops.slice(c.start, c.end).map((o) => o.id);
    const threads =
      dev.kind === 'cpu' && problem
        ? Object.fromEntries(ops.flatMap((id) => (bound.has(id) ? [[id, cpuThreadsFor(bound.get(id)!, dev)]] : [])))
        : undefined;
    return {
      ops,
      kind: dev.kind,
      devices: inst[i]!,
      impls: m.stages[i]!.variants,
      ...(threads ? { threads } : {}),
    };
  });
}

/** Whether the engine has a backend device for every instance of the partition. */
export function served(engine: KernelEngine, part: Part): boolean {
  return stageInstances(part.choices).every((list) => list.every((d) => engine.places.has(d)));
}

/** A device call failed for want of memory: the runtime may try a fallback partition. */
export function outOfMemory(e: unknown): e is StageFault {
  return e instanceof StageFault && e.cause.outOfMemory;
}

/** Runs stage `index` of an input; a device fault becomes DY3045 naming input, stage, op, device and backend. */
export async function runStage(
  engine: KernelEngine,
  slot: Slot,
  plans: readonly StagePlan[],
  index: number,
  input: string,
  part: Part,
): Promise<StageRun> {
  try {
    return await engine.runStage(slot, plans[index]!);
  } catch (e) {
    if (e instanceof StageFault && !e.cause.outOfMemory) {
      const st = plans[index]!;
      throw new InputError(
        'DY3045',
        input,
        undefined,
        `stage ${index} [${st.ops.join(', ')}] of partition ${part.id} (${part.label}): op ${e.op} on ${e.device} (${e.cause.backend}): ${e.cause.call} failed with code ${e.cause.code}: ${e.cause.text}`,
      );
    }
    throw e;
  }
}
