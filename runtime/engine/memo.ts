/**
 * The cost model's figures for an input, kept per pattern: the bound
 * problem per (sparse features record, dims, scalars) and each partition's
 * mapping on it. A stream that repeats a pattern (new values on the same
 * graph, the common case) prices its partitions once; features records are
 * cached per pattern (./inputs.ts), so their identity names the pattern, and
 * a new record with the same values (the graph again in new arrays) finds
 * the problem by value (./problem-key.ts).
 * A mapping's figures do not depend on the objective (only on the energy
 * scope and stream length, which every objective's guards share), so one
 * memoized mapping gives every objective's score.
 */
import { scoreMapping } from '../guards/build.js';
import type { Binding } from '../plan/bind.js';
import { bindProblem } from '../plan/bind.js';
import {
  choicePricer,
  planStructure,
  type ChoiceFigures,
  type ChoicePricer,
  type PlanOptions,
  type PlanStructure,
  type StageChoice,
} from '../plan/dp.js';
import type { Mapping, PlanProblem, PlanSpec } from '../plan/types.js';
import { eagerSignature, sameKey, valueKey, withPlainFeatures, type ValueKey } from './problem-key.js';
import type { SystemSpec } from '../system/types.js';

/** Bound problems kept per first sparse input's features record, and for bindings without one (least recently used first out). */
export const MEMO_PROBLEMS = 64;

/** What a problem's partitions were priced at, by partition key (undefined: it cannot run there). */
interface Priced {
  mappings: Map<string, Mapping | undefined>;
  figures: Map<string, ChoiceFigures | undefined>;
}

export class ModelMemo {
  private readonly problems = new Map<string, PlanProblem>();
  /** Per problem: the partitions' mappings by key, and their figures (what a score reads) by key. */
  private readonly mappings = new WeakMap<PlanProblem, Priced>();
  /**
   * The pricer the partitions of the last problem priced share (one planner set-up and its stage and op-time
   * caches), and that problem's prices while it is not kept (`admitted`). A partition priced later on an older
   * problem sets its pricer up again.
   */
  private last: { p: PlanProblem; pricer: ChoicePricer; by: Priced } | undefined;
  /** What pricing reads of the spec's ops whatever the input (cuts, live values, stage shapes): one for every problem. */
  private structure: PlanStructure | undefined;

  constructor(
    private readonly sys: SystemSpec,
    private readonly spec: PlanSpec,
    /** How figures are counted (energy scope, stream length), and the default goal and constraints of `score`. */
    private readonly popts: PlanOptions,
  ) {}

  /** Problems of a binding whose first sparse input has this features record: the rest of the binding as numbers (most recent first). */
  private readonly byFeatures = new WeakMap<object, { rest: (number | object)[]; p: PlanProblem }[]>();
  /**
   * The problems whose mappings are kept: those bound a second time (a pattern seen again), and every binding
   * without a sparse input. Kept per problem from the first input on, the mappings and the planner set-up outlived
   * each pattern in a stream of new patterns and V8 promoted them to its old space: its collections took about 40%
   * of each decision. Kept from the second input on, and the set-up for the last problem only, a new pattern's
   * decision on the held-out case's guards (five partitions) went from 156 to 105 us on whitaker3 and from 149 to
   * 94 us on bcsstk13 (docs/PERFORMANCE.md); a pattern seen again costs its second input one pricing more when another pattern came between.
   */
  private readonly admitted = new WeakSet<PlanProblem>();

  /**
   * The bound problem of a binding, made once per pattern, dims and scalars. A binding with a sparse input is
   * looked up by that input's features record (cached per pattern by inputs.ts) and the rest compared value by
   * value, which costs no string per input; a record not seen is looked up by all its values among the problems
   * bound last (`recent`), so another record with the same features shares the problem. One without a sparse
   * input is keyed by a string.
   */
  problem(b: Binding): PlanProblem {
    const first = b.sparse.values().next();
    if (first.done) return this.problemByKey(b);
    const rest: (number | object)[] = [];
    let i = 0;
    for (const f of b.sparse.values()) if (i++ > 0) rest.push(f);
    for (const v of b.dims.values()) rest.push(v);
    for (const v of b.scalars.values()) rest.push(v);
    // Observed trip counts change the problem too (a binding with them is longer than one without).
    if (b.trips) for (const v of b.trips.values()) rest.push(v);
    let list = this.byFeatures.get(first.value);
    if (!list) this.byFeatures.set(first.value, (list = []));
    const at = list.findIndex((e) => e.rest.length === rest.length && e.rest.every((x, k) => Object.is(x, rest[k])));
    if (at >= 0) {
      const e = list[at]!;
      if (at > 0) {
        list.splice(at, 1);
        list.unshift(e);
      }
      // Seen again: its mappings are kept from now on.
      this.admitted.add(e.p);
      return e.p;
    }
    // Not this record's: the same values from another (the graph again in new arrays) find their problem, among
    // those whose signature was met before.
    let p: PlanProblem | undefined;
    const sig = eagerSignature(b);
    if (this.signatureMet(sig)) {
      const key = valueKey(b);
      p = this.byValue(key);
      if (p) this.admitted.add(p);
      else {
        p = bindProblem(this.spec, withPlainFeatures(b));
        this.recent.unshift({ key, p });
        if (this.recent.length > MEMO_PROBLEMS) this.recent.pop();
      }
    } else {
      this.signatures[this.nextSignature] = sig;
      this.nextSignature = (this.nextSignature + 1) % MEMO_PROBLEMS;
      p = bindProblem(this.spec, b);
    }
    list.unshift({ rest, p });
    if (list.length > MEMO_PROBLEMS) list.pop();
    return p;
  }

  /** The eager signatures (./problem-key.ts) of the last MEMO_PROBLEMS records bound afresh, a ring. */
  private readonly signatures = new Int32Array(MEMO_PROBLEMS);
  private nextSignature = 0;

  /** A loop, not Int32Array.includes: that took about 220 ns over the 64 here, the loop about 30. */
  private signatureMet(sig: number): boolean {
    const s = this.signatures;
    for (let i = 0; i < s.length; i++) if (s[i] === sig) return true;
    return false;
  }
  /**
   * The problems bound from records whose signature was met before, by value (./problem-key.ts), most recent
   * first. Held strongly, so bound from plain copies of the features, which hold no matrix.
   */
  private readonly recent: { key: ValueKey; p: PlanProblem }[] = [];

  private byValue(key: ValueKey): PlanProblem | undefined {
    const at = this.recent.findIndex((e) => sameKey(e.key, key));
    if (at < 0) return undefined;
    const e = this.recent[at]!;
    if (at > 0) {
      this.recent.splice(at, 1);
      this.recent.unshift(e);
    }
    return e.p;
  }

  /**
   * What problem() does for a binding that found `p` again at the head of its list: the caller (the chooser, for
   * the previous call's own inputs) knows the problem without looking it up.
   */
  seenAgain(p: PlanProblem): void {
    this.admitted.add(p);
  }

  private problemByKey(b: Binding): PlanProblem {
    let key = '';
    for (const v of b.dims.values()) key += `${v},`;
    key += '|';
    for (const v of b.scalars.values()) key += `${v},`;
    if (b.trips) {
      key += '|';
      for (const [r, v] of b.trips) key += `${r}=${v},`;
    }
    let p = this.problems.get(key);
    if (p) {
      this.problems.delete(key);
    } else {
      p = bindProblem(this.spec, b);
      this.admitted.add(p);
      if (this.problems.size >= MEMO_PROBLEMS) this.problems.delete(this.problems.keys().next().value!);
    }
    this.problems.set(key, p);
    return p;
  }

  /** The plan structure of this spec's problems (the planner's input-independent set-up), taken from the first. */
  structureFor(p: PlanProblem): PlanStructure {
    return (this.structure ??= planStructure(p));
  }

  /** The prices of a problem's partitions, and the pricer set up for it. */
  private priced(p: PlanProblem): { p: PlanProblem; pricer: ChoicePricer; by: Priced } {
    if (this.last?.p === p) {
      // Seen again since it was priced: its prices are kept from now on.
      if (this.admitted.has(p) && !this.mappings.has(p)) this.mappings.set(p, this.last.by);
      return this.last;
    }
    // A problem not kept holds its prices beside its pricer, for its own input only.
    let by = this.mappings.get(p);
    if (!by) {
      by = { mappings: new Map(), figures: new Map() };
      if (this.admitted.has(p)) this.mappings.set(p, by);
    }
    return (this.last = { p, pricer: choicePricer(this.sys, p, this.popts, this.structureFor(p)), by });
  }

  /** A partition's mapping on a problem (undefined: it cannot run there). */
  mapping(p: PlanProblem, part: { key: string; choices: readonly StageChoice[] }): Mapping | undefined {
    const { pricer, by } = this.priced(p);
    if (!by.mappings.has(part.key)) by.mappings.set(part.key, pricer.mapping(part.choices));
    return by.mappings.get(part.key);
  }

  /**
   * A partition's figures on a problem (undefined: it cannot run there): its mapping's when that was built, else
   * priced without building its stages (the open partitions of a guard leaf are scored, one of them runs).
   */
  figures(p: PlanProblem, part: { key: string; choices: readonly StageChoice[] }): ChoiceFigures | undefined {
    const { pricer, by } = this.priced(p);
    if (by.mappings.has(part.key)) return by.mappings.get(part.key);
    if (!by.figures.has(part.key)) by.figures.set(part.key, pricer.figures(part.choices));
    return by.figures.get(part.key);
  }

  /** The objective's value of a partition on a problem (the objective and constraints of `opts`), Infinity when it cannot run there or breaks a constraint. */
  score(
    p: PlanProblem,
    part: { key: string; choices: readonly StageChoice[] },
    opts: PlanOptions = this.popts,
  ): number {
    return scoreMapping(this.figures(p, part), opts);
  }
}
