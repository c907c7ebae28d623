/**
 * The cost model's figures for an input, kept per pattern: the bound
 * problem per (sparse features record, dims, scalars) and each partition's
 * mapping on it. A stream that repeats a pattern (new values on the same
 * graph, the common case) prices its partitions once; features records are
 * cached per pattern (./inputs.ts), so their identity names the pattern.
 * A mapping's figures do not depend on the objective (only on the energy
 * scope and stream length, which every objective's guards share), so one
 * memoized mapping gives every objective's score.
 */
import { scoreMapping } from '../guards/build.js';
import type { Binding } from '../plan/bind.js';
import { bindProblem } from '../plan/bind.js';
import { evaluateChoices, type PlanOptions, type StageChoice } from '../plan/dp.js';
import type { Mapping, PlanProblem, PlanSpec } from '../plan/types.js';
import type { SystemSpec } from '../system/types.js';

/** Bound problems kept (least recently used first out). */
export const MEMO_PROBLEMS = 64;

export class ModelMemo {
  private readonly ids = new WeakMap<object, number>();
  private nextId = 1;
  private readonly problems = new Map<string, PlanProblem>();
  private readonly mappings = new WeakMap<PlanProblem, Map<string, Mapping | undefined>>();

  constructor(
    private readonly sys: SystemSpec,
    private readonly spec: PlanSpec,
    /** How figures are counted (energy scope, stream length), and the default goal and constraints of `score`. */
    private readonly popts: PlanOptions,
  ) {}

  private id(o: object): number {
    let i = this.ids.get(o);
    if (i === undefined) this.ids.set(o, (i = this.nextId++));
    return i;
  }

  problem(b: Binding): PlanProblem {
    let key = '';
    for (const [n, f] of b.sparse) key += `${n}#${this.id(f)};`;
    for (const v of b.dims.values()) key += `${v},`;
    key += '|';
    for (const v of b.scalars.values()) key += `${v},`;
    let p = this.problems.get(key);
    if (p) {
      this.problems.delete(key);
    } else {
      p = bindProblem(this.spec, b);
      if (this.problems.size >= MEMO_PROBLEMS) this.problems.delete(this.problems.keys().next().value!);
    }
    this.problems.set(key, p);
    return p;
  }

  /** A partition's mapping on a problem (undefined: it cannot run there). */
  mapping(p: PlanProblem, part: { key: string; choices: readonly StageChoice[] }): Mapping | undefined {
    let m = this.mappings.get(p);
    if (!m) this.mappings.set(p, (m = new Map()));
    if (!m.has(part.key)) m.set(part.key, evaluateChoices(this.sys, p, part.choices, this.popts));
    return m.get(part.key);
  }

  /** The objective's value of a partition on a problem (the objective and constraints of `opts`), Infinity when it cannot run there or breaks a constraint. */
  score(
    p: PlanProblem,
    part: { key: string; choices: readonly StageChoice[] },
    opts: PlanOptions = this.popts,
  ): number {
    return scoreMapping(this.mapping(p, part), opts);
  }
}
