/**
 * Guards for every objective. A kernel has one guard plan per objective
 * (throughput, energy, latency), each as buildGuards made it: its partitions
 * numbered from 0, its tree's leaves and fallbacks those numbers. The
 * runtime, plan.json, the generated code and the C++ header share one
 * partition table per kernel: the initial objective's partitions first,
 * with their own ids, then every other objective's (in OBJECTIVES order)
 * that is not already there by its stage choices (choiceKey). So a
 * partition two objectives pick is one partition: changing objective onto
 * the running one moves nothing.
 */
import type { Objective } from '../plan/types.js';
import { choiceKey } from './build.js';
import { walkTree } from './tree.js';
import type { GuardPartition, GuardPlan } from './types.js';

/** Every objective, in the order the partition table takes them after the initial one. */
export const OBJECTIVES: readonly Objective[] = ['throughput', 'energy', 'latency'];

export function isObjective(x: unknown): x is Objective {
  return typeof x === 'string' && (OBJECTIVES as readonly string[]).includes(x);
}

/** A guard plan per objective; a runtime needs its initial objective's, and can change to any other given. */
export type GuardPlans = Partial<Record<Objective, GuardPlan>>;

/** A partition of the table: the stage choices, and for each objective holding it, its fallbacks as table ids. */
export interface TablePartition {
  /** Its index in the table. */
  id: number;
  /** choiceKey of the stage choices. */
  key: string;
  label: string;
  choices: GuardPartition['choices'];
  /** The objectives whose guards hold it, the first one's fallbacks being `fallbacks`. */
  objectives: Objective[];
  /** Fallbacks (table ids, best first) as the first objective holding it ranks them. */
  fallbacks: number[];
  /** Fallbacks (table ids) as each objective holding it ranks them. */
  fallbacksBy: Partial<Record<Objective, number[]>>;
}

export interface PartitionTable {
  partitions: TablePartition[];
  /** ids[o][i]: the table id of objective o's partition i (its tree's leaf i). */
  ids: Partial<Record<Objective, number[]>>;
  /** The objectives with guards: the initial one first, then the others in OBJECTIVES order. */
  objectives: Objective[];
}

/** The objectives `plans` has guards for, the initial one first (it must have guards). */
export function objectiveOrder(plans: GuardPlans, initial: Objective): Objective[] {
  // Own keys of the known objectives only: '__proto__' or 'constructor' would find Object.prototype's members.
  if (!isObjective(initial))
    throw new RangeError(`unknown objective ${String(initial)}: expected one of ${OBJECTIVES.join(', ')}`);
  const has = (o: Objective): boolean => Object.hasOwn(plans, o) && plans[o] !== undefined;
  if (!has(initial))
    throw new Error(
      `no guards for the initial objective ${initial} (guards for ${OBJECTIVES.filter(has).join(', ') || 'none'})`,
    );
  return [initial, ...OBJECTIVES.filter((o) => o !== initial && has(o))];
}

/**
 * Checks guard plans are one set: each records the objective it is filed
 * under, and all count figures the same way (energy scope, stream length)
 * on the same device kinds, since the runtime prices partitions once for
 * every objective and re-plans on those kinds.
 */
export function checkGuardPlans(plans: GuardPlans, initial: Objective): void {
  const order = objectiveOrder(plans, initial);
  const first = plans[initial]!;
  for (const o of order) {
    const p = plans[o]!;
    if (p.objective !== o) throw new Error(`the guards filed under objective ${o} were built for ${p.objective}`);
    if (p.energyScope !== first.energyScope || p.streamLength !== first.streamLength)
      throw new Error(
        `the guards of ${o} count figures for energy scope ${p.energyScope} and stream ${p.streamLength}, those of ${initial} for ${first.energyScope} and ${first.streamLength}: build every objective's guards with the same scope and stream`,
      );
    if (String(p.kinds ?? 'all') !== String(first.kinds ?? 'all'))
      throw new Error(
        `the guards of ${o} plan on device kinds ${String(p.kinds ?? 'all')}, those of ${initial} on ${String(first.kinds ?? 'all')}: build every objective's guards for the same kinds`,
      );
  }
}

/** The table of every objective's partitions, deduplicated by stage choices; the initial objective's keep their ids. */
export function partitionTable(plans: GuardPlans, initial: Objective): PartitionTable {
  const objectives = objectiveOrder(plans, initial);
  const partitions: TablePartition[] = [];
  const byKey = new Map<string, TablePartition>();
  const ids: PartitionTable['ids'] = {};
  for (const o of objectives) {
    const plan = plans[o]!;
    ids[o] = plan.partitions.map((p) => {
      const key = choiceKey(p.choices);
      // Within the initial objective every partition is its own (its ids stay the tree's leaves).
      let t = o === initial ? undefined : byKey.get(key);
      if (!t) {
        t = {
          id: partitions.length,
          key,
          label: p.label,
          choices: p.choices,
          objectives: [],
          fallbacks: [],
          fallbacksBy: {},
        };
        partitions.push(t);
        if (!byKey.has(key)) byKey.set(key, t);
      }
      if (!t.objectives.includes(o)) t.objectives.push(o);
      return t.id;
    });
  }
  for (const o of objectives) {
    const map = ids[o]!;
    plans[o]!.partitions.forEach((p, i) => {
      const t = partitions[map[i]!]!;
      if (t.fallbacksBy[o]) return;
      const fb = p.fallbacks.map((j) => map[j]!).filter((id, k, all) => id !== t.id && all.indexOf(id) === k);
      t.fallbacksBy[o] = fb;
      if (t.objectives[0] === o) t.fallbacks = fb;
    });
  }
  return { partitions, ids, objectives };
}

/** The guards of every objective as functions of a feature record, returning table ids: what a generated runtime's guard functions compute. */
export function treeGuards(
  plans: GuardPlans,
  initial: Objective,
): Partial<Record<Objective, (f: Readonly<Record<string, number>>) => number>> {
  const t = partitionTable(plans, initial);
  const out: Partial<Record<Objective, (f: Readonly<Record<string, number>>) => number>> = {};
  for (const o of t.objectives) {
    const tree = plans[o]!.tree;
    const ids = t.ids[o]!;
    out[o] = (f) => ids[walkTree(tree, (k) => f[k]).leaf]!;
  }
  return out;
}
