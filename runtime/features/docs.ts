/**
 * What each feature key means, its tier and its cost: the source of
 * docs/FEATURES.md and of the guard generator's key -> tier table.
 */

import type { FeatureKey, FeatureTier } from './types.js';

export interface FeatureDoc {
  tier: FeatureTier;
  /** 'string' only for `format`; every other feature is a finite number. */
  type: 'number' | 'string';
  description: string;
  cost: string;
}

const T1_COST_CSR =
  'O(rows + maxRowLen - minRowLen): one pass over rowPtr and a histogram walk; no values or columns (CSC/COO: + O(nnz) row count)';
const T2_COST =
  'O(S) row pointers + at most S x E column indices (S = samples, default 1024; E = maxEntriesPerRow, default 64); COO: + O(nnz) order check and row count (conversion when not row-major); CSC: + O(nnz) conversion';

/** Key -> tier, type, definition, cost; keys in their stable output order. */
export const FEATURE_DOCS: Readonly<Record<FeatureKey, FeatureDoc>> = Object.freeze({
  format: { tier: 0, type: 'string', description: "Storage format: 'dense', 'csr', 'csc' or 'coo'.", cost: 'O(1)' },
  rows: {
    tier: 0,
    type: 'number',
    description:
      'Rows. A dense tensor of rank 0 is 1 x 1, rank 1 is n x 1, rank > 2 is (product of leading dims) x last dim.',
    cost: 'O(1)',
  },
  cols: { tier: 0, type: 'number', description: 'Columns (see rows for dense tensors).', cost: 'O(1)' },
  nnz: {
    tier: 0,
    type: 'number',
    description: 'Stored entries: explicit zeros count; a dense tensor stores every position.',
    cost: 'O(1)',
  },
  density: { tier: 0, type: 'number', description: 'nnz / (rows x cols); 0 when rows x cols is 0.', cost: 'O(1)' },
  rowLenMean: {
    tier: 1,
    type: 'number',
    description: 'Mean row length, nnz / rows; 0 when rows is 0.',
    cost: T1_COST_CSR,
  },
  rowLenMax: { tier: 1, type: 'number', description: 'Longest row length; 0 when rows is 0.', cost: T1_COST_CSR },
  rowLenMin: {
    tier: 1,
    type: 'number',
    description: 'Shortest row length (0 with any empty row); 0 when rows is 0.',
    cost: T1_COST_CSR,
  },
  rowLenCv: {
    tier: 1,
    type: 'number',
    description: 'Coefficient of variation of row lengths: population standard deviation / mean; 0 when the mean is 0.',
    cost: T1_COST_CSR,
  },
  rowLenGini: {
    tier: 1,
    type: 'number',
    description:
      'Gini coefficient of row lengths x sorted ascending: sum_i (2i - n - 1) x_i / (n sum x), i = 1..n. 0 when all rows are equal (or nnz is 0); (n - 1)/n when one row holds every entry.',
    cost: T1_COST_CSR,
  },
  emptyRowFraction: {
    tier: 1,
    type: 'number',
    description: 'Rows without entries / rows; 0 when rows is 0.',
    cost: T1_COST_CSR,
  },
  top1PctNnzShare: {
    tier: 1,
    type: 'number',
    description: 'Share of nnz held by the ceil(rows / 100) longest rows; 0 when nnz is 0.',
    cost: T1_COST_CSR,
  },
  rowLenChangeFraction: {
    tier: 1,
    type: 'number',
    description:
      "Share of rows r = 1..rows-1 whose length differs from row r - 1's: how often a row's inner loop ends at another trip count than the one before, the branch a CPU predicts (the fitted CPU model's branch-miss term). 0 with fewer than 2 rows.",
    cost: T1_COST_CSR,
  },
  sampledRows: {
    tier: 2,
    type: 'number',
    description:
      'Rows sampled: min(rows, S), one per stratum of rows / S rows at a seeded offset; every row when rows <= S. 0 for dense tensors (their tier 2 is exact from the shape).',
    cost: 'O(1)',
  },
  sampledEntries: {
    tier: 2,
    type: 'number',
    description:
      'Column indices read by the sample: per non-empty sampled row all of them when len <= E, else the first E - 1 and the last. At most S x E.',
    cost: 'O(1)',
  },
  colSpanMean: {
    tier: 2,
    type: 'number',
    description:
      'Mean over sampled non-empty rows of (last column - first column + 1) / cols; exact per row. 0 when no sampled row has entries.',
    cost: T2_COST,
  },
  bandwidthEstimate: {
    tier: 2,
    type: 'number',
    description:
      'max |i - j| over the sampled rows (exact per row, from its first and last column): a lower bound of the half-bandwidth, exact when rows <= S.',
    cost: T2_COST,
  },
  bandwidthEstimateNorm: {
    tier: 2,
    type: 'number',
    description:
      'bandwidthEstimate / max(rows, cols), in [0, 1) (equals / cols for square matrices, and stays below 1 for tall ones); 0 for empty shapes.',
    cost: T2_COST,
  },
  localityScore: {
    tier: 2,
    type: 'number',
    description:
      'Fraction of consecutive column pairs (c_k, c_k+1) within the read prefix of sampled rows with |c_k+1 - c_k| <= 16, i.e. the next dense-operand element lies within 16 elements (one 64-byte line of float32, two of float64): a proxy for cache-line reuse in a row-wise gather. 0 when no row has two read entries.',
    cost: T2_COST,
  },
});

/** Feature keys in their stable order (FEATURE_DOCS's order). */
export const FEATURE_KEYS: readonly FeatureKey[] = Object.freeze(Object.keys(FEATURE_DOCS) as FeatureKey[]);

/** The keys a given tier adds. */
export function featureKeysOfTier(tier: FeatureTier): FeatureKey[] {
  return FEATURE_KEYS.filter((k) => FEATURE_DOCS[k].tier === tier);
}
