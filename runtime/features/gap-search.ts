/**
 * Long rows among the rows a sample of blocks does not read
 * (sample-blocks.ts): the gaps between the blocks hold the unsampled rows,
 * and the row pointers the blocks read give each gap's entries exactly. A
 * gap holding more than is expected of it, by more than chance explains, is
 * searched by halving towards the half holding more. docs/FEATURES.md states
 * the rule and what it finds. Imports sample-blocks.ts only.
 */
import {
  badPointers,
  blockFirst,
  blockMax,
  blockP0,
  blockP1,
  QUICK_BLOCK_ROWS,
  QUICK_MAX_BLOCKS,
  sampleEnds,
} from './sample-blocks.js';

/**
 * Gaps between sampled blocks searched for a row longer than every sampled
 * one, at most: those holding the most entries beyond what is expected of them,
 * where that excess is more than the spread of the gap's rows explains.
 * Each search reads log2(gap rows) row pointers.
 */
export const QUICK_SEARCHES = 4;
/** A search reads the last this many rows of its range in one pass rather than halving down to one. */
export const QUICK_SEARCH_SCAN = QUICK_BLOCK_ROWS;
/** A gap is searched when its excess over the mean exceeds this many standard deviations of its sum (and the longest sampled row). */
export const QUICK_SEARCH_SIGMAS = 3;
/**
 * With at least this many blocks (one more gap), gaps that the matrix's mean leaves open are measured again against
 * the blocks beside them and the spread of the gaps' own residuals, pooled over the gaps but the two most astray
 * (driftGaps): enough gaps that the one or two holding a long row are left out of the spread.
 */
export const QUICK_DRIFT_BLOCKS = 4;
/**
 * One search of the gaps most in excess, open or not, per this many entries (QUICK_SEARCHES at most): the rules
 * above keep a search for a gap whose excess chance does not explain, and on a power-law graph chance explains
 * every gap (its rows' spread is the long rows'), so they searched none and its longest row was missed 10-1000x
 * (docs/FEATURES.md). A search reads log2(gap rows / QUICK_SEARCH_SCAN) row pointers one after another, about
 * 1-2 us between kernels; an SpMV of 2^19 entries takes 0.25 ms or more.
 */
export const QUICK_ENTRIES_PER_SEARCH = 1 << 19;

/**
 * How many times the entries of the rows around it (from the end of the block before to the start of the block
 * after) a block's rows may claim, standing for rows / sampled rows each, before they are crowded: then the block's
 * longest rows count as themselves (sampled-rows.ts takeCrowded). Twice, not once: a block claims one stratum's
 * entries and the rows around it span one to three strata, so at once 102 blocks of 21 of the real matrices were
 * crowded over seeds 0-9, at twice 11 of 6, at four times 3 of 3; and at four times the 16 hubs of a degree-sorted
 * power-law graph's first block left a top-1% share 0.66 above the exact 0.24 (docs/FEATURES.md).
 */
export const QUICK_CROWDED = 2;
/**
 * A crowded block's rows taken as themselves are longer than this many times the matrix's mean row (and a block is
 * crowded only where its longest row is): a block of ordinary rows among empty ones claims more than the rows
 * around it hold, yet its rows are not of their own kind, and taking them left the other blocks' rows to stand for
 * the empty ones too (rowLenCv 6.8 against an exact 1.28 on 1,000 rows, test/features/sampled-corners.test.ts).
 * Where no sampled row passes it, the crowded test is not made: it cost 40-100 ns after a kernel on the real
 * meshes.
 */
export const QUICK_LONG_ROW_MEANS = 4;
/**
 * Whether rows holding `claim` entries, each standing for rows / count rows, claim more than QUICK_CROWDED x the
 * `around` entries of the rows around them: the crowded rule, for scoreGaps' test and sampled-rows.ts' crowdedBlocks
 * and takeCrowded alike. Without a division (products below 2^62, as doubles).
 */
export function claimsTooMuch(claim: number, around: number, rows: number, count: number): boolean {
  return claim * rows > QUICK_CROWDED * around * count;
}

/** What scoreGaps returns where a block is crowded. */
export const CROWDED_BLOCK = -1;

/** Searches a matrix of `nnz` entries makes of its gaps most in excess, open or not. */
export function searchesAfforded(nnz: number): number {
  // Most patterns are smaller: a compare, no division (a profile of adder_dcop_05's statistics put 12 ns here).
  return nnz < QUICK_ENTRIES_PER_SEARCH ? 0 : Math.min(QUICK_SEARCHES, Math.floor(nnz / QUICK_ENTRIES_PER_SEARCH));
}

// Scratch reused between calls: each gap's score (its excess where open for a search, else -1), residual and rows.
const gapScore = new Float64Array(QUICK_MAX_BLOCKS + 1);
const gapResidual = new Float64Array(QUICK_MAX_BLOCKS + 1);
const gapRows = new Float64Array(QUICK_MAX_BLOCKS + 1);
/** One row's share of a block: 1 / QUICK_BLOCK_ROWS, a power of two (so x ROW_SHARE is / QUICK_BLOCK_ROWS exactly). */
const ROW_SHARE = 1 / QUICK_BLOCK_ROWS;

/**
 * The longest row in rows [a, b) if it is longer than `than`: halves the
 * range towards the half holding more entries beyond `mean` per row (one
 * row-pointer read per step) while the range holds more than `than`
 * entries (a range holding at most `than` cannot hold a longer row) and
 * more than QUICK_SEARCH_SCAN rows, then reads those rows. A lone long row
 * among short ones draws the descent to it whenever its excess over the
 * mean outweighs the spread of the other rows' sums. Returns its length,
 * or 0 (a row found, if any, is at most `than`).
 */
function searchLong(
  rowPtr: Int32Array,
  rows: number,
  a: number,
  b: number,
  pa: number,
  pb: number,
  than: number,
  mean: number,
): number {
  while (b - a > QUICK_SEARCH_SCAN) {
    if (pb - pa <= than) return 0;
    const mid = a + ((b - a) >> 1);
    const pm = rowPtr[mid]! | 0;
    if (pm < pa || pm > pb)
      throw badPointers(rows, pm < pa ? a : mid, pm < pa ? mid : b, pm < pa ? pa : pm, pm < pa ? pm : pb);
    // The half holding more entries beyond the mean.
    if (pm - pa - (mid - a) * mean >= pb - pm - (b - mid) * mean) {
      b = mid;
      pb = pm;
    } else {
      a = mid;
      pa = pm;
    }
  }
  if (pb - pa <= than) return 0;
  // The last rows in one pass: their pointers share a cache line or two, fetched together, where halving on would
  // wait for one dependent read after another (four more for 16 rows, each a cache miss between kernels).
  let longest = 0;
  let end = pa;
  for (let r = a + 1; r <= b; r++) {
    const start = end;
    end = rowPtr[r]! | 0;
    if (end < start) throw badPointers(rows, r - 1, r, start, end);
    if (end - start > longest) longest = end - start;
  }
  return longest > than ? longest : 0;
}

/**
 * Scores the gaps between the blocks (gapScore: how far the gap's entries
 * exceed what is expected of it where it is open for a search, else -1)
 * and returns how many are open; `max` is the longest sampled row and `sq`
 * the `standing` sampled rows' squared deviations. Against the matrix: a
 * gap is open when its entries beyond its rows x mean are more than
 * QUICK_SEARCH_SIGMAS standard deviations of the `standing` sampled rows'
 * sum and more than the longest sampled row. Where one is, with
 * QUICK_DRIFT_BLOCKS blocks or more, every gap is then scored against its
 * neighbourhood instead (driftGaps). With `crowd` the sample's rows (0: no
 * test), the same pass returns CROWDED_BLOCK at the first block whose
 * longest row is longer than `longBar` and whose rows, standing for rows /
 * crowd rows each, claim more than QUICK_CROWDED x the entries of the rows
 * around it: a pass of its own cost 40-60 ns more after a kernel.
 */
export function scoreGaps(
  rows: number,
  blocks: number,
  mean: number,
  standing: number,
  max: number,
  sq: number,
  crowd: number,
  longBar: number,
): number {
  const p00 = sampleEnds[0]!;
  const pEnd = sampleEnds[1]!;
  // The variance of a gap's sum of n rows is n x the rows' variance: compared squared, no square root per gap.
  const bar = standing > 0 ? (QUICK_SEARCH_SIGMAS * QUICK_SEARCH_SIGMAS * sq) / standing : 0;
  // Gap g holds the rows between block g - 1 and block g (before the first, after the last); its end is carried as
  // the next gap's start.
  let open = 0;
  let a = 0;
  let pa = p00;
  // The entries' pointer at the end of block g - 2 (the matrix's start for block 0): where block g - 1's rows around
  // begin.
  let before = p00;
  for (let g = 0; g <= blocks; g++) {
    const last = g === blocks;
    const b = last ? rows : blockFirst[g]!;
    const pb = last ? pEnd : blockP0[g]!;
    if (pb < pa) throw badPointers(rows, a, b, pa, pb);
    if (
      crowd > 0 &&
      g > 0 &&
      blockMax[g - 1]! > longBar &&
      claimsTooMuch(blockP1[g - 1]! - blockP0[g - 1]!, pb - before, rows, crowd)
    )
      return CROWDED_BLOCK;
    const excess = pb - pa - (b - a) * mean;
    gapScore[g] = b - a > 0 && excess > max && excess * excess > bar * (b - a) ? excess : -1;
    if (gapScore[g]! > 0) open++;
    if (!last) {
      before = pa;
      a = b + QUICK_BLOCK_ROWS;
      pa = blockP1[g]!;
    }
  }
  // A gap open against the matrix is looked at again against its neighbourhood, and every gap with it. Where none
  // is open no drift shows to measure the gaps against, and the neighbourhood's pass is not paid (50-200 ns after a
  // kernel on bayer10, fidapex6 and Groebner_id2003_aug, docs/PERFORMANCE.md).
  if (open > 0 && blocks >= QUICK_DRIFT_BLOCKS) {
    const drift = driftGaps(rows, blocks, p00, pEnd, max);
    if (drift >= 0) return drift;
  }
  return open;
}

/**
 * Scores the gaps against their neighbourhood and returns how many are
 * open, or -1 with fewer than five gaps holding rows (too few to pool:
 * scoreGaps then measures them against the matrix). Rows within a block
 * resemble each other (a mesh's numbering keeps like rows together), so the
 * sampled rows' spread understates how far a gap's sum strays from rows x
 * mean, and row lengths drift along a matrix: against the matrix's mean,
 * whitaker3's sampled rows (0.18 entries of standard deviation a row) made
 * every gap (about 3 per sqrt(row) astray) look like one holding a long
 * row, and a lone long row where the rows are shorter than the mean was
 * never looked for. So a gap's residual r is its entries less its rows x
 * the mean row length of the blocks on either side (the one block beside
 * the first and the last gap), and it is open when r is more than the
 * longest sampled row and r^2 more than QUICK_SEARCH_SIGMAS^2 x its rows x
 * the residuals' spread per row: r^2 / n pooled over the gaps with rows but
 * the two of largest r^2 / n (where long rows would be).
 */
function driftGaps(rows: number, blocks: number, p00: number, pEnd: number, max: number): number {
  // The gaps' pointers were checked by scoreGaps' pass against the matrix, which runs first. Each gap's residual and
  // rows; the two of largest r^2 / n kept in locals, compared as products (no division). A gap's end is read once
  // and carried as the next gap's start (a, pa, and the block's entries as `left`): about 110 -> 80 ns for
  // facebook_combined's 11 gaps, hot.
  let filled = 0;
  let topR2 = 0;
  let topN = 0;
  let nextR2 = 0;
  let nextN = 0;
  let r2Sum = 0;
  let rowSum = 0;
  let a = 0;
  let pa = p00;
  let left = -1;
  for (let g = 0; g <= blocks; g++) {
    const last = g === blocks;
    const b = last ? rows : blockFirst[g]!;
    const pb = last ? pEnd : blockP0[g]!;
    const right = last ? -1 : blockP1[g]! - pb;
    const n = b - a;
    gapRows[g] = n > 0 ? n : 0;
    if (n > 0) {
      // Per-row means of the blocks beside the gap (x 1/16 and x 1/32: exact for integers).
      const near = left < 0 ? right * ROW_SHARE : right < 0 ? left * ROW_SHARE : (left + right) * (ROW_SHARE / 2);
      const r = pb - pa - n * near;
      const r2 = r * r;
      gapResidual[g] = r;
      r2Sum += r2;
      rowSum += n;
      filled++;
      if (r2 * topN >= topR2 * n) {
        nextR2 = topR2;
        nextN = topN;
        topR2 = r2;
        topN = n;
      } else if (r2 * nextN >= nextR2 * n) {
        nextR2 = r2;
        nextN = n;
      }
    }
    if (!last) {
      a = b + QUICK_BLOCK_ROWS;
      pa = blockP1[g]!;
      left = right;
    }
  }
  if (filled < 5) return -1;
  const perRow = (r2Sum - topR2 - nextR2) / (rowSum - topN - nextN);
  const bar = QUICK_SEARCH_SIGMAS * QUICK_SEARCH_SIGMAS * perRow;
  let open = 0;
  for (let g = 0; g <= blocks; g++) {
    const n = gapRows[g]!;
    const r = gapResidual[g]!;
    gapScore[g] = n > 0 && r > max && r * r > bar * n ? r : -1;
    if (gapScore[g]! > 0) open++;
  }
  return open;
}

/** A searched gap's score: below every other's (-1 where not open). */
const SEARCHED = -2;

/**
 * Searches the `open` gaps scoreGaps left open, the most in excess first,
 * then, up to `afforded` searches in all (searchesAfforded), the gaps most
 * in excess over the matrix's mean that are left; QUICK_SEARCHES at most.
 * Each row found longer than every sampled one (longer than `max`) goes to
 * `into` after the `longs` already there. Returns how many.
 */
export function searchOpen(
  rowPtr: Int32Array,
  rows: number,
  blocks: number,
  mean: number,
  max: number,
  into: Float64Array,
  longs: number,
  open: number,
  afforded: number,
): number {
  const p00 = sampleEnds[0]!;
  const pEnd = sampleEnds[1]!;
  let found = 0;
  for (let s = 0; s < QUICK_SEARCHES && (open > 0 || s < afforded); s++) {
    let g = 0;
    if (open > 0) {
      for (let h = 1; h <= blocks; h++) if (gapScore[h]! > gapScore[g]!) g = h;
      open--;
    } else {
      g = mostInExcess(rows, blocks, mean, max, p00, pEnd);
      if (g < 0) break;
    }
    gapScore[g] = SEARCHED;
    const a = g === 0 ? 0 : blockFirst[g - 1]! + QUICK_BLOCK_ROWS;
    const b = g === blocks ? rows : blockFirst[g]!;
    const len = searchLong(
      rowPtr,
      rows,
      a,
      b,
      g === 0 ? p00 : blockP1[g - 1]!,
      g === blocks ? pEnd : blockP0[g]!,
      max,
      mean,
    );
    if (len > 0) into[longs + found++] = len;
  }
  return found;
}

/**
 * The gap not yet searched holding the most entries beyond its rows x the matrix's mean, where that is more than
 * `max` (else none could hold a row longer than every sampled one): -1 for none. Its pointers were checked by
 * scoreGaps' pass.
 */
function mostInExcess(rows: number, blocks: number, mean: number, max: number, p00: number, pEnd: number): number {
  let most = -1;
  let excessMost = max;
  let a = 0;
  let pa = p00;
  for (let g = 0; g <= blocks; g++) {
    const last = g === blocks;
    const b = last ? rows : blockFirst[g]!;
    const pb = last ? pEnd : blockP0[g]!;
    const excess = pb - pa - (b - a) * mean;
    if (gapScore[g] !== SEARCHED && b > a && excess > excessMost) {
      most = g;
      excessMost = excess;
    }
    if (!last) {
      a = b + QUICK_BLOCK_ROWS;
      pa = blockP1[g]!;
    }
  }
  return most;
}
