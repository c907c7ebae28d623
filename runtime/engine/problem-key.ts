/**
 * A binding by value, for the memo's problems (./memo.ts): every feature of
 * each sparse input the planner may read, the dims, scalars and observed
 * trips, with their names. Two bindings with the same values bind the same
 * problem (bindProblem and every cost model read nothing else), so a graph
 * given again in new arrays (a CSR rebuilt per call, say) finds the problem,
 * its prices and the choice kept for it, where a key by the features
 * record's identity met a new problem and decided afresh (on gcn's default
 * guards 135-165 us a decision where that was a DP re-plan, 37-41 us where
 * three partitions were weighed, against 8-16 us now: docs/PERFORMANCE.md,
 * *Tenth run*).
 *
 * The features are copied into plain records, which the problem is then
 * bound from: a sampled record holds its matrix (runtime/features/quick.ts),
 * and a problem kept by value must not keep the user's arrays alive. The
 * copy reads every feature, some of them (the row-change share, the band)
 * passes of their own that pricing may never ask for; the memo takes it
 * only for a binding whose `eagerSignature` it has met before, so a stream
 * of patterns that are all new pays a dozen numbers' hash each and keeps
 * nothing.
 */
import type { Binding } from '../plan/bind.js';
import { OPTIONAL_FEATURES, REQUIRED_FEATURES, type SparseFeatures } from '../plan/types.js';
import { copyFeatures } from '../guards/features.js';

/** Every field of a features record, in a fixed order: one left out would let patterns that differ in it share a problem (the lists are exhaustive by type: runtime/plan/types.ts). */
export const FEATURE_FIELDS = [...REQUIRED_FEATURES, ...OPTIONAL_FEATURES] as const;

export interface ValueKey {
  hash: number;
  /** Per sparse input its presence mask and fields (absent: NaN), then dims, scalars and trips, each map's size first. */
  values: number[];
  /** The sparse inputs', dims', scalars' and trips' names in binding order. */
  names: string[];
}

const bits = new Float64Array(1);
const words = new Int32Array(bits.buffer);

/** One FNV-1a step over a number's 64-bit pattern, 32 bits at a time. */
function mix(h: number, x: number): number {
  bits[0] = x;
  h = Math.imul(h ^ words[0]!, 0x01000193);
  return Math.imul(h ^ words[1]!, 0x01000193);
}

function hashOf(values: readonly number[]): number {
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < values.length; i++) h = mix(h, values[i]!);
  return h;
}

function pushMap(m: ReadonlyMap<string, number> | undefined, values: number[], names: string[]): void {
  values.push(m?.size ?? 0);
  if (!m) return;
  for (const [k, v] of m) {
    names.push(k);
    values.push(v);
  }
}

/**
 * A hash of what a binding's features hold without a column read or a pass
 * of their own (tier 0 and the sampled row statistics, which pricing reads
 * anyway), its dims, scalars and trips: two bindings of the same values have
 * the same signature, so a signature not met before rules a value match out
 * at the cost of a dozen numbers' bits.
 */
export function eagerSignature(b: Binding): number {
  let h = 0x811c9dc5 | 0;
  for (const f of b.sparse.values()) {
    h = mix(h, f.rows);
    h = mix(h, f.cols);
    h = mix(h, f.nnz);
    h = mix(h, f.rowLenMean);
    h = mix(h, f.rowLenMax);
    h = mix(h, f.rowLenCv);
    h = mix(h, f.emptyRowFraction);
    h = mix(h, f.top1PctNnzShare);
  }
  for (const v of b.dims.values()) h = mix(h, v);
  for (const v of b.scalars.values()) h = mix(h, v);
  if (b.trips) for (const v of b.trips.values()) h = mix(h, v);
  return h;
}

export function valueKey(b: Binding): ValueKey {
  const values: number[] = [b.sparse.size];
  const names: string[] = [];
  for (const [name, f] of b.sparse) {
    names.push(name);
    let mask = 0;
    const at = values.length;
    values.push(0);
    for (let i = 0; i < FEATURE_FIELDS.length; i++) {
      const v = f[FEATURE_FIELDS[i]!];
      if (v !== undefined) mask |= 1 << i;
      values.push(v ?? NaN);
    }
    values[at] = mask;
  }
  pushMap(b.dims, values, names);
  pushMap(b.scalars, values, names);
  pushMap(b.trips, values, names);
  return { hash: hashOf(values), values, names };
}

/** The binding with its sparse inputs' features as plain records (copyFeatures): what a problem kept by value is bound from. */
export function withPlainFeatures(b: Binding): Binding {
  const sparse = new Map<string, SparseFeatures>();
  for (const [name, f] of b.sparse) sparse.set(name, copyFeatures(f));
  return { sparse, dims: b.dims, scalars: b.scalars, ...(b.trips ? { trips: b.trips } : {}) };
}

/** The same values (Object.is: NaN equals NaN, 0 and -0 differ) and names in the same order. */
export function sameKey(a: ValueKey, b: ValueKey): boolean {
  if (a.hash !== b.hash || a.values.length !== b.values.length || a.names.length !== b.names.length) return false;
  for (let i = 0; i < a.values.length; i++) if (!Object.is(a.values[i], b.values[i])) return false;
  for (let i = 0; i < a.names.length; i++) if (a.names[i] !== b.names[i]) return false;
  return true;
}
