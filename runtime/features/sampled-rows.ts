/**
 * The row-length statistics of a CSR matrix from the sample of blocks
 * (sample-blocks.ts), long rows counted as themselves: a sampled row too
 * long to stand for others, and rows a search of the gaps finds
 * (gap-search.ts). What each statistic is and its measured error:
 * runtime/features/quick.ts and docs/FEATURES.md. Imports sample-blocks.ts,
 * gap-search.ts and types only.
 */
import type { SparseFeatures } from '../plan/types.js';
import type { CsrMatrix } from '../tensor.js';
import {
  claimsTooMuch,
  CROWDED_BLOCK,
  QUICK_LONG_ROW_MEANS,
  QUICK_SEARCHES,
  scoreGaps,
  searchesAfforded,
  searchOpen,
} from './gap-search.js';
import {
  badPointers,
  blockAt,
  blockFirst,
  blockMax,
  blockP0,
  blockP1,
  csrEntries,
  QUICK_BLOCK_ROWS,
  QUICK_MAX_BLOCKS,
  quickBlocks,
  sampleEnds,
} from './sample-blocks.js';

/** The longest sampled rows kept for the top-1% share: 1% of the largest sample, QUICK_MAX_BLOCKS x QUICK_BLOCK_ROWS rows (or of all rows, when they are fewer). */
const MAX_TOP = Math.ceil((QUICK_MAX_BLOCKS * QUICK_BLOCK_ROWS) / 100);

export interface QuickFeatures extends SparseFeatures {
  /** Rows the statistics were taken from (all of them when it equals rows: tier 1 exact). */
  sampledRows: number;
}

/** Tier 0 and the sampled row statistics: what a runtime reads of every new pattern. */
export type RowStats = Omit<QuickFeatures, 'localityScore' | 'rowLenChangeFraction'>;

/**
 * Sampled rows counted as themselves rather than as a sample of others, at most (the searches add up to
 * QUICK_SEARCHES more): two blocks' rows, so a block of hubs (a degree-sorted graph's first rows) leaves the sample
 * whole; with 8, the 8 hubs of 5,000-6,000 entries left stood for 470 rows each, twice the matrix's entries.
 */
const MAX_LONG_SAMPLED = 2 * QUICK_BLOCK_ROWS;
const MAX_LONG = MAX_LONG_SAMPLED + QUICK_SEARCHES;

// Scratch reused between calls: the long rows' lengths (the sampled ones first, then those the searches found) and the sampled ones' rows.
const longLen = new Float64Array(MAX_LONG);
const longRow = new Int32Array(MAX_LONG_SAMPLED);
// The entries around each block where its rows claim more (crowdedBlocks; -1 where not), and a crowded block's row lengths (-1: taken).
const blockAround = new Float64Array(QUICK_MAX_BLOCKS);
const blockLen = new Int32Array(QUICK_BLOCK_ROWS);

/**
 * Tier 0 and the row statistics from the sampled blocks, with long rows
 * counted as themselves: the longest rows of a block whose rows, standing
 * for rows / sampled rows others each, would hold more than twice the
 * entries of the rows around it (crowdedBlocks); and rows longer than every
 * sampled one that a search of the unsampled rows finds (those the rules
 * below open, and on a matrix of 2^19 entries or more those most in excess,
 * searchesAfforded). The gaps between the blocks hold the unsampled rows, and the
 * row pointers the blocks read give each gap's entries exactly: a gap
 * holding more entries than the matrix's mean by more than
 * QUICK_SEARCH_SIGMAS standard deviations of the sampled rows explain (and
 * than the longest sampled row) is searched (searchLong), the
 * QUICK_SEARCHES most in excess first; where one is and there are
 * QUICK_DRIFT_BLOCKS blocks or more, the gaps are scored against their
 * neighbourhood instead (gap-search.ts scoreGaps).
 * The other sampled rows stand for the rest. So one dense row among short
 * ones moves rowLenMax, rowLenCv and top1PctNnzShare as it should whether a
 * block holds it or not, and a matrix without one costs no extra read.
 * Throws RangeError for row pointers shorter than rows + 1 or decreasing
 * where read. Empty shapes give 0 for every statistic, never NaN.
 */
export function sampledRowStats(m: CsrMatrix, seed = 0): RowStats {
  return rowStatsOf(m.rowPtr, m.rows, m.cols, csrEntries(m), seed);
}

/**
 * sampledRowStats of a pattern whose shape csrEntries has checked and whose `nnz` it gave: SampledFeatures checks
 * them when it is made and reads the statistics later, so a new pattern's step checks its shape once.
 */
export function rowStatsOf(rowPtr: Int32Array, rows: number, cols: number, nnz: number, seed: number): RowStats {
  const mean = rows > 0 ? nnz / rows : 0;
  const blocks = quickBlocks(rows, nnz);
  return blocks === 0
    ? allRowStats(rowPtr, rows, cols, nnz, mean)
    : blockRowStats(rowPtr, rows, cols, nnz, mean, blocks, seed);
}

/**
 * The statistics from the sampled blocks: one pass over them, the longest
 * few rows, the gaps' scores, the record. This is what almost every new
 * pattern runs, between kernels: one pass over fixed runs of
 * QUICK_BLOCK_ROWS rows (even: two rows a step), with no branch for the
 * every-row case (allRowStats) and no work for long rows unless the sample
 * holds one (withLongRows) or a gap is open for a search.
 */
function blockRowStats(
  rowPtr: Int32Array,
  rows: number,
  cols: number,
  nnz: number,
  mean: number,
  blocks: number,
  seed: number,
): RowStats {
  const count = blocks * QUICK_BLOCK_ROWS;
  // Every block's first and last pointer before any row: independent loads, so the cache misses of a step run
  // between kernels overlap rather than come one block at a time (after an 8 MB sweep of the caches, the statistics
  // of whitaker3 1.7 -> 1.2 us, cage8 1.0 -> 0.83 us: docs/PERFORMANCE.md).
  sampleEnds[0] = rowPtr[0]! | 0;
  sampleEnds[1] = rowPtr[rows]! | 0;
  let lo = 0;
  for (let b = 0; b < blocks; b++) {
    const hi = Math.floor(((b + 1) * rows) / blocks);
    const first = blockAt(lo, hi, b, seed);
    lo = hi;
    blockFirst[b] = first;
    blockP0[b] = rowPtr[first]! | 0;
    blockP1[b] = rowPtr[first + QUICK_BLOCK_ROWS]! | 0;
  }
  // Locals only, int32 compares, two rows a step into two longest and two float sums of squares (one float sum
  // waited on its previous add every row). The sums are of integers, exact below 2^53 whatever their order.
  let t0 = 0;
  let empty = 0;
  let neg = 0;
  let s1 = 0;
  let s2 = 0;
  for (let b = 0; b < blocks; b++) {
    const first = blockFirst[b]!;
    const p0 = blockP0[b]!;
    let end = p0;
    let m1 = 0;
    let m2 = 0;
    let s2b = 0;
    let s1b = 0;
    for (let r = first + 1, last = first + QUICK_BLOCK_ROWS; r < last; r += 2) {
      const mid = rowPtr[r]! | 0;
      const next = rowPtr[r + 1]! | 0;
      const n = (mid - end) | 0;
      const n2 = (next - mid) | 0;
      end = next;
      neg |= n | n2;
      if (n > m1) m1 = n;
      if (n2 > m2) m2 = n2;
      empty += (n === 0 ? 1 : 0) + (n2 === 0 ? 1 : 0);
      s2 += n * n;
      s2b += n2 * n2;
      s1b += n + n2;
    }
    // A pair falling by 2^31 or more wraps to a positive int32 length, which the sign test misses: the lengths then
    // do not add up to the block's span.
    if (s1b !== end - p0) neg = -1;
    s2 += s2b;
    s1 += end - p0;
    const bmax = m1 > m2 ? m1 : m2;
    blockMax[b] = bmax;
    if (bmax > t0) t0 = bmax;
  }
  // One test for the sign of every length read; the pair that decreased is looked for only then.
  if (neg < 0) throw decreasingIn(rowPtr, rows, blocks, blocks, QUICK_BLOCK_ROWS);
  sampledMax = t0;
  sampledEmpty = empty;
  sampledSq = squaredDeviations(s1, s2, count, mean);
  longestSeen = t0;
  // Where no sampled row is long against the mean no block can be crowded, and the test is not made.
  const longBar = QUICK_LONG_ROW_MEANS * mean;
  const open = scoreGaps(rows, blocks, mean, count, t0, sampledSq, t0 > longBar ? count : 0, longBar);
  if (open === CROWDED_BLOCK) return withLongRows(rowPtr, rows, cols, nnz, mean, blocks, longBar);
  // The longest few estimate() reads (at most three below 2^19 entries).
  const keep = topSampled(rows, blocks, count);
  if (keep > 1) topOfBlocks(rowPtr, blocks, blocks, QUICK_BLOCK_ROWS, keep, 0);
  else topLen[0] = t0;
  topCount = keep;
  const afforded = searchesAfforded(nnz);
  const found = open > 0 || afforded > 0 ? searchOpen(rowPtr, rows, blocks, mean, t0, longLen, 0, open, afforded) : 0;
  return estimate(rows, cols, nnz, mean, blocks, count, found, count);
}

/**
 * Squared deviations about the exact mean from the sums of lengths and of squares: exact integers (at most 256 rows
 * of at most 2^31 entries), so the subtraction loses only rounding, and no dependent chain of float subtractions and
 * products a row.
 */
function squaredDeviations(s1: number, s2: number, count: number, mean: number): number {
  return Math.max(0, s2 - 2 * mean * s1 + count * mean * mean);
}

/**
 * Blocks whose rows claim more than the rows around them hold. A sampled
 * row stands for rows / count rows, so a block's rows together claim rows /
 * count x their entries; where that is more than QUICK_CROWDED x what all
 * the rows between the blocks beside it hold (the row pointers the sample
 * read give those entries exactly; the matrix's ends stand beside the first
 * and the last block) and its longest row is longer than `longBar`
 * (QUICK_LONG_ROW_MEANS x the mean), the block's longest rows are of their
 * own kind and count as themselves (takeCrowded), longest first, until the
 * rest claim no more than that or are no longer than `longBar`. scoreGaps
 * makes the same test in its pass over the gaps and says only whether a
 * block is crowded; this pass, run only then, says which. The rule this
 * replaced took a sampled row whose claim alone passed
 * the whole matrix's entries: on a power-law graph of 10^6 rows a sampled
 * row of 15,000 entries passed it and stood for 488 rows, 86% of the
 * matrix's entries, which made rowLenCv 4x and the top-1% share 0.91
 * against an exact 0.23 (docs/FEATURES.md). Sets blockAround[b] to the
 * entries around block b where it is crowded (-1 where not) and returns how
 * many are.
 */
function crowdedBlocks(rows: number, blocks: number, count: number, longBar: number): number {
  let crowded = 0;
  let before = sampleEnds[0]!;
  const pEnd = sampleEnds[1]!;
  for (let b = 0; b < blocks; b++) {
    const around = (b + 1 < blocks ? blockP0[b + 1]! : pEnd) - before;
    if (blockMax[b]! > longBar && claimsTooMuch(blockP1[b]! - blockP0[b]!, around, rows, count)) {
      blockAround[b] = around;
      crowded++;
    } else blockAround[b] = -1;
    before = blockP1[b]!;
  }
  return crowded;
}

/**
 * blockRowStats' continuation where crowdedBlocks found blocks claiming
 * more than the rows around them hold: their longest rows, MAX_LONG_SAMPLED
 * at most in all, leave the sample and count as themselves, then the gaps
 * are scored against the rows left and searched.
 */
function withLongRows(
  rowPtr: Int32Array,
  rows: number,
  cols: number,
  nnz: number,
  mean: number,
  blocks: number,
  longBar: number,
): RowStats {
  const count = blocks * QUICK_BLOCK_ROWS;
  crowdedBlocks(rows, blocks, count, longBar);
  const longs = takeCrowded(rowPtr, rows, blocks, count, mean, longBar);
  topCount = topSampled(rows, blocks, count - longs);
  topOfBlocks(rowPtr, blocks, blocks, QUICK_BLOCK_ROWS, topCount, longs);
  const open = scoreGaps(rows, blocks, mean, count - longs, sampledMax, sampledSq, 0, 0);
  const afforded = searchesAfforded(nnz);
  const found =
    open > 0 || afforded > 0 ? searchOpen(rowPtr, rows, blocks, mean, sampledMax, longLen, longs, open, afforded) : 0;
  return estimate(rows, cols, nnz, mean, blocks, count - longs, longs + found, count);
}

/** Every row read (no more rows than the sample): tier 1 exactly, no long rows to look for. */
function allRowStats(rowPtr: Int32Array, rows: number, cols: number, nnz: number, mean: number): RowStats {
  const keep = topSampled(rows, 0, rows);
  scanAllRows(rowPtr, rows, mean, keep);
  topCount = keep;
  return estimate(rows, cols, nnz, mean, 0, rows, 0, rows);
}

/** Sampled rows whose mean stands for the matrix's longest 1% in estimate() (`standing` rows stand for the others). */
function topSampled(rows: number, blocks: number, standing: number): number {
  return Math.min(MAX_TOP, blocks === 0 ? Math.ceil(rows / 100) : Math.max(1, Math.round(standing / 100)));
}

// What the scan (blockRowStats, scanAllRows) and takeCrowded leave: the standing sampled rows' longest, empty count and squared deviations; topLen[0, topCount) their longest few (descending); the longest sampled row, standing or not.
const topLen = new Int32Array(MAX_TOP);
let topCount = 0;
let sampledMax = 0;
let sampledEmpty = 0;
let sampledSq = 0;
let longestSeen = 0;

/** The i-th longest standing sampled row (0 past those kept). */
const best = (i: number): number => (i < topCount ? topLen[i]! : 0);

/**
 * Reads every row pointer (a matrix of no more rows than the sample):
 * the longest, empty count and squared deviations, and the `keep` longest
 * rows in topLen (keep <= MAX_TOP).
 */
function scanAllRows(rowPtr: Int32Array, rows: number, mean: number, keep: number): void {
  let t0 = 0;
  let empty = 0;
  let neg = 0;
  let s2 = 0;
  let s1 = 0;
  const p0 = rowPtr[0]! | 0;
  let end = p0;
  for (let r = 1; r <= rows; r++) {
    const next = rowPtr[r]! | 0;
    const n = (next - end) | 0;
    end = next;
    neg |= n;
    if (n > t0) t0 = n;
    if (n === 0) empty++;
    s2 += n * n;
    s1 += n;
  }
  // As in blockRowStats: a fall of 2^31 or more wraps to a positive length, and the lengths then miss the span.
  if (neg < 0 || s1 !== end - p0) throw decreasingIn(rowPtr, rows, 0, 1, rows);
  blockMax[0] = t0;
  if (keep > MAX_TOP) throw new RangeError(`scanAllRows keeps ${MAX_TOP} longest rows, ${keep} were asked for`);
  if (keep > 1) topOfBlocks(rowPtr, 0, 1, rows, keep, 0);
  else topLen[0] = t0;
  sampledMax = t0;
  sampledEmpty = empty;
  sampledSq = squaredDeviations(end - p0, s2, rows, mean);
  longestSeen = t0;
}

/**
 * The `k` longest of the rows the scan read into topLen[0, k) (descending),
 * but the `longs` rows takeCrowded took (their blocks' maxima are then the
 * longest rows left standing). The k-th longest block maximum, `bar`, is at
 * most the k-th longest row (k blocks hold a row that long), so the k
 * longest are the rows longer than bar, which lie in the fewer than k blocks
 * whose maximum passes it (read again, in cache), and then rows of exactly
 * bar (every block whose maximum it is holds one): no block that ties at
 * bar is read again.
 */
function topOfBlocks(
  rowPtr: Int32Array,
  blocks: number,
  runs: number,
  runRows: number,
  k: number,
  longs: number,
): void {
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
      if (n > bar && n > topLen[k - 1]! && (longs === 0 || !isTaken(r - 1, longs))) insertLongest(n, k - 1);
    }
  }
  for (let i = 0; i < k; i++) if (topLen[i]! < bar) topLen[i] = bar;
}

/** The first decreasing pair of row pointers in the sampled runs (the scan saw a negative length), as the error to throw. */
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

/**
 * Takes the longest rows of each crowded block out of the sample, longest
 * first, until the block's rows left claim no more than QUICK_CROWDED x
 * what the rows around it hold less those taken (crowdedBlocks) or the
 * longest left is no longer than `longBar`; MAX_LONG_SAMPLED at most in all,
 * the longest, into longLen (their rows into longRow). Leaves each crowded
 * block's longest standing row in blockMax, the longest standing row in
 * sampledMax and the standing rows' squared deviations in sampledSq.
 * Returns how many.
 */
function takeCrowded(
  rowPtr: Int32Array,
  rows: number,
  blocks: number,
  count: number,
  mean: number,
  longBar: number,
): number {
  let longs = 0;
  // Whether MAX_LONG_SAMPLED rows were taken and one more was offered (a row taken may have left for it).
  let dropped = false;
  for (let b = 0; b < blocks; b++) {
    let around = blockAround[b]!;
    if (around < 0) continue;
    const first = blockFirst[b]!;
    // The block's lengths, and where its longest two are: one row taken is the common case, and the second longest is
    // then the block's longest left (a sort of the block cost 150 ns on the branches of random lengths, and a scan
    // for each row taken 20-40 ns more, on adder_dcop_05).
    let i1 = 0;
    let i2 = -1;
    let end = rowPtr[first]! | 0;
    for (let i = 0; i < QUICK_BLOCK_ROWS; i++) {
      const start = end;
      end = rowPtr[first + i + 1]! | 0;
      const n = (end - start) | 0;
      blockLen[i] = n;
      if (n > blockLen[i1]!) {
        i2 = i1;
        i1 = i;
      } else if (i > 0 && (i2 < 0 || n > blockLen[i2]!)) i2 = i;
    }
    let claim = blockP1[b]! - blockP0[b]!;
    let taken = 0;
    let at = i1;
    while (at >= 0 && blockLen[at]! > longBar && claimsTooMuch(claim, around, rows, count)) {
      const n = blockLen[at]!;
      if (longs === MAX_LONG_SAMPLED) dropped = true;
      longs = keepLong(n, first + at, longs);
      blockLen[at] = -1;
      claim -= n;
      around -= n;
      taken++;
      at = taken === 1 ? i2 : longestLeft(blockLen);
    }
    // The block's longest row left, unless a row taken is dropped for a longer one (then read again below).
    blockMax[b] =
      taken === 0
        ? blockLen[i1]!
        : taken === 1
          ? i2 < 0
            ? 0
            : blockLen[i2]!
          : Math.max(0, blockLen[longestLeft(blockLen)]!);
  }
  let max = 0;
  for (let b = 0; b < blocks; b++) {
    if (dropped && blockAround[b]! >= 0) blockMax[b] = longestStanding(rowPtr, blockFirst[b]!, longs);
    if (blockMax[b]! > max) max = blockMax[b]!;
  }
  let sq = sampledSq;
  for (let i = 0; i < longs; i++) sq -= (longLen[i]! - mean) * (longLen[i]! - mean);
  sampledSq = Math.max(0, sq);
  sampledMax = max;
  return longs;
}

/** Where the longest of a block's lengths not taken is (-1 marks a row taken; -1 where every one is). */
function longestLeft(len: Int32Array): number {
  let at = 0;
  for (let i = 1; i < QUICK_BLOCK_ROWS; i++) if (len[i]! > len[at]!) at = i;
  return len[at]! < 0 ? -1 : at;
}

/** Keeps row `row` of length n among the `longs` longest taken so far (descending, MAX_LONG_SAMPLED at most); returns how many are kept. */
function keepLong(n: number, row: number, longs: number): number {
  if (longs === MAX_LONG_SAMPLED && n <= longLen[longs - 1]!) return longs;
  let i = longs < MAX_LONG_SAMPLED ? longs++ : longs - 1;
  while (i > 0 && longLen[i - 1]! < n) {
    longLen[i] = longLen[i - 1]!;
    longRow[i] = longRow[i - 1]!;
    i--;
  }
  longLen[i] = n;
  longRow[i] = row;
  return longs;
}

/** Whether row `row` is one of the `longs` rows takeCrowded took. */
function isTaken(row: number, longs: number): boolean {
  for (let i = 0; i < longs; i++) if (longRow[i] === row) return true;
  return false;
}

/** The longest row of the block from row `first` that takeCrowded left standing. */
function longestStanding(rowPtr: Int32Array, first: number, longs: number): number {
  let longest = 0;
  let end = rowPtr[first]! | 0;
  for (let r = first + 1, last = first + QUICK_BLOCK_ROWS; r <= last; r++) {
    const start = end;
    end = rowPtr[r]! | 0;
    const n = (end - start) | 0;
    if (n > longest && !isTaken(r - 1, longs)) longest = n;
  }
  return longest;
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
  // The longest 1% of the matrix: the long rows first (longest first), then the sampled rows' longest 1% scaled. A
  // crowded block's rows are not always longer than every standing one (a block among empty rows is crowded by rows
  // of 20), so a standing row longer than the next long row counts once, as itself, before it: the longest row seen
  // is then always among the top 1% (with the long rows alone first, a row of 300 was left out of a share of ten
  // rows of 20).
  const topRows = Math.ceil(rows / 100);
  const top = topSampled(rows, blocks, standing);
  let sampledTop = 0;
  for (let i = 0; i < top; i++) sampledTop += best(i);
  let topSum = 0;
  let taken = 0;
  let used = 0;
  let alone = 0;
  while (used < longs && taken < topRows) {
    // The longest long row not yet taken (a few dozen at most: selection, no allocation).
    let at = used;
    for (let i = used + 1; i < longs; i++) if (longLen[i]! > longLen[at]!) at = i;
    const n = longLen[at]!;
    taken++;
    if (alone < top && best(alone) > n) {
      topSum += best(alone);
      sampledTop -= best(alone++);
      continue;
    }
    longLen[at] = longLen[used]!;
    longLen[used++] = n;
    topSum += n;
  }
  if (top > 0 && taken < topRows)
    topSum += (alone < top ? sampledTop / (top - alone) : best(top - 1)) * (topRows - taken);
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
