/**
 * Which partition an input runs on: the current objective's generated
 * guards (checked against its guard tree), a re-plan with the DP for that
 * objective when the input falls outside the guards' ranges, and the
 * partition's fallbacks (as that objective ranks them) when no backend
 * serves it or it cannot run this input. The partitions are one table for
 * every objective (runtime/guards/objectives.ts), so changing objective
 * changes which guards read the features, not the partitions.
 */
import { InputError } from '../errors.js';
import { choiceKey, partitionLabel, planOptions } from '../guards/build.js';
import { checkGuardPlans, partitionTable } from '../guards/objectives.js';
import type { GuardPlan } from '../guards/types.js';
import { outOfRange } from '../guards/select.js';
import { guardStep, leavesOf, type GuardLeaf, type GuardStep } from '../guards/step.js';
import { walkTree } from '../guards/tree.js';
import { featureView, type FeatureView } from '../guards/view.js';
import { choicesOf, planPareto, usableInstances, type PlanOptions, type StageChoice } from '../plan/dp.js';
import type { Objective, PlanProblem } from '../plan/types.js';
import type { SystemSpec } from '../system/types.js';
import { InputBinder, type BoundInputs } from './inputs.js';
import { ModelMemo } from './memo.js';
import type { GuardFeatures, RuntimeConfig, RuntimeInputs, RuntimeParam } from './types.js';

export interface Part {
  id: number;
  key: string;
  label: string;
  choices: StageChoice[];
  /** Fallbacks (part ids, best first) for an objective that does not rank this partition itself. */
  fallbacks: number[];
  /** Fallbacks as each objective whose guards hold this partition ranks them. */
  fallbacksBy?: Partial<Record<Objective, number[]>>;
  replanned: boolean;
}

/** What the chooser keeps per objective with guards. */
export interface ObjectiveGuards {
  objective: Objective;
  plan: GuardPlan;
  guard: (f: GuardFeatures) => number;
  /** Part id of each of the plan's partitions (its tree's leaves). */
  ids: number[];
  /** The planner's options for this objective (re-plans and scores). */
  popts: PlanOptions;
  /** The plan's tree and range checks compiled (runtime/guards/step.ts), and its leaves by the step's ordinals. */
  step: GuardStep;
  leaves: GuardLeaf[];
}

export interface Choice {
  /** The objective whose guards (or re-plan) chose. */
  objective: Objective;
  b: BoundInputs;
  problem: PlanProblem;
  /** The features as the guards read them (a view: each is computed when first read). */
  features: FeatureView;
  path: string[];
  oor: string[];
  selected: Part;
  replanInfo?: { reason: string; planMs: number };
  fallback?: string;
  /** Whether this input's problem (pattern, dims, scalars) was decided afresh: features, guards, the cost model's weighing, a re-plan; false when the choice kept for it was reused. */
  fresh: boolean;
}

/** A choice kept per problem and objective (Chooser.chosen): what does not depend on the call. */
type Kept = Omit<Choice, 'b' | 'problem' | 'features' | 'fresh'>;

/** The config's parameters with the element type the manifest (what the backends run) gives each. */
function withDtypes(cfg: RuntimeConfig): RuntimeParam[] {
  return cfg.params.map((p) => {
    const m = cfg.manifest.params.find((q) => q.name === p.name);
    if (!m) throw new Error(`runtime config of kernel ${cfg.kernel}: its manifest has no parameter '${p.name}'`);
    return { ...p, dtype: m.type.dtype };
  });
}

/** A kept choice for this call's binding. Built field by field: V8 spreads (and rest-destructures) such records an order of magnitude slower. */
function keptChoice(known: Kept, b: BoundInputs, problem: PlanProblem, features: FeatureView): Choice {
  const c: Choice = {
    objective: known.objective,
    b,
    problem,
    features,
    path: known.path.slice(),
    oor: known.oor.slice(),
    selected: known.selected,
    fresh: false,
  };
  if (known.fallback !== undefined) c.fallback = known.fallback;
  if (known.replanInfo !== undefined) c.replanInfo = known.replanInfo;
  return c;
}

export class Chooser {
  readonly parts: Part[];
  /** Bound problems and partition mappings per pattern (shared with the decider and the runtime). */
  readonly memo: ModelMemo;
  private readonly view: (b: BoundInputs['binding']) => FeatureView;
  /** Binds each call's inputs, reusing the previous call's binding when the same tensors come back. */
  private readonly binder: InputBinder;

  /** Guards, table ids and planner options of each objective with guards. */
  private readonly by = new Map<Objective, ObjectiveGuards>();
  private cur: ObjectiveGuards;

  constructor(
    private readonly cfg: RuntimeConfig,
    private readonly sys: SystemSpec,
    /** Can some backend run every stage of this partition? */
    private readonly served: (p: Part) => boolean,
    /** Per device id, how many of its instances (from 0) a backend serves: what a re-plan may use (undefined: all). */
    private readonly servedInstances?: Readonly<Record<string, number>>,
  ) {
    checkGuardPlans(cfg.guards, cfg.objective);
    const table = partitionTable(cfg.guards, cfg.objective);
    for (const o of table.objectives) {
      const guard = cfg.guard[o];
      if (!guard)
        throw new Error(
          `the runtime of ${cfg.kernel} has guards for objective ${o} but no guard function for it: regenerate the runtime`,
        );
      const plan = cfg.guards[o]!;
      this.by.set(o, {
        objective: o,
        plan,
        guard,
        ids: table.ids[o]!,
        popts: planOptions(sys, plan),
        step: guardStep(plan),
        leaves: leavesOf(plan.tree),
      });
    }
    this.cur = this.by.get(cfg.objective)!;
    this.binder = new InputBinder(cfg.kernel, withDtypes(cfg));
    // Every objective's figures are counted alike (checkGuardPlans): one memo prices partitions for all.
    this.memo = new ModelMemo(sys, cfg.spec, this.cur.popts);
    this.view = featureView({
      sparse: cfg.params.filter((p) => p.kind === 'sparse').map((p) => p.name),
      dims: cfg.params.flatMap((p) => p.shape.filter((d): d is string => typeof d === 'string')),
      scalars: cfg.params.filter((p) => p.kind === 'scalar').map((p) => p.name),
    });
    this.parts = table.partitions.map((p) => ({
      id: p.id,
      key: p.key,
      label: p.label,
      choices: p.choices,
      fallbacks: p.fallbacks,
      fallbacksBy: p.fallbacksBy,
      replanned: false,
    }));
  }

  /** The objective whose guards choose the next input. */
  get objective(): Objective {
    return this.cur.objective;
  }

  /** The objectives with guards, the initial one first. */
  get objectives(): Objective[] {
    return [...this.by.keys()];
  }

  /** The planner's options (goal and constraints) of an objective with guards; the current one's by default. */
  popts(o: Objective = this.cur.objective): PlanOptions {
    return (this.by.get(o) ?? this.cur).popts;
  }

  /** From the next input on, this objective's guards choose (it must have guards). */
  setObjective(o: Objective): void {
    // A Map, not an object: '__proto__' or 'toString' is no objective (it found Object.prototype's members).
    const next = this.by.get(o);
    if (!next)
      throw new RangeError(
        `the runtime of ${this.cfg.kernel} has no guards for objective ${String(o)}: it has guards for ${this.objectives.join(', ')}`,
      );
    this.cur = next;
  }

  /** Re-plans per bound problem (one per pattern and dims, runtime/engine/memo.ts) and objective: the same input again is not planned again. */
  private readonly replans = new WeakMap<PlanProblem, Map<Objective, Part>>();

  private replan(problem: PlanProblem): { part: Part; ms: number; cached: boolean } {
    const o = this.cur.objective;
    const known = this.replans.get(problem)?.get(o);
    if (known) return { part: known, ms: 0, cached: true };
    const r = this.planFresh(problem);
    let m = this.replans.get(problem);
    if (!m) this.replans.set(problem, (m = new Map()));
    m.set(o, r.part);
    return { ...r, cached: false };
  }

  private planFresh(problem: PlanProblem): { part: Part; ms: number } {
    const t0 = performance.now();
    // Only over the instances some backend serves: a plan onto a device no backend was opened for cannot run
    // (DY3041), however good its figures; two GPUs with a backend that sees one leave one to plan on.
    const served = this.servedInstances;
    const opts = served ? { ...this.cur.popts, instances: served } : this.cur.popts;
    const structure = this.memo.structureFor(problem);
    const best = planPareto(this.sys, problem, opts, structure).pareto[0];
    const ms = performance.now() - t0;
    if (!best) {
      // Feasible on the instances no backend serves: the backends are what is missing, not a mapping.
      const missing = served
        ? this.sys.devices.filter((d) => usableInstances(d, this.cur.popts) > (served[d.id] ?? d.count))
        : [];
      if (missing.length > 0 && planPareto(this.sys, problem, this.cur.popts, structure).pareto.length > 0)
        throw new InputError(
          'DY3041',
          this.sys.name,
          undefined,
          `kernel ${this.cfg.kernel} can run this input on ${this.sys.name} only with devices no backend serves (${missing.map((d) => `${d.id}: ${served![d.id]} of ${d.count} instances served`).join('; ')}): open backends for them`,
        );
      throw new InputError(
        'DY3030',
        this.sys.name,
        undefined,
        `no mapping of kernel ${this.cfg.kernel} is feasible on ${this.sys.name}${this.cur.popts.kinds ? ` (on its ${this.cur.popts.kinds.join(', ')} devices, the kinds the guards were built for)` : ''} for this input`,
      );
    }
    const choices = choicesOf(problem, best);
    const key = choiceKey(choices);
    const known = this.parts.find((p) => p.key === key);
    if (known) return { part: known, ms };
    const part: Part = {
      id: this.parts.length,
      key,
      label: partitionLabel(this.cfg.spec, choices),
      choices,
      fallbacks: [],
      replanned: true,
    };
    this.parts.push(part);
    return { part, ms };
  }

  /** Runnable here and feasible for this input. */
  ok(p: Part, problem: PlanProblem): boolean {
    return this.served(p) && Number.isFinite(this.memo.score(problem, p, this.cur.popts));
  }

  /**
   * What the guards (with the cost model's weighing of an open leaf and the fallbacks) chose per bound problem
   * and objective: a problem is one pattern's features with its dims and scalars (memo.ts), on which every step
   * of choose() is deterministic, so the same input again reads no feature and walks no tree. A re-planned
   * choice is kept from its second time on, when its report says the plan is reused (`replans` keeps the plan).
   */
  private readonly chosen = new WeakMap<PlanProblem, Map<Objective, Kept>>();

  /**
   * The last call's binding when its choice was a kept one (or was kept by it), with what choose() found for it:
   * the same inputs again (the binder hands back the very binding) under the same objective get that choice
   * without a feature view, a problem lookup or the two maps of `chosen`, about a third of a repeat's decision
   * right after a kernel (docs/PERFORMANCE.md).
   */
  private lastKept:
    { b: BoundInputs; objective: Objective; features: FeatureView; problem: PlanProblem; known: Kept } | undefined;

  choose(inputs: RuntimeInputs): Choice {
    const st = this.cur;
    const b = this.binder.bind(inputs);
    const last = this.lastKept;
    if (last !== undefined && last.b === b && last.objective === st.objective) {
      // What memo.problem() does when it finds the problem again.
      this.memo.seenAgain(last.problem);
      return keptChoice(last.known, b, last.problem, last.features);
    }
    const features = this.view(b.binding);
    const problem = this.memo.problem(b.binding);
    const known = this.chosen.get(problem)?.get(st.objective);
    if (known) {
      this.lastKept = { b, objective: st.objective, features, problem, known };
      return keptChoice(known, b, problem, features);
    }
    this.lastKept = undefined;
    const c = this.chooseFresh(st, b, features, problem);
    if (!c.replanInfo || this.replanReused) {
      let m = this.chosen.get(problem);
      if (!m) this.chosen.set(problem, (m = new Map()));
      const kept: Kept = {
        objective: c.objective,
        path: c.path.slice(),
        oor: c.oor.slice(),
        selected: c.selected,
        ...(c.fallback !== undefined ? { fallback: c.fallback } : {}),
        ...(c.replanInfo !== undefined ? { replanInfo: c.replanInfo } : {}),
      };
      m.set(st.objective, kept);
      this.lastKept = { b, objective: st.objective, features, problem, known: kept };
    }
    return c;
  }

  /** Whether the last chooseFresh re-planned from a plan kept for its problem (so its report will not change again). */
  private replanReused = false;

  private chooseFresh(st: ObjectiveGuards, b: BoundInputs, features: FeatureView, problem: PlanProblem): Choice {
    this.replanReused = false;
    const cfg = this.cfg;
    // The decision: the compiled step (the leaf and its range checks). The path's messages are for the report, and
    // the generated guard is checked against the step on every new pattern (a stale generated runtime is an error).
    const r = st.step(b.binding);
    const leaf = st.leaves[r < 0 ? -1 - r : r]!;
    const id = st.guard(features);
    const walked = walkTree(st.plan.tree, (k) => features[k]);
    if (st.ids[walked.leaf] !== id || walked.leaf !== leaf.leaf)
      throw new Error(
        `generated ${st.objective} guards of ${cfg.kernel} disagree with the guard tree (partition ${id} vs ${st.ids[walked.leaf]} vs ${st.ids[leaf.leaf]}): regenerate the runtime`,
      );
    const oor = r >= 0 ? [] : outOfRange(st.plan.ranges, (k) => features[k], leaf.checks);
    let selected = this.parts[id]!;
    const path = walked.path;
    if (leaf.also && oor.length === 0) {
      // The leaf leaves a few partitions open: the cost model weighs them on this input for the current objective (kept per pattern in the memo).
      // The served ones in the leaf's order, each scored, the first of the lowest finite score kept (no arrays:
      // a runtime weighs the open partitions of every new pattern).
      let best: Part | undefined;
      let bestV = Infinity;
      let ids = '';
      for (let k = -1; k < leaf.also.length; k++) {
        const p = this.parts[st.ids[k < 0 ? leaf.leaf : leaf.also[k]!]!]!;
        if (!this.served(p)) continue;
        ids += ids === '' ? `${p.id}` : `, ${p.id}`;
        const v = this.memo.score(problem, p, st.popts);
        if (Number.isFinite(v) && (best === undefined || v < bestV)) {
          best = p;
          bestV = v;
        }
      }
      if (best !== undefined) {
        selected = best;
        path.push(`cost model: partition ${selected.id} of ${ids}`);
      }
    }
    let replanInfo: Choice['replanInfo'];
    if (oor.length > 0) {
      const r = this.replan(problem);
      this.replanReused = r.cached;
      selected = r.part;
      replanInfo = {
        reason: `outside the guards' ranges: ${oor.join('; ')}${r.cached ? ' (planned for this input before: the plan is reused)' : ''}`,
        planMs: r.ms,
      };
    }
    let fallback: string | undefined;
    if (!this.ok(selected, problem)) {
      const why = this.served(selected)
        ? 'cannot run this input (memory, resources or constraints)'
        : 'needs a device no backend serves';
      const alt = this.fallbackOf(selected, problem);
      if (alt) {
        fallback = `partition ${selected.id} ${why}; fallback ${alt.id}`;
        selected = alt;
      } else if (!this.served(selected)) {
        const kinds = [
          ...new Set(selected.choices.map((c) => this.sys.devices.find((d) => d.id === c.device)?.kind ?? c.device)),
        ];
        throw new InputError(
          'DY3041',
          this.sys.name,
          undefined,
          `partition ${selected.id} (${selected.label}) runs stages on ${kinds.join(', ')}, and no backend serves some of its devices; no fallback can run either: pass a backend for each of ${kinds.join(', ')} (openProject builds them for a compiled project)`,
        );
      }
    }
    return {
      objective: st.objective,
      b,
      problem,
      features,
      path,
      oor,
      selected,
      fresh: true,
      ...(replanInfo ? { replanInfo } : {}),
      ...(fallback ? { fallback } : {}),
    };
  }

  /** The first of a partition's fallbacks (as the current objective ranks them) that can run the input, if any. */
  fallbackOf(p: Part, problem: PlanProblem, exclude: ReadonlySet<number> = new Set()): Part | undefined {
    return (p.fallbacksBy?.[this.cur.objective] ?? p.fallbacks)
      .map((i) => this.parts[i]!)
      .find((q) => !exclude.has(q.id) && this.ok(q, problem));
  }
}
