/**
 * Which partition an input runs on: the generated guards (checked against
 * the guard tree), a re-plan with the DP when the input falls outside the
 * guards' ranges, and the partition's fallbacks when no backend serves it or
 * it cannot run this input.
 */
import { InputError } from '../errors.js';
import { choiceKey, partitionLabel } from '../guards/build.js';
import { inRanges, outOfRange } from '../guards/select.js';
import { walkTree } from '../guards/tree.js';
import { featureView, type FeatureView } from '../guards/view.js';
import { choicesOf, planPareto, type PlanOptions, type StageChoice } from '../plan/dp.js';
import type { PlanProblem } from '../plan/types.js';
import type { SystemSpec } from '../system/types.js';
import { bindInputs, type BoundInputs } from './inputs.js';
import { ModelMemo } from './memo.js';
import type { RuntimeConfig, RuntimeInputs } from './types.js';

export interface Part {
  id: number;
  key: string;
  label: string;
  choices: StageChoice[];
  fallbacks: number[];
  replanned: boolean;
}

export interface Choice {
  b: BoundInputs;
  problem: PlanProblem;
  /** The features as the guards read them (a view: each is computed when first read). */
  features: FeatureView;
  path: string[];
  oor: string[];
  selected: Part;
  replanInfo?: { reason: string; planMs: number };
  fallback?: string;
}

export class Chooser {
  readonly parts: Part[];
  /** Bound problems and partition mappings per pattern (shared with the decider and the runtime). */
  readonly memo: ModelMemo;
  private readonly view: (b: BoundInputs['binding']) => FeatureView;

  constructor(
    private readonly cfg: RuntimeConfig,
    private readonly sys: SystemSpec,
    private readonly popts: PlanOptions,
    /** Can some backend run every stage of this partition? */
    private readonly served: (p: Part) => boolean,
  ) {
    this.memo = new ModelMemo(sys, cfg.spec, popts);
    this.view = featureView({
      sparse: cfg.params.filter((p) => p.kind === 'sparse').map((p) => p.name),
      dims: cfg.params.flatMap((p) => p.shape.filter((d): d is string => typeof d === 'string')),
      scalars: cfg.params.filter((p) => p.kind === 'scalar').map((p) => p.name),
    });
    this.parts = cfg.guards.partitions.map((p) => ({ id: p.id, key: choiceKey(p.choices), label: p.label, choices: p.choices, fallbacks: p.fallbacks, replanned: false }));
  }

  private replan(problem: PlanProblem): { part: Part; ms: number } {
    const t0 = performance.now();
    const best = planPareto(this.sys, problem, this.popts).pareto[0];
    const ms = performance.now() - t0;
    if (!best) throw new InputError('DY3030', this.sys.name, undefined, `no mapping of kernel ${this.cfg.kernel} is feasible on ${this.sys.name} for this input`);
    const choices = choicesOf(problem, best);
    const key = choiceKey(choices);
    const known = this.parts.find((p) => p.key === key);
    if (known) return { part: known, ms };
    const part: Part = { id: this.parts.length, key, label: partitionLabel(this.cfg.spec, choices), choices, fallbacks: [], replanned: true };
    this.parts.push(part);
    return { part, ms };
  }

  /** Runnable here and feasible for this input. */
  ok(p: Part, problem: PlanProblem): boolean {
    return this.served(p) && Number.isFinite(this.memo.score(problem, p));
  }

  choose(inputs: RuntimeInputs): Choice {
    const cfg = this.cfg;
    const b = bindInputs(cfg.kernel, cfg.params, inputs);
    const features = this.view(b.binding);
    const leaf = cfg.guard(features);
    const walked = walkTree(cfg.guards.tree, (k) => features[k]);
    if (walked.leaf !== leaf) throw new Error(`generated guards of ${cfg.kernel} disagree with the guard tree (${leaf} vs ${walked.leaf}): regenerate the runtime`);
    const oor = inRanges(cfg.guards.ranges, (k) => features[k]) ? [] : outOfRange(cfg.guards.ranges, (k) => features[k]);
    const problem = this.memo.problem(b.binding);
    let selected = this.parts[leaf]!;
    const path = walked.path;
    if (walked.also && oor.length === 0) {
      // The leaf leaves a few partitions open: the cost model weighs them on this input (kept per pattern in the memo).
      const cands = [leaf, ...walked.also].map((i) => this.parts[i]!).filter((p) => this.served(p));
      const scored = cands.map((p) => ({ p, v: this.memo.score(problem, p) })).filter((x) => Number.isFinite(x.v));
      if (scored.length > 0) {
        selected = scored.reduce((a, x) => (x.v < a.v ? x : a)).p;
        path.push(`cost model: partition ${selected.id} of ${cands.map((p) => p.id).join(', ')}`);
      }
    }
    let replanInfo: Choice['replanInfo'];
    if (oor.length > 0) {
      const r = this.replan(problem);
      selected = r.part;
      replanInfo = { reason: `outside the guards' ranges: ${oor.join('; ')}`, planMs: r.ms };
    }
    let fallback: string | undefined;
    if (!this.ok(selected, problem)) {
      const why = this.served(selected) ? 'cannot run this input (memory, resources or constraints)' : 'needs a device no backend serves';
      const alt = this.fallbackOf(selected, problem);
      if (alt) {
        fallback = `partition ${selected.id} ${why}; fallback ${alt.id}`;
        selected = alt;
      } else if (!this.served(selected)) {
        const kinds = [...new Set(selected.choices.map((c) => this.sys.devices.find((d) => d.id === c.device)?.kind ?? c.device))];
        throw new InputError('DY3041', this.sys.name, undefined, `partition ${selected.id} (${selected.label}) runs stages on ${kinds.join(', ')}, and no backend serves some of its devices; no fallback can run either: pass a backend for each of ${kinds.join(', ')} (openProject builds them for a compiled project)`);
      }
    }
    return { b, problem, features, path, oor, selected, ...(replanInfo ? { replanInfo } : {}), ...(fallback ? { fallback } : {}) };
  }

  /** The first of a partition's fallbacks that can run the input, if any. */
  fallbackOf(p: Part, problem: PlanProblem, exclude: ReadonlySet<number> = new Set()): Part | undefined {
    return p.fallbacks.map((i) => this.parts[i]!).find((q) => !exclude.has(q.id) && this.ok(q, problem));
  }
}
