/**
 * Planning as the CLI does it: load the system (with overrides), compute
 * the sparse inputs' features, bind the kernel's PlanSpec and run the
 * partitioner and the baselines.
 */
import type { Kernel } from '../ir/module.js';
import { InputError } from '../runtime/errors.js';
import { features } from '../runtime/features/index.js';
import type { AllFeatures } from '../runtime/features/types.js';
import {
  heftWithinCap,
  singleKindPick,
  staticChoice,
  staticPick,
  type BaselinePick,
} from '../runtime/plan/baselines.js';
import { bindProblem } from '../runtime/plan/bind.js';
import { evaluateChoices, planPareto, type PlanOptions } from '../runtime/plan/dp.js';
import type { PlanGoal } from '../runtime/plan/figures.js';
import type { Mapping, PlanProblem, PlanSpec, SparseFeatures } from '../runtime/plan/types.js';
import { applyOverrides, loadSystemFile, systemOrigin } from '../runtime/system/load.js';
import { MAX_SYSTEM_FIGURE } from '../runtime/system/schema.js';
import { resolveSystemArg } from '../runtime/system/presets.js';
import type { SystemSpec } from '../runtime/system/types.js';
import type { Tensor } from '../runtime/tensor.js';
import { DimBinder } from '../interp/bind.js';
import { usage } from './errors.js';
import type { LoadedInput } from './inputs.js';

export { parseGoal, parseObjective, type GoalOptions } from './goal.js';

/** A preset name (`paper-2g2f`) or a path; presets live in the package's systems/ folder (DY3049 for a name that is neither). */
export function resolveSystem(arg: string): string {
  return resolveSystemArg(arg);
}

export interface SystemOptions {
  system?: string;
  powerCap?: string;
  p2p?: boolean;
}

export function loadSystem(o: SystemOptions, fallback: string): SystemSpec {
  const file = resolveSystem(o.system ?? fallback);
  // Decimal only (Number() would take 0x190 and Infinity), and no more than a system file may hold.
  const cap = o.powerCap === undefined ? undefined : Number(o.powerCap);
  if (
    cap !== undefined &&
    !(/^\+?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(o.powerCap!.trim()) && cap > 0 && cap <= MAX_SYSTEM_FIGURE)
  )
    throw usage(
      `--power-cap expects a positive decimal number of watts (at most ${MAX_SYSTEM_FIGURE}), got '${o.powerCap}'`,
    );
  return applyOverrides(loadSystemFile(file), {
    ...(cap !== undefined ? { powerCapW: cap } : {}),
    noP2p: o.p2p === false,
  });
}

/** Sparse inputs' features (tiers 0-2), by parameter name. */
export function sparseFeatures(k: Kernel, tensors: ReadonlyMap<string, Tensor>): Map<string, AllFeatures> {
  const out = new Map<string, AllFeatures>();
  for (const p of k.params) {
    const t = tensors.get(p.name);
    if (t && p.type.format !== 'dense' && t.format !== 'dense') out.set(p.name, features(t, 2));
  }
  return out;
}

/**
 * Dims bound by inputs' shapes and --param, checked as `run` checks them
 * (interp/bind.ts DimBinder: DY3007 naming the input's file and size line,
 * DY3015 for a dim that is not a non-negative integer), so that plan and ir
 * refuse what run refuses. Unlike run, dense inputs may be left out: the
 * planner needs their sizes only, which --param can give.
 */
export function boundDims(
  k: Kernel,
  tensors: ReadonlyMap<string, Tensor>,
  scalars: ReadonlyMap<string, number>,
  loaded?: ReadonlyMap<string, LoadedInput>,
): Map<string, number> {
  const binder = new DimBinder(k, {
    tensors,
    scalars,
    sourceOf: (n) => loaded?.get(n)?.source ?? `--input ${n}`,
    lineOf: (n) => loaded?.get(n)?.mtx?.sizeLine,
  });
  for (const p of k.params) {
    const t = tensors.get(p.name);
    if (t && p.type.shape.length > 0) binder.bind(p.name, p.type, t);
  }
  const dims = binder.dims;
  for (const [n, v] of scalars) if (!dims.has(n)) dims.set(n, v);
  for (const p of k.params)
    for (const d of p.type.shape)
      if (d.kind === 'sym' && !dims.has(d.name))
        throw new InputError(
          'DY3013',
          `--param ${d.name}`,
          undefined,
          `dim '${d.name}' is not bound: pass --input ${p.name}=FILE or --param ${d.name}=N`,
        );
  for (const p of k.params)
    if (p.type.format !== 'dense' && !tensors.has(p.name))
      throw new InputError(
        'DY3013',
        `--input ${p.name}`,
        undefined,
        `the planner needs sparse input '${p.name}': pass --input ${p.name}=FILE`,
      );
  return dims;
}

/**
 * Synthetic training profiles for the static baseline: the input's size
 * with three row structures (sparse uniform, power-law skewed, dense-ish
 * banded), so the static schedule is chosen once, not for this input.
 */
export function trainingProfiles(f: SparseFeatures): SparseFeatures[] {
  const mk = (mean: number, cv: number, maxFactor: number, top: number): SparseFeatures => ({
    rows: f.rows,
    cols: f.cols,
    nnz: Math.round(Math.min(mean, f.cols) * f.rows),
    rowLenMean: Math.min(mean, f.cols),
    rowLenMax: Math.min(f.cols, Math.ceil(mean * maxFactor)),
    rowLenCv: cv,
    emptyRowFraction: 0,
    top1PctNnzShare: top,
    localityScore: 0.5,
  });
  return [mk(4, 0.5, 3, 0.03), mk(16, 2.0, 60, 0.3), mk(64, 0.2, 1.5, 0.015)];
}

export interface PlanReport {
  spec: PlanSpec;
  problem: PlanProblem;
  pareto: Mapping[];
  /** Each baseline under the same constraints as the Pareto set (power cap, latency bound), or why there is none. */
  baselines: {
    'gpu-only': BaselinePick;
    'fpga-only': BaselinePick;
    'cpu-only': BaselinePick;
    static: BaselinePick;
    heft: BaselinePick;
  };
  planMs: number;
  states: number;
}

/** `spec`: the kernel's PlanSpec with its program's implementations (codegen/implementations.ts plannedSpec). */
export function planFor(
  spec: PlanSpec,
  sys: SystemSpec,
  feats: ReadonlyMap<string, SparseFeatures>,
  dims: ReadonlyMap<string, number>,
  scalars: ReadonlyMap<string, number>,
  goal: PlanGoal,
  trips?: ReadonlyMap<string, number>,
): PlanReport {
  let problem: PlanProblem;
  try {
    problem = bindProblem(spec, { sparse: feats, dims, scalars, ...(trips ? { trips } : {}) });
  } catch (e) {
    throw new InputError('DY3013', `kernel ${spec.kernel}`, undefined, (e as Error).message);
  }
  const opts: PlanOptions = {
    objective: goal.objective,
    energyScope: goal.energyScope,
    streamLength: goal.streamLength,
    ...(sys.constraints.powerCapW !== undefined ? { powerCapW: sys.constraints.powerCapW } : {}),
    ...(sys.constraints.latencyBoundMs !== undefined ? { latencyBoundMs: sys.constraints.latencyBoundMs } : {}),
  };
  const t0 = performance.now();
  const out = planPareto(sys, problem, opts);
  const planMs = performance.now() - t0;
  if (out.pareto.length === 0) throw infeasible(sys, problem, opts, out.infeasible);
  const first = [...feats.values()][0];
  const training = first
    ? trainingProfiles(first).map((tf) =>
        bindProblem(spec, {
          sparse: new Map([...feats.keys()].map((n) => [n, tf])),
          dims,
          scalars,
          ...(trips ? { trips } : {}),
        }),
      )
    : [problem];
  const stat = staticChoice(sys, training, opts);
  return {
    spec,
    problem,
    pareto: out.pareto,
    baselines: {
      'gpu-only': singleKindPick(sys, problem, 'gpu', opts),
      'fpga-only': singleKindPick(sys, problem, 'fpga', opts),
      'cpu-only': singleKindPick(sys, problem, 'cpu', opts),
      static: staticPick(sys, problem, stat, opts),
      heft: heftWithinCap(sys, problem, opts),
    },
    planMs,
    states: out.states,
  };
}

/**
 * DY3030 at what makes the plan infeasible: the power cap (`--power-cap`, or
 * its line in the system file) with the least any mapping draws, the latency
 * bound's line with the fastest mapping's latency, else the system file.
 */
function infeasible(sys: SystemSpec, p: PlanProblem, opts: PlanOptions, reasons: string[]): InputError {
  const origin = systemOrigin(sys);
  const at = (field: 'powerCapW' | 'latencyBoundMs', detail: string): InputError =>
    origin
      ? new InputError('DY3030', origin.file, origin.line(['constraints', field]), detail)
      : new InputError('DY3030', sys.name, undefined, detail);
  if (opts.powerCapW !== undefined) {
    const free = planPareto(sys, p, { ...opts, powerCapW: undefined }).pareto;
    const single = sys.devices.map(
      (d) =>
        evaluateChoices(sys, p, [{ start: 0, end: p.ops.length, device: d.id, count: 1 }], opts)?.powerW ?? Infinity,
    );
    const need = Math.min(...free.map((m) => m.powerW), ...single);
    if (Number.isFinite(need)) {
      const detail = `no mapping meets power cap ${opts.powerCapW} W: the cheapest needs ${need.toFixed(0)} W`;
      return sys.sources?.['constraints.powerCapW']?.startsWith('set by --power-cap')
        ? new InputError('DY3030', '--power-cap', undefined, detail)
        : at('powerCapW', detail);
    }
  }
  if (opts.latencyBoundMs !== undefined) {
    const free = planPareto(sys, p, { ...opts, latencyBoundMs: undefined }).pareto;
    const fastest = Math.min(...free.map((m) => m.latencyMs));
    if (Number.isFinite(fastest))
      return at(
        'latencyBoundMs',
        `no mapping meets the latency bound of ${opts.latencyBoundMs} ms (constraints.latencyBoundMs): the fastest takes ${fastest.toPrecision(3)} ms`,
      );
  }
  return new InputError(
    'DY3030',
    origin?.file ?? sys.name,
    undefined,
    `no mapping is feasible on ${sys.name}: ${reasons.slice(0, 3).join('; ') || 'no device can run these ops'}`,
  );
}
