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
 * rows near each other) 0.99-1.10x, 32-256 MB of scattered rows 1.1-1.47x.
 * So from twice the L2.
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

/** Whether an op runs its spread form: the bytes of its gathered buffers (`bytesAt` of a position) reach `from`. */
export function spreadPays(gathered: readonly number[], bytesAt: (q: number) => number, from: number): boolean {
  let bytes = 0;
  for (const q of gathered) bytes += bytesAt(q);
  return bytes >= from;
}
