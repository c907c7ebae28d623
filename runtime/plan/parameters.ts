/**
 * Where each constant of the cost models comes from. Every numeric (and
 * boolean) leaf of a constants object (`MODEL`, the FPGA designs, the
 * simulation's `SIM`) is covered by an entry of a `ParameterTable` kept next
 * to it: its unit, what kind of figure it is, the source, what it was
 * measured on, and the range a sensitivity analysis moves it over.
 * docs/COST-MODEL.md's table "Every model parameter" is generated from these
 * tables and the system presets' `sources` (eval/parameters.ts); a test
 * (test/eval/parameters.test.ts) fails when a leaf has no entry or the page
 * is out of date.
 */

/**
 * - datasheet: a vendor's published figure;
 * - measured: a published measurement (the entry says what it was measured on);
 * - published fit: a fit to published measurements;
 * - computed: arithmetic on published figures;
 * - architecture: a fact of the hardware's design (warp width, sector size);
 * - design: how dype's own kernels or runtime are written (the template's parameters);
 * - experiment: a choice of the experiment (the stream length);
 * - configuration: a choice of how the device is used (one worker per core);
 * - measured here: measured on the development machine;
 * - estimate: no measured source; a round figure with its reasoning.
 */
export type ParameterKind =
  | 'datasheet'
  | 'measured'
  | 'published fit'
  | 'computed'
  | 'architecture'
  | 'design'
  | 'experiment'
  | 'configuration'
  | 'measured here'
  | 'estimate';

export interface ParameterRange {
  low: number;
  high: number;
  /** Where the ends come from (the measurements' spread, or a stated factor). */
  basis: string;
}

export interface ParameterSource {
  unit: string;
  kind: ParameterKind;
  source: string;
  /** The hardware (or design, or nothing) the figure was measured on. */
  measuredOn: string;
  /**
   * The range `dype eval --sensitivity` moves the value over: the measured
   * spread where the sources give one. An estimate without one moves by
   * ESTIMATE_FACTOR, capped at `max`.
   */
  range?: ParameterRange;
  /** The largest value the quantity can take (a share of peak: 1). */
  max?: number;
  /** Why the evaluation cannot be sensitive to it (read only by code the suite does not run). */
  notInEval?: string;
}

export type ParameterTable = Readonly<Record<string, ParameterSource>>;

/** An estimate without a stated range moves to x0.5 and x2 of its value. */
export const ESTIMATE_FACTOR = { low: 0.5, high: 2 } as const;

export type Leaf = number | boolean;

/** Every number and boolean under `obj`, with its dotted path from `prefix`. */
export function leaves(obj: unknown, prefix: string): { path: string; value: Leaf }[] {
  const out: { path: string; value: Leaf }[] = [];
  const walk = (v: unknown, p: string): void => {
    if (typeof v === 'number' || typeof v === 'boolean') out.push({ path: p, value: v });
    else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, `${p}.${k}`);
  };
  walk(obj, prefix);
  return out;
}

/** Whether table key `key` covers `path`: equal, or a prefix at a dot; `*` matches one segment. */
export function covers(key: string, path: string): boolean {
  const k = key.split('.');
  const p = path.split('.');
  if (k.length > p.length) return false;
  return k.every((s, i) => s === '*' || s === p[i]);
}

/** The most specific entry covering `path` (most segments, then fewest wildcards). */
export function entryFor(table: ParameterTable, path: string): { key: string; entry: ParameterSource } | undefined {
  let best: { key: string; entry: ParameterSource } | undefined;
  const rank = (k: string): number => k.split('.').length * 100 - k.split('.').filter((s) => s === '*').length;
  for (const [key, entry] of Object.entries(table))
    if (covers(key, path) && (!best || rank(key) > rank(best.key))) best = { key, entry };
  return best;
}

/** The leaf at a dotted path below `root` (the path's first segment names the root). */
export function getLeaf(root: object, path: string): Leaf {
  let v: unknown = root;
  for (const s of path.split('.').slice(1)) v = (v as Record<string, unknown>)[s];
  if (typeof v !== 'number' && typeof v !== 'boolean') throw new Error(`${path} is not a constant`);
  return v;
}

/**
 * Sets the number at a dotted path below `root` and returns the old value.
 * For `dype eval --sensitivity` only, which restores every value it sets;
 * the constants are otherwise read-only.
 */
export function setLeaf(root: object, path: string, value: number): number {
  const parts = path.split('.').slice(1);
  let v = root as Record<string, unknown>;
  for (const s of parts.slice(0, -1)) v = v[s] as Record<string, unknown>;
  const last = parts[parts.length - 1]!;
  const old = v[last];
  if (typeof old !== 'number') throw new Error(`${path} is not a number`);
  v[last] = value;
  return old;
}

/** The low and high ends of an entry's range for a value (undefined: not moved). */
export function rangeOf(e: ParameterSource, value: number): ParameterRange | undefined {
  if (e.range) return e.range;
  if (e.kind !== 'estimate') return undefined;
  const high = value * ESTIMATE_FACTOR.high;
  return {
    low: value * ESTIMATE_FACTOR.low,
    high: e.max !== undefined ? Math.min(e.max, high) : high,
    basis:
      e.max !== undefined && high > e.max
        ? `estimate: x${ESTIMATE_FACTOR.low} / x${ESTIMATE_FACTOR.high}, at most ${e.max}`
        : `estimate: x${ESTIMATE_FACTOR.low} / x${ESTIMATE_FACTOR.high}`,
  };
}
