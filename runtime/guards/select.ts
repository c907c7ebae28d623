/**
 * Evaluating guards on one input: walk the tree over the binding's features
 * and check every recorded range (an input outside them gets a fresh plan
 * from the runtime, not a guess).
 */
import type { Binding } from '../plan/bind.js';
import { featureValue, tierOf } from './features.js';
import { fmt, walkTree } from './tree.js';
import type { GuardDecision, GuardPlan } from './types.js';

/** Ranges are widened by this relative slack, so rounding in a profile's own features never trips them. */
export const RANGE_SLACK = 1e-9;

/**
 * Whether a range key is checked at a leaf: tier-0 keys always; others when the leaf lists them in `checks`, or
 * every one when the leaf has no list (types.ts).
 */
function checked(key: string, checks: readonly string[] | undefined): boolean {
  return checks === undefined || tierOf(key) === 0 || checks.includes(key);
}

/** Whether every checked feature lies in the guards' ranges: the per-input check, without building messages. */
export function inRanges(
  ranges: GuardPlan['ranges'],
  get: (key: string) => number | undefined,
  checks?: readonly string[],
): boolean {
  for (const key in ranges) {
    if (!checked(key, checks)) continue;
    const v = get(key);
    if (v === undefined) continue;
    const [lo, hi] = ranges[key]!;
    if (v < lo - Math.abs(lo) * RANGE_SLACK || v > hi + Math.abs(hi) * RANGE_SLACK) return false;
  }
  return true;
}

/** The checked features outside the guards' ranges, each as a message (for the log of an input that is re-planned). */
export function outOfRange(
  ranges: GuardPlan['ranges'],
  get: (key: string) => number | undefined,
  checks?: readonly string[],
): string[] {
  const out: string[] = [];
  for (const [key, [lo, hi]] of Object.entries(ranges)) {
    if (!checked(key, checks)) continue;
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
