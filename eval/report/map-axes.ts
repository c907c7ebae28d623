/**
 * The decision map's axes for a compiled program: density and row-length CV
 * over the ranges its guards were built for (outside them the runtime
 * re-plans, so a map over fixed decades shows mostly that). Each cell's
 * input takes the rest of its shape from the nearest profile, with rows,
 * nnz and the longest row kept inside the guards' ranges where the cell's
 * density allows it.
 */
import type { GuardPlan } from '../../runtime/guards/index.js';
import type { SparseFeatures } from '../../runtime/plan/types.js';

export interface MapSpan {
  /** The sparse parameter whose features the map varies. */
  param: string;
  /** Its features in each profile the guards were built from, with the profile's name. */
  profiles: readonly { name: string; features: SparseFeatures }[];
}

export interface MapAxes {
  densities: number[];
  cvs: number[];
  /** The features of the input at each cell. */
  at(density: number, cv: number): SparseFeatures;
  /** The profiles lying in each cell, keyed `i,j`. */
  profilesAt: Map<string, string[]>;
}

const CELLS_X = 16;
const CELLS_Y = 12;

const clamp = (v: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, v));

/** Cell centres over [lo, hi] (never the edges, so rounding keeps a cell inside the range); one cell for a point range. */
function centres(lo: number, hi: number, n: number, log: boolean): number[] {
  if (!(hi > lo)) return [lo];
  return Array.from({ length: n }, (_, i) => {
    const t = (i + 0.5) / n;
    return log ? lo * (hi / lo) ** t : lo + (hi - lo) * t;
  });
}

const densityOf = (f: SparseFeatures): number => (f.rows * f.cols > 0 ? f.nnz / (f.rows * f.cols) : 0);

export function mapAxes(guards: GuardPlan, span: MapSpan): MapAxes {
  if (span.profiles.length === 0) throw new Error('mapAxes: no profile');
  const range = (key: string, vals: number[]): [number, number] =>
    guards.ranges[`${span.param}.${key}`] ?? [Math.min(...vals), Math.max(...vals)];
  const fs = span.profiles.map((p) => p.features);
  const [dLo, dHi] = range('density', fs.map(densityOf));
  const [cLo, cHi] = range(
    'rowLenCv',
    fs.map((f) => f.rowLenCv),
  );
  const densities = centres(Math.max(dLo, 1e-12), dHi, CELLS_X, true);
  const cvs = centres(cLo, cHi, CELLS_Y, false);
  const [rLo, rHi] = range(
    'rows',
    fs.map((f) => f.rows),
  );
  const [nLo, nHi] = range(
    'nnz',
    fs.map((f) => f.nnz),
  );
  const [mLo, mHi] = range(
    'rowLenMax',
    fs.map((f) => f.rowLenMax),
  );
  const dist = (f: SparseFeatures, d: number, cv: number): number =>
    Math.abs(Math.log10(Math.max(densityOf(f), 1e-300)) - Math.log10(d)) + Math.abs(f.rowLenCv - cv);
  const nearest = (d: number, cv: number): SparseFeatures =>
    fs.reduce((a, b) => (dist(b, d, cv) < dist(a, d, cv) ? b : a));
  const at = (d: number, cv: number): SparseFeatures => {
    const p = nearest(d, cv);
    const square = p.rows === p.cols;
    // Rows such that nnz = d * rows * cols falls in the nnz range, within the rows range; the geometric middle of what is left.
    const perRow = (rows: number): number => d * (square ? rows : p.cols);
    const lo = Math.max(rLo, square ? Math.sqrt(nLo / d) : nLo / perRow(1));
    const hi = Math.min(rHi, square ? Math.sqrt(nHi / d) : nHi / perRow(1));
    const rows = Math.max(1, Math.round(lo <= hi ? Math.sqrt(lo * hi) : clamp(p.rows, rLo, rHi)));
    const cols = square ? rows : p.cols;
    const nnz = Math.max(1, Math.round(d * rows * cols));
    const mean = nnz / rows;
    return {
      ...p,
      rows,
      cols,
      nnz,
      rowLenMean: mean,
      rowLenMax: Math.min(cols, Math.max(Math.ceil(mean), Math.round(clamp(mean * (1 + 3 * cv), mLo, mHi)))),
      rowLenCv: cv,
    };
  };
  const cellOf = (vals: readonly number[], v: number, log: boolean): number =>
    vals.reduce(
      (best, x, i) =>
        Math.abs((log ? Math.log10(x) : x) - (log ? Math.log10(v) : v)) <
        Math.abs((log ? Math.log10(vals[best]!) : vals[best]!) - (log ? Math.log10(v) : v))
          ? i
          : best,
      0,
    );
  const profilesAt = new Map<string, string[]>();
  for (const p of span.profiles) {
    const k = `${cellOf(densities, Math.max(densityOf(p.features), 1e-300), true)},${cellOf(cvs, p.features.rowLenCv, false)}`;
    profilesAt.set(k, [...(profilesAt.get(k) ?? []), p.name]);
  }
  return { densities, cvs, at, profilesAt };
}
