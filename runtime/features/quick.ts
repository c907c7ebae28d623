/**
 * The planner's features of a CSR matrix at a cost bounded by a small share
 * of one pass over it, for a runtime that decides per input: tier 0 exactly
 * (O(1)), the row-length statistics and the column locality from a sample of
 * rows in blocks: the rows are cut into B strata and a block of
 * QUICK_BLOCK_ROWS consecutive rows is read in each, at a hashed offset.
 * Blocks, not single rows: a lone row costs a cache miss on its pointers and
 * one on its columns (about 100-150 ns measured here), a block's rows share
 * them, so the sample reads sequential memory as the kernel itself does.
 * B grows with the matrix (nnz / QUICK_ENTRIES_PER_BLOCK, between
 * QUICK_MIN_BLOCKS and QUICK_MAX_BLOCKS), so the sample stays a fixed small
 * share of an SpMV's reads. With fewer rows than the sample every row is read
 * and tier 1 is exact.
 *
 * The row statistics read row pointers only and are always taken; the
 * locality reads column indices (several times the cost) and is taken when
 * first asked for (`SampledFeatures` reads it in a getter): guards whose
 * path never tests it, and a runtime whose devices' models never read it,
 * never pay for it.
 *
 * What the sample gives (docs/FEATURES.md states the errors measured over
 * the real matrices), long rows counted as themselves (sampledRowStats: a
 * sampled row too long to stand for others, and rows a search of the
 * unsampled ones finds):
 *   - rowLenMean: exact (nnz / rows);
 *   - rowLenCv: the long rows' deviation and the other sampled rows',
 *     scaled, about the exact mean;
 *   - emptyRowFraction: the sampled share of empty rows;
 *   - rowLenMax: the longest row seen or found, a lower bound (exact when
 *     the longest row stands out of the rows around it);
 *   - top1PctNnzShare: the long rows, then the sampled rows' top 1% scaled;
 *   - localityScore: as tier 2, from the first entries of each sampled row;
 *   - rowLenChangeFraction: the share of length changes between consecutive
 *     rows within the blocks (exact when every row is read);
 *   - bandwidthEstimateNorm: as tier 2, the farthest column from its row over
 *     the sampled rows (their first and last columns), a lower bound.
 * CSC and COO have no row pointers to sample: the caller takes the exact
 * features (O(nnz)) for them.
 */
import type { SparseFeatures } from '../plan/types.js';
import type { CsrMatrix } from '../tensor.js';
import { LOCALITY_GAP } from './tier2.js';

export const QUICK_BLOCK_ROWS = 16;
/** One block per this many stored entries, within [QUICK_MIN_BLOCKS, QUICK_MAX_BLOCKS]. */
export const QUICK_ENTRIES_PER_BLOCK = 8192;
export const QUICK_MIN_BLOCKS = 2;
export const QUICK_MAX_BLOCKS = 16;
/** Column indices read per sampled row (its first ones) for the locality score. */
export const QUICK_ENTRIES_PER_ROW = 8;
/** The longest sampled rows kept for the top-1% share (1% of the largest sample). */
const MAX_TOP = 8;
/** The longest sampled rows the scan itself keeps: topSampled of at most QUICK_MAX_BLOCKS x QUICK_BLOCK_ROWS rows (or of all rows, when they are fewer). */
const KEPT_IN_SCAN = Math.ceil((QUICK_MAX_BLOCKS * QUICK_BLOCK_ROWS) / 100);

export interface QuickFeatures extends SparseFeatures {
  /** Rows the statistics were taken from (all of them when it equals rows: tier 1 exact). */
  sampledRows: number;
}

/** Blocks sampled for a matrix of `nnz` entries and `rows` rows (0: every row is read). */
export function quickBlocks(rows: number, nnz: number): number {
  const blocks = Math.max(QUICK_MIN_BLOCKS, Math.min(QUICK_MAX_BLOCKS, Math.floor(nnz / QUICK_ENTRIES_PER_BLOCK)));
  return blocks * QUICK_BLOCK_ROWS >= rows ? 0 : blocks;
}

/**
 * The first row of block b of `blocks` in a matrix of `rows` rows: in
 * stratum b at an offset hashed from (seed, b), in int32 arithmetic (V8 is
 * slow on typed-array reads at indices it holds as doubles, and on `%` of
 * doubles).
 */
function blockStart(rows: number, blocks: number, b: number, seed: number): number {
  const lo = Math.floor((b * rows) / blocks);
  const span = Math.max(1, Math.floor(((b + 1) * rows) / blocks) - lo - QUICK_BLOCK_ROWS + 1);
  let h = Math.imul((b + 1) ^ seed, 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b);
  h ^= h >>> 13;
  return (lo + Math.floor(((h >>> 0) / 4294967296) * span)) | 0;
}

/** Tier 0 and the sampled row statistics: what a runtime reads of every new pattern. */
export type RowStats = Omit<QuickFeatures, 'localityScore' | 'rowLenChangeFraction'>;

/**
 * Gaps between sampled blocks searched for a row longer than every sampled
 * one, at most: those holding the most entries beyond the mean row length,
 * where that excess is more than the spread of the gap's rows explains.
 * Each search reads log2(gap rows) row pointers.
 */
export const QUICK_SEARCHES = 4;
/** A search reads the last this many rows of its range in one pass rather than halving down to one. */
export const QUICK_SEARCH_SCAN = QUICK_BLOCK_ROWS;
/** A gap is searched when its excess over the mean exceeds this many standard deviations of its sum (and the longest sampled row). */
export const QUICK_SEARCH_SIGMAS = 3;
/** Sampled rows counted as themselves rather than as a sample of others, at most (the searches add up to QUICK_SEARCHES more). */
const MAX_LONG_SAMPLED = 8;
const MAX_LONG = MAX_LONG_SAMPLED + QUICK_SEARCHES;

// Scratch reused between calls: each block's first row, the row pointers at its ends and its longest row, each gap's score, the long rows' lengths.
const blockFirst = new Int32Array(QUICK_MAX_BLOCKS);
const blockP0 = new Int32Array(QUICK_MAX_BLOCKS);
const blockP1 = new Int32Array(QUICK_MAX_BLOCKS);
const blockMax = new Int32Array(QUICK_MAX_BLOCKS);
const gapScore = new Float64Array(QUICK_MAX_BLOCKS + 1);
const longLen = new Float64Array(MAX_LONG);

function badPointers(rows: number, from: number, to: number, a: number, b: number): RangeError {
  return new RangeError(
    `row pointers are not non-decreasing within 0..nnz: rowPtr[${from}] = ${a} > rowPtr[${to}] = ${b} (${rows} rows)`,
  );
}

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
 * Tier 0 and the row statistics from the sampled blocks, with long rows
 * counted as themselves: a sampled row so long that, standing for
 * rows / sampled rows others, it alone would hold more than nnz entries;
 * and rows longer than every sampled one that a search of the unsampled
 * rows finds. The gaps between the blocks hold the unsampled rows, and the
 * row pointers the blocks read give each gap's entries exactly: a gap
 * holding more entries beyond the mean than QUICK_SEARCH_SIGMAS standard
 * deviations of the sampled rows explain (and more than the longest sampled
 * row) is searched (searchLong), the QUICK_SEARCHES most in excess first.
 * The other sampled rows stand for the rest. So one dense row among short
 * ones moves rowLenMax, rowLenCv and top1PctNnzShare as it should whether a
 * block holds it or not, and a matrix without one costs no extra read.
 * Throws RangeError for row pointers shorter than rows + 1 or decreasing
 * where read. Empty shapes give 0 for every statistic, never NaN.
 */
export function sampledRowStats(m: CsrMatrix, seed = 0): RowStats {
  const { rows, cols, rowPtr } = m;
  if (!(Number.isSafeInteger(rows) && rows >= 0) || !(Number.isSafeInteger(cols) && cols >= 0))
    throw new RangeError(`a ${rows} x ${cols} matrix: rows and cols must be non-negative integers`);
  if (rowPtr.length < rows + 1)
    throw new RangeError(`${rowPtr.length} row pointers for ${rows} rows: expected rows + 1 = ${rows + 1}`);
  const nnz = rowPtr[rows]! - rowPtr[0]!;
  if (nnz < 0) throw badPointers(rows, 0, rows, rowPtr[0]!, rowPtr[rows]!);
  const mean = rows > 0 ? nnz / rows : 0;
  const blocks = quickBlocks(rows, nnz);
  const count = blocks === 0 ? rows : blocks * QUICK_BLOCK_ROWS;
  const alone = count * mean;
  // Each step its own small function: V8 optimizes a function sooner the smaller it is, and a runtime meets few new patterns.
  // The longest few: the scan keeps as many as estimate() reads without long rows (at most three); with long rows a second pass over the same rows, now in cache, keeps more.
  const keep = topSampled(rows, blocks, count);
  const beyond = scanBlocks(rowPtr, rows, blocks, mean, alone, seed, keep);
  const taken = blocks === 0 ? 0 : Math.min(MAX_LONG_SAMPLED, beyond);
  topCount = Math.min(MAX_TOP, taken + topSampled(rows, blocks, count - taken));
  if (taken > 0) keepLongest(rowPtr, rows, blocks, topCount);
  topFrom = 0;
  const longs = blocks === 0 ? 0 : takeLongSampled(alone, mean);
  const found = blocks === 0 ? 0 : searchGaps(rowPtr, rows, blocks, mean, count - longs, longs);
  return estimate(rows, cols, nnz, mean, blocks, count - longs, longs + found, count);
}

/** Sampled rows whose mean stands for the matrix's longest 1% in estimate() (`standing` rows stand for the others). */
function topSampled(rows: number, blocks: number, standing: number): number {
  return Math.min(MAX_TOP, blocks === 0 ? Math.ceil(rows / 100) : Math.max(1, Math.round(standing / 100)));
}

// What scanBlocks and keepLongest leave: the sampled rows' longest, empty count and squared deviations; topLen[topFrom, topCount) the longest few not yet taken as long rows (descending; 0 past them).
const topLen = new Int32Array(MAX_TOP);
let topFrom = 0;
let topCount = 0;
let sampledMax = 0;
let sampledEmpty = 0;
let sampledSq = 0;
let longestSeen = 0;

/** The i-th longest sampled row not yet taken as a long row (0 past those kept). */
const best = (i: number): number => (topFrom + i < topCount ? topLen[topFrom + i]! : 0);

/**
 * Reads the sampled blocks' row pointers (all rows when blocks is 0),
 * keeping each block's first row, end pointers and longest row, and the
 * longest, empty count and squared deviations, and the `keep` longest rows
 * in topLen (keep <= KEPT_IN_SCAN). Returns how many rows are longer than
 * `alone`.
 */
function scanBlocks(
  rowPtr: Int32Array,
  rows: number,
  blocks: number,
  mean: number,
  alone: number,
  seed: number,
  keep: number,
): number {
  // Locals only, int32 compares, one compare a row for the longest and one float add: this loop is most of a new
  // pattern's statistics. Each block's longest is kept; the few longest rows, and the rows longer than `alone`,
  // are taken from the blocks that can hold them afterwards (rows in cache by then; none in most matrices).
  let t0 = 0;
  let empty = 0;
  const count = blocks === 0 ? rows : blocks * QUICK_BLOCK_ROWS;
  const runs = blocks === 0 ? 1 : blocks;
  const runRows = blocks === 0 ? rows : QUICK_BLOCK_ROWS;
  // Every block's first and last pointer before any row: independent loads, so the cache misses of a step run
  // between kernels overlap rather than come one block at a time (after an 8 MB sweep of the caches, the statistics
  // of whitaker3 1.7 -> 1.2 us, cage8 1.0 -> 0.83 us: docs/PERFORMANCE.md).
  for (let b = 0; b < blocks; b++) {
    const first = blockStart(rows, blocks, b, seed);
    blockFirst[b] = first;
    blockP0[b] = rowPtr[first]! | 0;
    blockP1[b] = rowPtr[first + QUICK_BLOCK_ROWS]! | 0;
  }
  let neg = 0;
  let s1 = 0;
  let s2 = 0;
  for (let b = 0; b < runs; b++) {
    const first = blocks === 0 ? 0 : blockFirst[b]!;
    const p0 = blocks === 0 ? rowPtr[0]! | 0 : blockP0[b]!;
    let end = p0;
    let bmax = 0;
    // Two rows a step into two sums of squares: one float sum waited on its previous add every row (whitaker3's
    // scan of 112 rows about 310 -> 245 ns hot). The sums are of integers, exact below 2^53 whatever their order.
    let s2b = 0;
    let r = first + 1;
    for (const last = first + runRows; r < last; r += 2) {
      const mid = rowPtr[r]! | 0;
      const next = rowPtr[r + 1]! | 0;
      const n = (mid - end) | 0;
      const n2 = (next - mid) | 0;
      end = next;
      neg |= n | n2;
      if (n > bmax) bmax = n;
      if (n2 > bmax) bmax = n2;
      if (n === 0) empty++;
      if (n2 === 0) empty++;
      s2 += n * n;
      s2b += n2 * n2;
    }
    if (r === first + runRows) {
      const start = end;
      end = rowPtr[r]! | 0;
      const n = (end - start) | 0;
      neg |= n;
      if (n > bmax) bmax = n;
      if (n === 0) empty++;
      s2 += n * n;
    }
    s2 += s2b;
    s1 += end - p0;
    blockMax[b] = bmax;
    if (bmax > t0) t0 = bmax;
  }
  // One test for the sign of every length read; the pair that decreased is looked for only then.
  if (neg < 0) throw decreasingIn(rowPtr, rows, blocks, runs, runRows);
  // Squared deviations about the exact mean from the sums of lengths and of squares: exact integers (at most 256
  // rows of at most 2^31 entries), so the subtraction loses only rounding, and no dependent chain of float
  // subtractions and products a row.
  const sq = Math.max(0, s2 - 2 * mean * s1 + count * mean * mean);
  if (keep > KEPT_IN_SCAN)
    throw new RangeError(`scanBlocks keeps ${KEPT_IN_SCAN} longest rows, ${keep} were asked for`);
  if (keep > 1) topOfBlocks(rowPtr, blocks, runs, runRows, keep);
  else topLen[0] = t0;
  sampledMax = t0;
  sampledEmpty = empty;
  sampledSq = sq;
  longestSeen = t0;
  // `n > alone` is `n > floor(alone)` for an integer length: only the blocks whose longest passes it are read again.
  const aloneI = alone >= 2147483647 ? 2147483647 : Math.floor(alone) | 0;
  return t0 > aloneI ? countBeyond(rowPtr, blocks, runs, runRows, aloneI) : 0;
}

/** Rows longer than `aloneI` in the blocks scanBlocks read, from the blocks whose longest row is. */
function countBeyond(rowPtr: Int32Array, blocks: number, runs: number, runRows: number, aloneI: number): number {
  let beyond = 0;
  for (let b = 0; b < runs; b++) {
    if (blockMax[b]! <= aloneI) continue;
    const first = blocks === 0 ? 0 : blockFirst[b]!;
    let end = rowPtr[first]! | 0;
    for (let r = first + 1, last = first + runRows; r <= last; r++) {
      const start = end;
      end = rowPtr[r]! | 0;
      if (((end - start) | 0) > aloneI) beyond++;
    }
  }
  return beyond;
}

/**
 * The `k` longest of the rows scanBlocks read into topLen[0, k) (descending).
 * The k-th longest block maximum, `bar`, is at most the k-th longest row (k
 * blocks hold a row that long), so the k longest are the rows longer than
 * bar, which lie in the fewer than k blocks whose maximum passes it (read
 * again, in cache), and then rows of exactly bar (every block whose maximum
 * it is holds one): no block that ties at bar is read again.
 */
function topOfBlocks(rowPtr: Int32Array, blocks: number, runs: number, runRows: number, k: number): void {
  // The k-th largest block maximum, by insertion over at most QUICK_MAX_BLOCKS of them.
  for (let i = 0; i < k; i++) topLen[i] = 0;
  for (let b = 0; b < runs; b++) {
    const n = blockMax[b]!;
    if (n > topLen[k - 1]!) insertLongest(n, k - 1);
  }
  const bar = topLen[k - 1]! | 0;
  for (let i = 0; i < k; i++) topLen[i] = 0;
  for (let b = 0; b < runs; b++) {
    if (blockMax[b]! <= bar) continue;
    const first = blocks === 0 ? 0 : blockFirst[b]!;
    let end = rowPtr[first]! | 0;
    for (let r = first + 1, last = first + runRows; r <= last; r++) {
      const start = end;
      end = rowPtr[r]! | 0;
      const n = (end - start) | 0;
      if (n > bar && n > topLen[k - 1]!) insertLongest(n, k - 1);
    }
  }
  for (let i = 0; i < k; i++) if (topLen[i]! < bar) topLen[i] = bar;
}

/** The first decreasing pair of row pointers in the sampled runs (scanBlocks saw a negative length), as the error to throw. */
function decreasingIn(rowPtr: Int32Array, rows: number, blocks: number, runs: number, runRows: number): RangeError {
  for (let b = 0; b < runs; b++) {
    const first = blocks === 0 ? 0 : blockFirst[b]!;
    for (let r = first + 1; r <= first + runRows; r++)
      if (rowPtr[r]! < rowPtr[r - 1]!) return badPointers(rows, r - 1, r, rowPtr[r - 1]!, rowPtr[r]!);
  }
  return new RangeError(`row pointers decrease within the sampled rows (${rows} rows)`);
}

/** Inserts a row of length n into topLen[0, lastAt] (descending; n > topLen[lastAt]). */
function insertLongest(n: number, lastAt: number): void {
  let i = lastAt;
  while (i > 0 && topLen[i - 1]! < n) {
    topLen[i] = topLen[i - 1]!;
    i--;
  }
  topLen[i] = n;
}

/** The `k` longest sampled rows into topLen (descending), from the rows scanBlocks read (its pointers were checked there). */
function keepLongest(rowPtr: Int32Array, rows: number, blocks: number, k: number): void {
  topOfBlocks(rowPtr, blocks, blocks === 0 ? 1 : blocks, blocks === 0 ? rows : QUICK_BLOCK_ROWS, k);
}

/**
 * Sampled rows longer than `alone` (count x mean: standing for rows / count
 * rows, such a row would hold more than nnz entries by itself) leave the
 * sample and count as themselves, the longest few at most. Returns how many.
 */
function takeLongSampled(alone: number, mean: number): number {
  let longs = 0;
  while (longs < MAX_LONG_SAMPLED && best(0) > alone) {
    const n = best(0);
    longLen[longs++] = n;
    sampledSq = Math.max(0, sampledSq - (n - mean) * (n - mean));
    topFrom++;
    // With the cap reached, the rows left may be as long as the last one taken out.
    sampledMax = longs === MAX_LONG_SAMPLED ? n : best(0);
  }
  return longs;
}

/**
 * Searches the gaps between the blocks whose entries exceed their rows x
 * mean by more than QUICK_SEARCH_SIGMAS standard deviations of the sampled
 * rows' sum (and by more than the longest sampled row), the most in excess
 * first, QUICK_SEARCHES at most; each row found longer than every sampled
 * one goes to longLen after the `longs` already there. Returns how many.
 */
function searchGaps(
  rowPtr: Int32Array,
  rows: number,
  blocks: number,
  mean: number,
  standing: number,
  longs: number,
): number {
  const p00 = rowPtr[0]! | 0;
  const pEnd = rowPtr[rows]! | 0;
  const max = sampledMax;
  // The variance of a gap's sum of n rows is n x the rows' variance: compared squared, no square root per gap.
  const bar = standing > 0 ? (QUICK_SEARCH_SIGMAS * QUICK_SEARCH_SIGMAS * sampledSq) / standing : 0;
  // Gap g holds the rows between block g - 1 and block g (before the first, after the last).
  let open = 0;
  for (let g = 0; g <= blocks; g++) {
    const a = g === 0 ? 0 : blockFirst[g - 1]! + QUICK_BLOCK_ROWS;
    const b = g === blocks ? rows : blockFirst[g]!;
    const pa = g === 0 ? p00 : blockP1[g - 1]!;
    const pb = g === blocks ? pEnd : blockP0[g]!;
    if (pb < pa) throw badPointers(rows, a, b, pa, pb);
    const excess = pb - pa - (b - a) * mean;
    gapScore[g] = b - a > 0 && excess > max && excess * excess > bar * (b - a) ? excess : -1;
    if (gapScore[g]! > 0) open++;
  }
  let found = 0;
  for (let s = 0; s < QUICK_SEARCHES && open > 0; s++, open--) {
    let g = 0;
    for (let h = 1; h <= blocks; h++) if (gapScore[h]! > gapScore[g]!) g = h;
    gapScore[g] = -1;
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
    if (len > 0) longLen[longs + found++] = len;
  }
  return found;
}

/**
 * The statistics: the `longs` rows in longLen as themselves, the `standing`
 * other sampled rows standing for the rest (the variance, the empty share
 * and the top 1% scaled by (rows - longs) / standing).
 */
function estimate(
  rows: number,
  cols: number,
  nnz: number,
  mean: number,
  blocks: number,
  standing: number,
  longs: number,
  count: number,
): RowStats {
  let rowMax = longestSeen;
  const w = standing > 0 ? (rows - longs) / standing : 0;
  let sq = w * sampledSq;
  for (let i = 0; i < longs; i++) {
    const n = longLen[i]!;
    if (n > rowMax) rowMax = n;
    sq += (n - mean) * (n - mean);
  }
  // The longest 1% of the matrix: the long rows first (longest first), then the sampled rows' longest 1% scaled.
  const topRows = Math.ceil(rows / 100);
  let topSum = 0;
  let taken = 0;
  for (; taken < longs && taken < topRows; taken++) {
    // The longest not yet taken (a dozen rows at most: selection, no allocation).
    let at = taken;
    for (let i = taken + 1; i < longs; i++) if (longLen[i]! > longLen[at]!) at = i;
    const n = longLen[at]!;
    longLen[at] = longLen[taken]!;
    longLen[taken] = n;
    topSum += n;
  }
  const top = topSampled(rows, blocks, standing);
  let sampledTop = 0;
  for (let i = 0; i < top; i++) sampledTop += best(i);
  if (top > 0 && taken < topRows) topSum += (sampledTop / top) * (topRows - taken);
  return {
    rows,
    cols,
    nnz,
    rowLenMean: mean,
    rowLenMax: rowMax,
    rowLenCv: mean > 0 && rows > 0 ? Math.sqrt(sq / rows) / mean : 0,
    emptyRowFraction: rows > 0 ? (w * sampledEmpty) / rows : 0,
    top1PctNnzShare: nnz > 0 ? Math.min(1, topSum / nnz) : 0,
    sampledRows: count,
  };
}

/** The runs of consecutive rows a pass over the sample reads: `runs` of `runRows` rows, run b from first(b). */
function sampleRuns(m: CsrMatrix, seed: number): { runs: number; runRows: number; first: (b: number) => number } {
  const { rows, rowPtr } = m;
  const blocks = quickBlocks(rows, rowPtr[rows]! - rowPtr[0]!);
  return {
    runs: blocks === 0 ? 1 : blocks,
    runRows: blocks === 0 ? rows : QUICK_BLOCK_ROWS,
    first: (b) => (blocks === 0 ? 0 : blockStart(rows, blocks, b, seed)),
  };
}

/** The locality score (as tier 2's) from the first QUICK_ENTRIES_PER_ROW column indices of the sampled rows. */
export function sampledLocality(m: CsrMatrix, seed = 0): number {
  const { rowPtr, colIdx } = m;
  const { runs, runRows, first: firstOf } = sampleRuns(m, seed);
  let pairs = 0;
  let local = 0;
  for (let b = 0; b < runs; b++) {
    const first = firstOf(b);
    for (let r = first, last = first + runRows; r < last; r++) {
      const start = rowPtr[r]! | 0;
      const end = rowPtr[r + 1]! | 0;
      const stop = end - start < QUICK_ENTRIES_PER_ROW ? end : start + QUICK_ENTRIES_PER_ROW;
      let prev = colIdx[start]! | 0;
      for (let p = start + 1; p < stop; p++) {
        const c = colIdx[p]! | 0;
        const gap = c - prev;
        if (gap <= LOCALITY_GAP && gap >= -LOCALITY_GAP) local++;
        prev = c;
      }
      if (stop - start > 1) pairs += stop - start - 1;
    }
  }
  return pairs > 0 ? local / pairs : 0;
}

/**
 * The share of consecutive rows whose lengths differ, over the pairs within
 * the sampled blocks (every pair when every row is read: tier 1's figure).
 * Its own pass over the blocks' row pointers, taken on first read: only the
 * fitted CPU model reads it, so the guards' per-input step never pays for it.
 */
export function sampledRowChange(m: CsrMatrix, seed = 0): number {
  const { rowPtr } = m;
  const { runs, runRows, first: firstOf } = sampleRuns(m, seed);
  let pairs = 0;
  let changes = 0;
  for (let b = 0; b < runs && runRows >= 2; b++) {
    const first = firstOf(b);
    let last = (rowPtr[first + 1]! - rowPtr[first]!) | 0;
    for (let r = first + 1, end = first + runRows; r < end; r++) {
      const n = (rowPtr[r + 1]! - rowPtr[r]!) | 0;
      if (n !== last) changes++;
      last = n;
    }
    pairs += runRows - 1;
  }
  return pairs > 0 ? changes / pairs : 0;
}

/**
 * The band as tier 2 takes it (bandwidthEstimateNorm: the farthest column
 * from its row, / max(rows, cols)) over the sampled rows: each non-empty
 * row's first and last column (columns ascend within a row, as CsrMatrix
 * promises). Its own pass, taken on first read: only the GPU model reads it.
 */
export function sampledBandwidth(m: CsrMatrix, seed = 0): number {
  const { rows, cols, rowPtr, colIdx } = m;
  const { runs, runRows, first: firstOf } = sampleRuns(m, seed);
  let band = 0;
  for (let b = 0; b < runs; b++) {
    const first = firstOf(b);
    for (let r = first, last = first + runRows; r < last; r++) {
      const start = rowPtr[r]! | 0;
      const end = rowPtr[r + 1]! | 0;
      if (end <= start) continue;
      const lo = colIdx[start]! | 0;
      const hi = colIdx[end - 1]! | 0;
      const reach = Math.max(r > lo ? r - lo : lo - r, r > hi ? r - hi : hi - r);
      if (reach > band) band = reach;
    }
  }
  const extent = Math.max(rows, cols);
  return extent > 0 ? band / extent : 0;
}

/** Every sampled feature, locality and band included (for measuring the sample's errors). */
export function quickFeatures(m: CsrMatrix, seed = 0): QuickFeatures {
  return {
    ...sampledRowStats(m, seed),
    localityScore: sampledLocality(m, seed),
    rowLenChangeFraction: sampledRowChange(m, seed),
    bandwidthEstimateNorm: sampledBandwidth(m, seed),
  };
}

/**
 * The planner's features of a CSR pattern as a runtime takes them: tier 0
 * at once (O(1)), the sampled row statistics on the first read of any of
 * them and the locality score on its first read (getters), each kept. Guards
 * whose path and range checks test tier 0 only read no row
 * (runtime/guards/checks.ts). A spread copies own fields only, so a copy of
 * this record must go through `planFeatures` (runtime/guards/features.ts),
 * which reads every field by name; JSON takes it through toJSON.
 *
 * Row pointers too short for the rows, or a negative entry count, throw
 * RangeError from the constructor; pointers that decrease where the sample
 * reads them throw from the first statistic read, through `onError` when
 * given (the runtime turns them into the input's DY3051 there).
 */
export class SampledFeatures implements SparseFeatures {
  readonly rows: number;
  readonly cols: number;
  readonly nnz: number;
  readonly rowLenMean: number;
  readonly #m: CsrMatrix;
  readonly #seed: number;
  readonly #onError: ((e: RangeError) => never) | undefined;
  #stats: RowStats | undefined;
  #locality: number | undefined;
  #change: number | undefined;
  #band: number | undefined;

  constructor(m: CsrMatrix, seed = 0, onError?: (e: RangeError) => never) {
    const { rows, cols, rowPtr } = m;
    if (!(Number.isSafeInteger(rows) && rows >= 0) || !(Number.isSafeInteger(cols) && cols >= 0))
      throw new RangeError(`a ${rows} x ${cols} matrix: rows and cols must be non-negative integers`);
    if (rowPtr.length < rows + 1)
      throw new RangeError(`${rowPtr.length} row pointers for ${rows} rows: expected rows + 1 = ${rows + 1}`);
    const nnz = rowPtr[rows]! - rowPtr[0]!;
    if (nnz < 0) throw badPointers(rows, 0, rows, rowPtr[0]!, rowPtr[rows]!);
    this.rows = rows;
    this.cols = cols;
    this.nnz = nnz;
    this.rowLenMean = rows > 0 ? nnz / rows : 0;
    this.#m = m;
    this.#seed = seed;
    this.#onError = onError;
  }

  #row(): RowStats {
    if (this.#stats) return this.#stats;
    try {
      return (this.#stats = sampledRowStats(this.#m, this.#seed));
    } catch (e) {
      if (e instanceof RangeError && this.#onError) this.#onError(e);
      throw e;
    }
  }

  get rowLenMax(): number {
    return this.#row().rowLenMax;
  }
  get rowLenCv(): number {
    return this.#row().rowLenCv;
  }
  get emptyRowFraction(): number {
    return this.#row().emptyRowFraction;
  }
  get top1PctNnzShare(): number {
    return this.#row().top1PctNnzShare;
  }
  /** Rows the statistics were taken from (all of them when it equals rows: tier 1 exact). */
  get sampledRows(): number {
    return this.#row().sampledRows;
  }

  /** Whether the row statistics have been read (and so computed). */
  get rowStatsTaken(): boolean {
    return this.#stats !== undefined;
  }

  get localityScore(): number {
    return (this.#locality ??= sampledLocality(this.#m, this.#seed));
  }

  /** Whether the locality score has been read (and so computed). */
  get localityTaken(): boolean {
    return this.#locality !== undefined;
  }

  get rowLenChangeFraction(): number {
    return (this.#change ??= sampledRowChange(this.#m, this.#seed));
  }

  get bandwidthEstimateNorm(): number {
    return (this.#band ??= sampledBandwidth(this.#m, this.#seed));
  }

  toJSON(): QuickFeatures {
    return {
      rows: this.rows,
      cols: this.cols,
      nnz: this.nnz,
      rowLenMean: this.rowLenMean,
      rowLenMax: this.rowLenMax,
      rowLenCv: this.rowLenCv,
      emptyRowFraction: this.emptyRowFraction,
      top1PctNnzShare: this.top1PctNnzShare,
      localityScore: this.localityScore,
      rowLenChangeFraction: this.rowLenChangeFraction,
      bandwidthEstimateNorm: this.bandwidthEstimateNorm,
      sampledRows: this.sampledRows,
    };
  }
}
