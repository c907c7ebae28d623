/**
 * Data features of tensors, in tiers by cost (docs/FEATURES.md): the
 * planner binds cost expressions with them and generated runtimes' guards
 * test them. Imports nothing outside runtime/. See docs/FEATURES.md.
 */

import type { DenseTensor, SparseMatrix } from '../tensor.js';
import { rowPtrOf, rowViewOf } from './rows.js';
import { tier0 } from './tier0.js';
import { rowLengthStats, tier1 } from './tier1.js';
import { sampleRows, tier2 } from './tier2.js';
import type { AllFeatures, FeatureTier, Features, Tier0Features, Tier1Features, Tier2Options } from './types.js';

export { FEATURE_DOCS, FEATURE_KEYS, featureKeysOfTier, type FeatureDoc } from './docs.js';
export { rowPtrFromRowIndices } from './rows.js';
export { matrixShape, tier0 } from './tier0.js';
export { rowLengthStats, tier1, top1PctRowCount } from './tier1.js';
export { DEFAULT_MAX_ENTRIES_PER_ROW, DEFAULT_SAMPLES, LOCALITY_GAP, tier2 } from './tier2.js';
export type {
  AllFeatures,
  FeatureKey,
  FeatureTier,
  Features,
  Tier0Features,
  Tier1Features,
  Tier2Features,
  Tier2Options,
} from './types.js';

/**
 * Features of tiers 0..`tiers` in one flat record (keys in FEATURE_KEYS order).
 * For CSC and COO the row lengths are counted once, O(nnz), and shared by
 * tiers 1 and 2.
 */
export function features(m: SparseMatrix | DenseTensor, tiers: 0): Tier0Features;
export function features(m: SparseMatrix | DenseTensor, tiers: 1): Tier0Features & Tier1Features;
export function features(m: SparseMatrix | DenseTensor, tiers: 2, opts?: Tier2Options): AllFeatures;
export function features(m: SparseMatrix | DenseTensor, tiers: FeatureTier, opts?: Tier2Options): Features;
export function features(m: SparseMatrix | DenseTensor, tiers: FeatureTier, opts?: Tier2Options): Features {
  if (tiers !== 0 && tiers !== 1 && tiers !== 2) throw new RangeError(`tiers must be 0, 1 or 2, got ${String(tiers)}`);
  const f0 = tier0(m);
  if (tiers === 0) return f0;
  if (m.format === 'dense') {
    const f1 = tier1(m);
    return tiers === 1 ? { ...f0, ...f1 } : { ...f0, ...f1, ...tier2(m, opts) };
  }
  const rowPtr = rowPtrOf(m);
  const f1 = rowLengthStats(rowPtr, m.rows);
  if (tiers === 1) return { ...f0, ...f1 };
  return { ...f0, ...f1, ...sampleRows(rowViewOf(m, rowPtr), opts) };
}
