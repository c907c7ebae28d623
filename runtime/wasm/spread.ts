/**
 * When an op runs in spread walks (WasmOp.spread, codegen/wasm/simd.ts
 * `SPREAD`): the rows it gathers through loaded indices come from beyond
 * the core's L2, so the first walk of a row's entries does best to start
 * every cache line of each row at once. Where the rows sit in L2 the same
 * walk pulls all their lines from L2 in one go and waits on L2's bandwidth
 * instead of overlapping it with the arithmetic of the later walks.
 *
 * Measured (bench/wasm-groups.ts, docs/PERFORMANCE.md *Spread walks*) on a
 * core with 1 MiB of L2: gathered operands of 0.6-1.3 MB ran 0.87-1.01x of
 * the plain walks, 1.7 MB 1.00x, 3.4 MB 1.07-1.44x, 15-29 MB (a road graph,
 * rows near each other) 0.94-1.10x, 32-256 MB of scattered rows 1.1-1.47x.
 * So from twice the L2, and only where most gathered rows lie far from the
 * rows walked just before (`farShare`): 128 MB of B read in a band of 61
 * rows ran 0.95x spread.
 */
import { readFileSync, readdirSync } from 'node:fs';
import type { WasmOp } from './manifest.js';

/** Bytes of a CPU cache size as sysfs writes it ("1024K", "32M"), or undefined. */
export function parseCacheSize(s: string): number | undefined {
  const m = /^\s*(\d+)\s*([KMG]?)\s*$/i.exec(s);
  if (!m) return undefined;
  const unit = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[m[2]!.toUpperCase() as '' | 'K' | 'M' | 'G'];
  return Number(m[1]) * unit;
}

/** The L2 size of CPU 0 from Linux sysfs, or undefined where the host does not say. */
export function hostL2Bytes(dir = '/sys/devices/system/cpu/cpu0/cache'): number | undefined {
  let entries: string[];
  try {
    entries = readdirSync(dir).filter((e) => /^index\d+$/.test(e));
  } catch {
    return undefined;
  }
  for (const e of entries) {
    try {
      const level = readFileSync(`${dir}/${e}/level`, 'utf8').trim();
      const type = readFileSync(`${dir}/${e}/type`, 'utf8').trim();
      if (level === '2' && (type === 'Unified' || type === 'Data'))
        return parseCacheSize(readFileSync(`${dir}/${e}/size`, 'utf8'));
    } catch {
      // an entry without these files says nothing
    }
  }
  return undefined;
}

let host: number | undefined | null = null;

/**
 * Gathered bytes from which ops run in spread walks on this host: twice its L2, or Infinity (never)
 * where the L2 size is unknown, since the plain walks are the ones that never lose much.
 */
export function hostSpreadFromBytes(): number {
  if (host === null) host = hostL2Bytes();
  return host === undefined ? Infinity : 2 * host;
}

/** The threshold an executor runs with: `given`, else `fallback`; a negative or NaN figure is refused. */
export function spreadThreshold(given: number | undefined, fallback: number, who: string): number {
  const from = given ?? fallback;
  if (!(from >= 0)) throw new Error(`${who}: spreadFromBytes must be at least 0, got ${from}`);
  return from;
}

/** Positions in `o.buffers` of the buffers its spread form gathers (none without one). */
export function gatheredBuffers(o: WasmOp, who: string): number[] {
  return (o.spread?.gathered ?? []).map((name) => {
    const q = o.buffers.findIndex((b) => b.name === name);
    if (q < 0) throw new Error(`${who}: op ${o.op} gathers '${name}', which it has no buffer of`);
    return q;
  });
}

/**
 * The rows an op gathers, as its row loop walks them: row r's entries sit at positions [ptr[r], ptr[r + 1]),
 * the entry at position q reads row `at(q)` of the gathered operands, which hold `gatheredRows` rows.
 */
export interface GatherPattern {
  readonly ptr: ArrayLike<number>;
  readonly at: (q: number) => number;
  readonly gatheredRows: number;
}

/** Rows sampled, evenly spaced, and entries read of each, for `farShare`: a few thousand reads at most. */
export const FAR_SAMPLE_ROWS = 128;
export const FAR_ROW_ENTRIES = 32;
/** The share of far entries from which spread walks pay: most of a row's walk then waits on memory. */
export const FAR_SHARE = 0.5;

/**
 * Of a sample of entries, the share whose gathered row lies `window` rows or more from the row's own
 * position (row r of R sits at r x gatheredRows / R, the diagonal of a rectangular pattern). Rows within the
 * window of the rows walked just before were read moments ago and sit in the caches; the rest come from
 * memory. An empty sample gives 1: nothing in it says the rows are near.
 */
export function farShare(g: GatherPattern, window: number): number {
  const rows = g.ptr.length - 1;
  if (rows <= 0) return 1;
  const count = Math.min(rows, FAR_SAMPLE_ROWS);
  const scale = g.gatheredRows / rows;
  let seen = 0;
  let far = 0;
  for (let k = 0; k < count; k++) {
    const r = Math.floor(((k + 0.5) * rows) / count);
    const start = g.ptr[r]!;
    const end = Math.max(start, Math.min(g.ptr[r + 1]!, start + FAR_ROW_ENTRIES));
    const here = r * scale;
    // Not nearer than the window: a row index that is no number (pointers past the indices) counts as far.
    for (let q = start; q < end; q++) if (!(Math.abs(g.at(q) - here) < window)) far++;
    seen += end - start;
  }
  return seen === 0 ? 1 : far / seen;
}

/**
 * Whether an op runs its spread form: the bytes of its gathered buffers (`bytesAt` of a position) reach
 * `from` (twice the L2 by default), and, where the op's pattern is known (`pattern`, asked only then), at least FAR_SHARE of its entries
 * gather a row more than a quarter of `from` (half the L2) in bytes of gathered rows from the row's own
 * position. A banded matrix's rows of B were read by the rows just before and the hardware prefetcher covers
 * the sweep: spread walks lost 5% there (docs/PERFORMANCE.md, *Spread walks*).
 */
export function spreadPays(
  gathered: readonly number[],
  bytesAt: (q: number) => number,
  from: number,
  pattern?: () => GatherPattern | undefined,
): boolean {
  let bytes = 0;
  for (const q of gathered) bytes += bytesAt(q);
  if (bytes < from) return false;
  const g = bytes > 0 ? pattern?.() : undefined;
  if (!g || !(g.gatheredRows > 0) || !Number.isFinite(g.gatheredRows)) return true;
  const window = from / 4 / (bytes / g.gatheredRows);
  return farShare(g, window) >= FAR_SHARE;
}
