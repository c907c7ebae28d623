/**
 * Evaluating guards on one input: walk the tree over the binding's features
 * and check every recorded range (an input outside them gets a fresh plan
 * from the runtime, not a guess).
 */
import type { Binding } from '../plan/bind.js';
import { featureValue, fieldReader, keyReader, tierOf } from './features.js';
import { fmt, walkTree } from './tree.js';
import type { GuardDecision, GuardPlan } from './types.js';

/** Ranges are widened by this relative slack, so rounding in a profile's own features never trips them. */
export const RANGE_SLACK = 1e-9;

/** One range as the checks take it: its bounds widened by RANGE_SLACK, and whether it is tier 0 (checked at every leaf). */
export interface CheckedRange {
  key: string;
  lo: number;
  hi: number;
  tier0: boolean;
}

/** A plan's ranges as a list of CheckedRange: made once per plan. */
const compiled = new WeakMap<GuardPlan['ranges'], CheckedRange[]>();
function rangeList(ranges: GuardPlan['ranges']): CheckedRange[] {
  let l = compiled.get(ranges);
  if (!l)
    compiled.set(
      ranges,
      (l = Object.entries(ranges).map(([key, [lo, hi]]) => ({
        key,
        lo: lo - Math.abs(lo) * RANGE_SLACK,
        hi: hi + Math.abs(hi) * RANGE_SLACK,
        tier0: tierOf(key) === 0,
      }))),
    );
  return l;
}

/**
 * Whether every checked feature lies in the guards' ranges: the per-input check, without building messages.
 * Tier-0 keys are checked always; others where the leaf lists them in `checks`, or every one where the leaf has
 * no list (types.ts).
 */
export function inRanges(
  ranges: GuardPlan['ranges'],
  get: (key: string) => number | undefined,
  checks?: readonly string[],
): boolean {
  for (const r of rangeList(ranges)) {
    if (checks !== undefined && !r.tier0 && !checks.includes(r.key)) continue;
    const v = get(r.key);
    if (v === undefined) continue;
    if (v < r.lo || v > r.hi) return false;
  }
  return true;
}

type RangeTest = (b: Binding) => boolean;
/** Compiled checks per plan's ranges and leaf's `checks` list (ALL_KEYS for a leaf without one). */
const tests = new WeakMap<GuardPlan['ranges'], WeakMap<readonly string[], RangeTest>>();
const ALL_KEYS: readonly string[] = [];

/**
 * inRanges on a binding, compiled once per (ranges, checks): the keys a
 * leaf checks, each read through its own reader (features.ts keyReader),
 * against bounds held in typed arrays. Reading a feature view by a variable
 * key goes megamorphic, which made the per-input range check cost more
 * than the sampled row statistics it guards.
 */
export function inRangesOf(ranges: GuardPlan['ranges'], b: Binding, checks?: readonly string[]): boolean {
  let byLeaf = tests.get(ranges);
  if (!byLeaf) tests.set(ranges, (byLeaf = new WeakMap()));
  const at = checks ?? ALL_KEYS;
  let t = byLeaf.get(at);
  if (!t) byLeaf.set(at, (t = compileRangeTest(ranges, checks)));
  return t(b);
}

/**
 * The ranges a leaf checks: every tier-0 one, and the row-statistic ones its `checks` list (all of them where it has
 * no list). The one rule the runtime's step (step.ts), this module's checks and the C++ header share.
 */
export function checkedRanges(ranges: GuardPlan['ranges'], checks?: readonly string[]): CheckedRange[] {
  return rangeList(ranges).filter((r) => checks === undefined || r.tier0 || checks.includes(r.key));
}

function compileRangeTest(ranges: GuardPlan['ranges'], checks?: readonly string[]): RangeTest {
  const kept = checkedRanges(ranges, checks);
  // Grouped by sparse input, so each input's record is looked up once; dims and scalars one by one.
  const groups = new Map<string, typeof kept>();
  const other: typeof kept = [];
  for (const r of kept) {
    const name =
      r.key.startsWith('dim.') || r.key.startsWith('scalar.') ? undefined : r.key.slice(0, r.key.lastIndexOf('.'));
    if (name === undefined) other.push(r);
    else groups.set(name, [...(groups.get(name) ?? []), r]);
  }
  const parts: RangeTest[] = [...groups].map(([name, rs]) => {
    const read = rs.map((r) => fieldReader(r.key.slice(r.key.lastIndexOf('.') + 1)));
    const [lo, hi] = bounds(rs);
    return (b) => {
      const f = b.sparse.get(name);
      if (f === undefined) return true;
      for (let i = 0; i < read.length; i++) {
        const v = read[i]!(f);
        if (v !== undefined && (v < lo[i]! || v > hi[i]!)) return false;
      }
      return true;
    };
  });
  if (other.length > 0) {
    const read = other.map((r) => keyReader(r.key));
    const [lo, hi] = bounds(other);
    parts.push((b) => {
      for (let i = 0; i < read.length; i++) {
        const v = read[i]!(b);
        if (v !== undefined && (v < lo[i]! || v > hi[i]!)) return false;
      }
      return true;
    });
  }
  return (b) => {
    for (let i = 0; i < parts.length; i++) if (!parts[i]!(b)) return false;
    return true;
  };
}

const bounds = (rs: readonly { lo: number; hi: number }[]): [Float64Array, Float64Array] => [
  Float64Array.from(rs, (r) => r.lo),
  Float64Array.from(rs, (r) => r.hi),
];

/** The checked features outside the guards' ranges, each as a message (for the log of an input that is re-planned). */
export function outOfRange(
  ranges: GuardPlan['ranges'],
  get: (key: string) => number | undefined,
  checks?: readonly string[],
): string[] {
  const out: string[] = [];
  for (const [key, [lo, hi]] of Object.entries(ranges)) {
    if (checks !== undefined && tierOf(key) !== 0 && !checks.includes(key)) continue;
    const v = get(key);
    if (v === undefined) continue;
    if (v < lo - Math.abs(lo) * RANGE_SLACK)
      out.push(`${key} = ${fmt(v)} is below the guards' range [${fmt(lo)}, ${fmt(hi)}]`);
    else if (v > hi + Math.abs(hi) * RANGE_SLACK)
      out.push(`${key} = ${fmt(v)} is above the guards' range [${fmt(lo)}, ${fmt(hi)}]`);
  }
  return out;
}

export function selectPartition(plan: GuardPlan, b: Binding): GuardDecision {
  const get = (k: string): number | undefined => featureValue(b, k);
  const { leaf, also, checks, path } = walkTree(plan.tree, get);
  const oor = outOfRange(plan.ranges, get, checks);
  return {
    partition: plan.partitions[leaf]!,
    candidates: [leaf, ...(also ?? [])].map((i) => plan.partitions[i]!),
    path,
    inRange: oor.length === 0,
    outOfRange: oor,
  };
}
