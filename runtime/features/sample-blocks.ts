/**
 * Where the runtime's row sample lies in a CSR matrix (runtime/features/
 * quick.ts tells what is taken from it): the rows cut into B strata and a
 * block of QUICK_BLOCK_ROWS consecutive rows read in each, at an offset
 * hashed from (seed, block), B growing with the matrix. The blocks' first
 * rows and end pointers are kept here between the passes of one call
 * (sampled-rows.ts reads them, gap-search.ts searches between them).
 * Imports the tensor type only.
 */
import type { CsrMatrix } from '../tensor.js';

/** Consecutive rows read in each block (even: sampled-rows.ts reads two a step). */
export const QUICK_BLOCK_ROWS = 16;
/** One block per this many stored entries, within [QUICK_MIN_BLOCKS, QUICK_SMALL_BLOCKS]. */
export const QUICK_ENTRIES_PER_BLOCK = 8192;
export const QUICK_MIN_BLOCKS = 2;
export const QUICK_SMALL_BLOCKS = 16;
/**
 * Past QUICK_SMALL_BLOCKS, one block per this many entries, up to QUICK_MAX_BLOCKS: a sample of 256 rows sees 2-3
 * rows of the longest 1%, too few on a power-law graph of millions of rows (its top-1% share 0.05-0.31 over seeds
 * against an exact 0.22, docs/FEATURES.md), while an SpMV over 2^20 entries or more takes a millisecond or more, of
 * which a block's 60-100 ns is nothing. Over all 24 real matrices (300k entries at most) the sample is as before.
 */
export const QUICK_ENTRIES_PER_LARGE_BLOCK = 65536;
export const QUICK_MAX_BLOCKS = 256;

/** Blocks sampled for a matrix of `nnz` entries and `rows` rows (0: every row is read). */
export function quickBlocks(rows: number, nnz: number): number {
  const small = Math.max(QUICK_MIN_BLOCKS, Math.min(QUICK_SMALL_BLOCKS, Math.floor(nnz / QUICK_ENTRIES_PER_BLOCK)));
  const blocks = Math.max(small, Math.min(QUICK_MAX_BLOCKS, Math.floor(nnz / QUICK_ENTRIES_PER_LARGE_BLOCK)));
  return blocks * QUICK_BLOCK_ROWS >= rows ? 0 : blocks;
}

/**
 * The first row of block b of `blocks` in a matrix of `rows` rows: in
 * stratum b at an offset hashed from (seed, b), in int32 arithmetic (V8 is
 * slow on typed-array reads at indices it holds as doubles, and on `%` of
 * doubles).
 */
export function blockStart(rows: number, blocks: number, b: number, seed: number): number {
  return blockAt(Math.floor((b * rows) / blocks), Math.floor(((b + 1) * rows) / blocks), b, seed);
}

/** blockStart's first row from its stratum [lo, hi): apart, so a pass over every block carries hi to the next lo. */
export function blockAt(lo: number, hi: number, b: number, seed: number): number {
  const span = Math.max(1, hi - lo - QUICK_BLOCK_ROWS + 1);
  let h = Math.imul((b + 1) ^ seed, 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b);
  h ^= h >>> 13;
  // x 2^-32 is / 2^32 exactly, without a division.
  return (lo + Math.floor((h >>> 0) * 2.3283064365386963e-10 * span)) | 0;
}

/**
 * The stored entries of a CSR pattern, from the ends of its row pointers,
 * after checking what every sampled statistic relies on: rows and cols
 * non-negative integers, rows + 1 row pointers, the last not below the
 * first. Throws RangeError otherwise.
 */
export function csrEntries(m: CsrMatrix): number {
  const { rows, cols, rowPtr } = m;
  if (!(Number.isSafeInteger(rows) && rows >= 0) || !(Number.isSafeInteger(cols) && cols >= 0))
    throw new RangeError(`a ${rows} x ${cols} matrix: rows and cols must be non-negative integers`);
  if (rowPtr.length < rows + 1)
    throw new RangeError(`${rowPtr.length} row pointers for ${rows} rows: expected rows + 1 = ${rows + 1}`);
  const nnz = rowPtr[rows]! - rowPtr[0]!;
  if (nnz < 0) throw badPointers(rows, 0, rows, rowPtr[0]!, rowPtr[rows]!);
  return nnz;
}

/** The error for row pointers that decrease where they are read. */
export function badPointers(rows: number, from: number, to: number, a: number, b: number): RangeError {
  return new RangeError(
    `row pointers are not non-decreasing within 0..nnz: rowPtr[${from}] = ${a} > rowPtr[${to}] = ${b} (${rows} rows)`,
  );
}

// Scratch reused between calls: the matrix's first and last row pointers (read once a call); each block's first row, the row pointers at its ends and its longest row.
export const sampleEnds = new Int32Array(2);
export const blockFirst = new Int32Array(QUICK_MAX_BLOCKS);
export const blockP0 = new Int32Array(QUICK_MAX_BLOCKS);
export const blockP1 = new Int32Array(QUICK_MAX_BLOCKS);
export const blockMax = new Int32Array(QUICK_MAX_BLOCKS);
