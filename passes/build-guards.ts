/**
 * build-guards: from profile inputs (bindings of real or sampled data),
 * samples the feature space around them, builds each kernel's guards
 * (runtime/guards) for every objective (throughput, energy, latency: one
 * buildGuards per objective over the same samples, energy scope and stream
 * length; the goal's objective is the runtime's initial one) and records on
 * every op the device instances it runs on in each partition of the
 * objectives' table (`guards = ["p0:gpu0", "p1:cpu0"]`, table ids: the
 * initial objective's partitions first), so `--print-ir-after=build-guards`
 * shows the partitions. Like partition it needs data, so it is built per
 * call; the registered instance only says so.
 */
import { DiagnosticError, fileSpan, makeDiagnostic } from '../ir/diagnostics.js';
import type { Kernel, Module, Op } from '../ir/module.js';
import { buildGuards, sampleBindings, type SampleOptions } from '../runtime/guards/index.js';
import { OBJECTIVES, partitionTable, type GuardPlans } from '../runtime/guards/objectives.js';
import type { Binding } from '../runtime/plan/bind.js';
import type { OpImpls } from '../runtime/catalogue/index.js';
import type { PlanGoal } from '../runtime/plan/figures.js';
import type { Objective, PlanSpec } from '../runtime/plan/types.js';
import { stageInstances } from '../runtime/policy/cost.js';
import type { DeviceKind, SystemSpec } from '../runtime/system/types.js';
import type { Pass } from './manager.js';
import { planSpec } from './plan-spec.js';

/** The goal (initial objective, energy scope, stream length) the guards are built for, and their inputs. */
export interface BuildGuardsOptions extends PlanGoal {
  /** The objectives to build guards for (default all, OBJECTIVES); the goal's objective always is one. */
  objectives?: readonly Objective[];
  system: SystemSpec;
  /** Profile bindings per kernel name; kernels without profiles get no guards. */
  profiles: ReadonlyMap<string, readonly Binding[]>;
  maxPartitions?: number;
  lossTolerance?: number;
  sampling?: SampleOptions;
  /** Dims bound by each sparse parameter's rows and cols, per kernel (keeps samples consistent). */
  shapeDims?: ReadonlyMap<string, SampleOptions['shapeDims']>;
  /** The implementations each kernel's program has per op (codegen/implementations.ts). */
  impls: ReadonlyMap<string, ReadonlyMap<string, OpImpls>>;
  /** Plan on these device kinds alone (those the project's targets serve); absent: every kind of the system. */
  kinds?: readonly DeviceKind[];
}

export interface BuildGuardsPass extends Pass {
  /** The guards built by the last run, per kernel and objective. */
  readonly plans: Map<string, GuardPlans>;
  /** The objective the runtime starts with (the goal's). */
  readonly objective: Objective;
}

const noProfiles = (what: string): DiagnosticError =>
  new DiagnosticError([
    makeDiagnostic(
      'DY6300',
      `${what} needs profile inputs: give one or more --profile NAME=PATH (sample inputs) to dype compile`,
      fileSpan('<command line>'),
    ),
  ]);

function annotate(k: Kernel, plans: GuardPlans, initial: Objective, spec: PlanSpec): Kernel {
  const where = new Map<string, string[]>();
  const opIds = spec.ops.map((o) => o.id);
  for (const p of partitionTable(plans, initial).partitions) {
    const inst = stageInstances(p.choices);
    p.choices.forEach((c, i) => {
      for (const id of opIds.slice(c.start, c.end))
        where.set(id, [...(where.get(id) ?? []), `p${p.id}:${inst[i]!.join('+')}`]);
    });
  }
  const visit = (ops: Op[]): Op[] =>
    ops.map((op) =>
      op.kind === 'repeat'
        ? { ...op, body: visit(op.body) }
        : { ...op, attrs: { ...op.attrs, guards: where.get(op.id) ?? [] } },
    );
  return { ...k, body: visit(k.body) };
}

export function buildGuardsPass(o: BuildGuardsOptions): BuildGuardsPass {
  const plans = new Map<string, GuardPlans>();
  const objectives = [
    o.objective,
    ...OBJECTIVES.filter((x) => x !== o.objective && (o.objectives ?? OBJECTIVES).includes(x)),
  ];
  return {
    name: 'build-guards',
    description: `build guards over ${[...o.profiles.values()].reduce((a, b) => a + b.length, 0)} profile inputs for ${o.system.name} (objectives ${objectives.join(', ')}; initial ${o.objective})`,
    plans,
    objective: o.objective,
    run(m: Module): Module {
      plans.clear();
      if ([...o.profiles.values()].every((b) => b.length === 0)) throw noProfiles('build-guards');
      return {
        kernels: m.kernels.map((k) => {
          const profiles = o.profiles.get(k.name) ?? [];
          if (profiles.length === 0) return k;
          const impls = o.impls.get(k.name);
          if (!impls) throw new Error(`build-guards: no implementations given for kernel ${k.name}`);
          const spec = planSpec(k, impls);
          const shapeDims = o.shapeDims?.get(k.name);
          const samples = sampleBindings(profiles, { ...o.sampling, ...(shapeDims ? { shapeDims } : {}) });
          const byObjective: GuardPlans = {};
          // The same samples, energy scope and stream length for every objective: the runtime prices partitions once for all.
          for (const objective of objectives) {
            try {
              byObjective[objective] = buildGuards(spec, o.system, samples, {
                objective,
                energyScope: o.energyScope,
                streamLength: o.streamLength,
                ...(o.kinds !== undefined ? { kinds: o.kinds } : {}),
                ...(o.sampling?.ranges ? { declaredRanges: o.sampling.ranges } : {}),
                ...(o.maxPartitions !== undefined ? { maxPartitions: o.maxPartitions } : {}),
                ...(o.lossTolerance !== undefined ? { lossTolerance: o.lossTolerance } : {}),
              });
            } catch (e) {
              throw new DiagnosticError([
                makeDiagnostic(
                  'DY6303',
                  `kernel ${k.name} (${objective} guards): ${(e as Error).message}`,
                  fileSpan('<command line>'),
                ),
              ]);
            }
          }
          plans.set(k.name, byObjective);
          return annotate(k, byObjective, o.objective, spec);
        }),
      };
    },
  };
}

/** The registered instance: dumpable by name, but it has no data, so it explains how to run it. */
export const buildGuardsRegistered: Pass = {
  name: 'build-guards',
  description:
    'build guards (partitions and a decision tree over data features) from profile inputs; run by dype compile --profile',
  run(): Module {
    throw noProfiles('pass build-guards');
  },
};
