/** The feature records computed by runtime/features, by tier. */

import type { StorageFormat } from '../tensor.js';

/** 0: free (shape and sizes); 1: one pass over row pointers; 2: sampled, bounded cost. */
export type FeatureTier = 0 | 1 | 2;

/** Tier 0: read from the tensor's header and array lengths, O(1). */
export interface Tier0Features {
  format: StorageFormat;
  rows: number;
  cols: number;
  /** Stored entries (explicit zeros count); every position for a dense tensor. */
  nnz: number;
  /** nnz / (rows * cols); 0 when rows * cols is 0. */
  density: number;
}

/** Tier 1: the distribution of row lengths (stored entries per row), no value or column reads. */
export interface Tier1Features {
  rowLenMean: number;
  rowLenMax: number;
  rowLenMin: number;
  /** Population standard deviation / mean; 0 when the mean is 0. */
  rowLenCv: number;
  /** Gini coefficient of row lengths, 0 (all equal) .. 1 - 1/rows (one row holds everything). */
  rowLenGini: number;
  emptyRowFraction: number;
  /** Share of nnz in the ceil(rows / 100) longest rows; 0 when nnz is 0. */
  top1PctNnzShare: number;
  /** Share of rows (after the first) whose length differs from the previous row's; 0 with fewer than 2 rows. */
  rowLenChangeFraction: number;
}

/** Tier 2: sampled rows; cost bounded by samples x maxEntriesPerRow whatever nnz is. */
export interface Tier2Features {
  /** Rows actually sampled (every row when rows <= samples). */
  sampledRows: number;
  /** Column indices actually read; at most sampledRows x maxEntriesPerRow. */
  sampledEntries: number;
  /** Mean over sampled non-empty rows of (last column - first column + 1) / cols. */
  colSpanMean: number;
  /** max |i - j| over the sampled rows; a lower bound of the exact half-bandwidth. */
  bandwidthEstimate: number;
  /** bandwidthEstimate / max(rows, cols), in [0, 1). */
  bandwidthEstimateNorm: number;
  /** Fraction of consecutive column pairs within a row (in the read prefix) whose gap is <= 16. */
  localityScore: number;
}

export type AllFeatures = Tier0Features & Tier1Features & Tier2Features;

/** One flat record: tier-0 keys always, higher tiers' keys when computed. */
export type Features = Tier0Features & Partial<Tier1Features> & Partial<Tier2Features>;

export type FeatureKey = keyof AllFeatures;

export interface Tier2Options {
  /** Rows to sample, at most (default 1024). */
  samples?: number;
  /** Seed of the per-stratum row choice (default 0). */
  seed?: number;
  /** Column indices read per sampled row, at most (default 64, minimum 2). */
  maxEntriesPerRow?: number;
}
