/**
 * Coverage programs: hand-written forms the generator (gen/) never draws,
 * each run like a generated program on random tiny, mid and large inputs, and
 * checked on every backend against the reference (backends.test.ts). The
 * forms, numbered as in COVERAGE_PROGRAMS: (1) two different dense widths in
 * one op; (2) loop bodies whose values feed each other (a ping-pong, a swap,
 * a read of a value the body assigns further down, scalar, 2-D and sparse
 * values updated in a loop, `until` on a scalar and on a 2-D value,
 * `repeat 0`, i64 and i32 counts, three loops deep); (3) bool sparse
 * matrices, 2-D, sparse and scalar bool results, == and != of bools, selects
 * of bools, any/all; (4) reductions over several indices, implicit sums of a
 * whole matrix; (5) dense transposes of sparse inputs, results of shape [k]
 * and [k, n], diagonal reads, rank-3 tensors, right sides of dims alone; (6)
 * inf, -inf, -0 and NaN into min, max and relu, NaN through arithmetic and in
 * a `stable` test (f64, no comparison reads them); (7) matrices with rows !=
 * cols under SpMM, SDDMM and transposes, with a hub column, and a mid-sized
 * one with no entries.
 *
 * Values keep the tolerances of backends.test.ts as the checker
 * (gen/checker.ts) keeps generated programs: inputs are multiples of 1/8 in
 * [-2, 2] (gen/cases.ts `value`), i32 some near its limits; every float value
 * a comparison or a stop test reads is exact in f32 and f64 (min-plus steps,
 * halvings, few trips, and min and max clamping what a loop could grow), so
 * the same in any order of a sum; other values stay far below 1e6.
 */
import { interpretKernel } from '../../../interp/interpret.js';
import { seedFor } from '../../../runtime/random.js';
import type { Dim } from '../../../ir/types.js';
import type { Tensor } from '../../../runtime/tensor.js';
import { coo, csc, csr, type Triple } from '../../helpers/interp-run.js';
import { type Case, type Size, sparseShape, sparseTriples, value } from '../gen/cases.js';
import { MAX_EXTENT, type Ty } from '../gen/program.js';
import { FUZZ_SCALE, FUZZ_SEED_OFFSET, pick, Rng } from '../util.js';
import { type Entry, lowered } from './harness.js';

const COVERAGE_FILE = 'test/fuzz/backends/coverage.ts';

export interface Coverage {
  name: string;
  /** The kernel's parameters, results and statements (its source is `kernel <name><body>`). */
  body: string;
  /** Dims drawn as dense widths (1 to 64, as the generator's k); the others as row counts. Default: the dims of no sparse parameter. */
  widths?: string[];
  /** Extents, and scalar parameters, fixed for a size (others drawn). */
  dims?: Partial<Record<Size, Record<string, number>>>;
  /** Special values that replace some of a parameter's elements (a share `specialRate`, default a quarter). */
  special?: Record<string, number[]>;
  specialRate?: number;
  /** Sparse parameters get a full column on mid and large inputs (a hub, the long column of a csc walk). */
  hubColumn?: boolean;
  /** A sparse parameter that has no entries in an extra mid-sized input. */
  emptyMid?: string;
  /**
   * Where it runs at the default scale, besides wasm (which runs every one): on every backend ('all'), on all but the
   * HLS C simulation ('no-hls'), or on wasm alone (absent). From DYPE_FUZZ_SCALE=2 up every program runs everywhere.
   * The compilers' time is the cost (g++ takes about 0.15 s an op of native C, 0.3 s of CUDA, 0.7 s of HLS).
   */
  byDefault?: 'all' | 'no-hls';
}

const WIDTHS = [1, 2, 3, 4, 5, 7, 8, 16, 33, 36, MAX_EXTENT.k];
/** The special values of blind spot 6. */
const SPECIAL = [Infinity, -Infinity, -0, NaN];
/** Rows of large inputs: fewer than the generator's (at most 600), so that the emulations run them quickly. */
const LARGE_ROWS = 300;

/** One input of a coverage program: every dim bound once, whichever parameters share it. */
function coverageCase(p: Coverage, entry: Entry, rng: Rng, size: Size, largeRows: number, emptied?: string): Case {
  const params = entry.kernel.params;
  const sparseDims = new Set(
    params.filter((v) => v.type.format !== 'dense').flatMap((v) => v.type.shape.map((d) => String(dimName(d)))),
  );
  const isWidth = (d: string): boolean => (p.widths ? p.widths.includes(d) : !sparseDims.has(d));
  const fixed = p.dims?.[size] ?? {};
  const dims = new Map<string, number>();
  const extent = (d: string): number =>
    fixed[d] ??
    (isWidth(d)
      ? size === 'tiny'
        ? 1 + rng.int(4)
        : pick(rng, WIDTHS)
      : size === 'large'
        ? 150 + rng.int(largeRows - 149)
        : size === 'mid'
          ? 6 + rng.int(35)
          : 1 + rng.int(5));
  for (const v of params)
    for (const d of v.type.shape) {
      const name = dimName(d);
      if (typeof name === 'string' && !dims.has(name)) dims.set(name, extent(name));
    }
  const elem = (name: string, ty: Ty): number => {
    const s = p.special?.[name];
    return s && rng.next() < (p.specialRate ?? 0.25) ? pick(rng, s) : value(rng, ty);
  };
  const tensors = new Map<string, Tensor>();
  const scalars = new Map<string, number>();
  const shapes: string[] = [];
  const values: string[] = [];
  for (const v of params) {
    const ty = v.type.dtype as Ty;
    if (v.type.shape.length === 0) {
      const x = fixed[v.name] ?? elem(v.name, ty);
      scalars.set(v.name, x);
      shapes.push(`${v.name} = ${x}`);
      continue;
    }
    const shape = v.type.shape.map((d) => {
      const name = dimName(d);
      return typeof name === 'number' ? name : dims.get(name)!;
    });
    if (v.type.format === 'dense') {
      const data = Float64Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => elem(v.name, ty));
      tensors.set(v.name, { format: 'dense', shape, data });
      shapes.push(`${v.name}: dense [${shape.join(', ')}]`);
      values.push(`${v.name}=${JSON.stringify([...data].map(show))}`);
      continue;
    }
    const [rows, cols] = shape as [number, number];
    let ts: Triple[] = [];
    let full = -1;
    let hub = -1;
    if (v.name !== emptied) {
      ({ ts, full, hub } = sparseTriples(rng, rows, cols, ty, size, p.hubColumn));
      if (p.special?.[v.name]) ts = ts.map(([r, c]) => [r, c, elem(v.name, ty)]);
    }
    const f = v.type.format;
    tensors.set(v.name, f === 'csr' ? csr(rows, cols, ts) : f === 'csc' ? csc(rows, cols, ts) : coo(rows, cols, ts));
    shapes.push(`${v.name}: ${f} ${sparseShape(rows, cols, ts, full)}${hub >= 0 ? `, column ${hub} full` : ''}`);
    values.push(`${v.name}=${JSON.stringify(ts.map(([r, c, x]) => [r, c, show(x)]))}`);
  }
  const text = values.join(' ');
  return {
    label: emptied ? `${size} (${emptied} empty)` : size,
    tensors,
    scalars,
    shapes: shapes.join('; '),
    values: text.length <= 4000 ? text : `(${text.length} characters: rebuild them with the seed)`,
  };
}

const dimName = (d: Dim): string | number => (d.kind === 'sym' ? d.name : d.value);
/** JSON has no inf, -inf, NaN or -0. */
const show = (x: number): number | string => (Number.isFinite(x) && !Object.is(x, -0) ? x : String(x));

/** A coverage program as an entry of the fuzz runs, with its inputs (seeded by its name) and the reference's results. */
export function coverageEntry(p: Coverage, seed = FUZZ_SEED_OFFSET, largeRows = LARGE_ROWS): Entry {
  const src = `kernel ${p.name}${p.body}\n`;
  const kernel = lowered(src);
  const hand = `${COVERAGE_FILE}: DYPE_FUZZ_SEED=${seed} DYPE_FUZZ_SCALE=${FUZZ_SCALE} DYPE_FUZZ_ONLY=${p.name}`;
  const e: Entry = { name: p.name, src, kernel, cases: [], hand };
  const rng = new Rng(seedFor(seed, p.name));
  const inputs: [Size, string | undefined][] = [
    ['tiny', undefined],
    ['mid', undefined],
    ['large', undefined],
  ];
  if (p.emptyMid) inputs.push(['mid', p.emptyMid]);
  for (const [size, emptied] of inputs) {
    const c = coverageCase(p, e, rng, size, largeRows, emptied);
    e.cases.push({ c, want: interpretKernel(kernel, c).outputs });
  }
  return e;
}

/** The coverage programs, by the blind spot of the generator each covers. */
export const COVERAGE_PROGRAMS: Coverage[] = [
  // 1. Two different dense widths, f != h at every size, with 7. rows != cols, a hub column and a mid-sized matrix
  // with no entries: a GCN layer (X W, a dense GEMM of three dims, then A T), an SDDMM over the other width, a
  // transposed SpMM.
  {
    name: 'cov1a',
    body: `(A: csr<f32>[m, n], X: dense<f32>[n, f], W: dense<f32>[f, h], Q: dense<f32>[m, f]) -> (H: dense<f32>[m, h], S: csr<f32>[m, n], Z: dense<f32>[n, f]) {
  T[j, c] = X[j, e] * W[e, c];
  H[i, c] = relu(A[i, j] * T[j, c]);
  S[i, j] = A[i, j] * sum(p: Q[i, p] * X[j, p]);
  Z[j, e] = A[i, j] * Q[i, e];
}`,
    dims: {
      tiny: { m: 2, n: 5, f: 3, h: 2 },
      mid: { m: 31, n: 9, f: 3, h: 8 },
      large: { m: 170, n: 260, f: 36, h: 4 },
    },
    hubColumn: true,
    emptyMid: 'A',
    byDefault: 'all',
  },
  // An SDDMM over one width and an SpMM over another (f64), a transposed SpMM from csc (i32).
  {
    name: 'cov1b',
    body: `(A: csr<f64>[m, n], X: dense<f64>[m, f], Y: dense<f64>[n, f], W: dense<f64>[f, h]) -> (S: csr<f64>[m, n], Z: dense<f64>[m, h]) {
  S[i, j] = A[i, j] * sum(p: X[i, p] * Y[j, p]);
  Z[i, c] = S[i, j] * sum(e: Y[j, e] * W[e, c]);
}`,
    dims: { tiny: { f: 1, h: 3 }, mid: { f: 5, h: 2 }, large: { f: 4, h: 33 } },
  },
  {
    name: 'cov1c',
    body: `(A: csc<i32>[m, n], X: dense<i32>[m, f], W: dense<i32>[f, h]) -> (Z: dense<i32>[n, h]) {
  Z[j, c] = A[i, j] * sum(e: X[i, e] * W[e, c]);
}`,
    dims: { tiny: { f: 2, h: 4 }, mid: { f: 7, h: 16 }, large: { f: 16, h: 5 } },
  },
  // 2. Loop bodies whose values feed each other: a ping-pong (a reads the b the body assigns below it, in the trip
  // before; a result first assigned in a loop) in a loop in an `until` on a scalar; min-plus and halving keep the
  // values exact.
  {
    name: 'cov2a',
    body: `(A: csr<f32>[n, n], x: dense<f32>[n]) -> (a: dense<f32>[n], b: dense<f32>[n], s: f32) {
  b[i] = x[i];
  s = 0;
  repeat 4 until s stable {
    repeat 2 {
      a[i] = min(8, max(-8, min(j: A[i, j] + b[j])));
      b[i] = (a[i] + x[i]) / 2;
    }
    s = sum(i: a[i]);
  }
}`,
    byDefault: 'no-hls',
  },
  // A swap through a temporary (f64).
  {
    name: 'cov2f',
    body: `(A: csr<f64>[n, n], x: dense<f64>[n], y: dense<f64>[n]) -> (u: dense<f64>[n], v: dense<f64>[n]) {
  u[i] = x[i];
  v[i] = y[i];
  repeat 3 {
    t[i] = u[i];
    u[i] = max(-4, min(4, v[i] + A[i, j] * t[j] / 8));
    v[i] = t[i];
  }
}`,
  },
  // `until` on a scalar around two loops (three deep), repeat 0 (f64: 12 trips keep the clamped values exact).
  {
    name: 'cov2b',
    body: `(A: csr<f64>[n, n], x: dense<f64>[n]) -> (r: dense<f64>[n], s: f64) {
  r[i] = x[i];
  s = 0;
  repeat 3 until s stable {
    repeat 2 {
      repeat 2 {
        r[i] = min(2, max(-2, A[i, j] * r[j]));
      }
    }
    s = max(i: abs(r[i]));
  }
  repeat 0 {
    s = 1;
  }
}`,
  },
  // A sparse value updated in a loop (rows != cols), and a row value read from it.
  {
    name: 'cov2c',
    body: `(A: csr<f32>[m, n], x: dense<f32>[n]) -> (S: csr<f32>[m, n], y: dense<f32>[m]) {
  S[i, j] = A[i, j];
  y[i] = 0;
  repeat 2 {
    S[i, j] = 0.5 * S[i, j] + A[i, j] * x[j];
    y[i] = y[i] + S[i, j] * x[j];
  }
}`,
  },
  // `until` on a 2-D value (multi-source shortest paths) around a nested loop, E reading the D assigned below it,
  // a scalar counting the trips.
  {
    name: 'cov2d',
    body: `(A: csr<f32>[n, n], D0: dense<f32>[n, k]) -> (D: dense<f32>[n, k], E: dense<f32>[n, k], z: f32) {
  D[i, c] = D0[i, c];
  E[i, c] = D0[i, c];
  z = 0;
  repeat 6 until D stable {
    E[i, c] = min(D[i, c], E[i, c] + 1);
    repeat 2 {
      D[i, c] = min(D[i, c], min(j: abs(A[i, j]) + D[j, c]));
    }
    z = z + 1;
  }
}`,
  },
  // Counts given as an i64 and an i32 scalar, 0 among them (the CUDA target refuses a count that is not a dim,
  // DY6103).
  {
    name: 'cov2e',
    body: `(A: csc<f64>[n, n], x: dense<f64>[n], q: i64, p: i32) -> (r: dense<f64>[n], s: f64) {
  r[i] = x[i];
  s = 0;
  repeat p {
    repeat q until s stable {
      r[j] = min(2, max(-2, 0.5 * A[i, j] * r[i]));
      s = sum(i: r[i]);
    }
  }
}`,
    dims: { tiny: { q: 0, p: 2 }, mid: { q: 3, p: 2 }, large: { q: 2, p: 1 } },
  },
  // 3. bool: a csr<bool>, 2-D, sparse and scalar bool results, == and != of bools.
  {
    name: 'cov3a',
    body: `(A: csr<bool>[n, n], f: dense<bool>[n], v: dense<bool>[n]) -> (g: dense<bool>[n], done: bool, M: dense<bool>[n, n], S: csr<bool>[n, n]) {
  g[i] = any(j: A[i, j] && f[j]) && !v[i];
  done = all(i: g[i] == v[i]);
  M[i, j] = A[i, j];
  S[i, j] = A[i, j] != f[j];
}`,
    byDefault: 'no-hls',
  },
  // Selects with bool branches, != of bools, any and all of comparisons.
  {
    name: 'cov3b',
    body: `(f: dense<bool>[n], g: dense<bool>[n], x: dense<f32>[n], A: csr<f32>[n, n], B: csc<f32>[n, n]) -> (b: dense<bool>[n]) {
  b[i] = ((x[i] > 0) ? f[i] : g[i]) != any(j: A[i, j] > 0 && all(p: B[p, j] < 1));
}`,
  },
  // A breadth-first search over a csc<bool> from the vertices where x > 1.5: bool values updated in a loop, a bool
  // scalar result.
  {
    name: 'cov3c',
    body: `(A: csc<bool>[n, n], x: dense<f32>[n]) -> (seen: dense<bool>[n], more: bool) {
  seen[i] = x[i] > 1.5;
  f[i] = seen[i];
  repeat 3 {
    f[j] = any(i: A[i, j] && f[i]) && !seen[j];
    seen[i] = seen[i] || f[i];
  }
  more = any(i: f[i]);
}`,
  },
  // 4. Reductions over several indices, implicit sums of a whole matrix.
  {
    name: 'cov4a',
    body: `(A: coo<f64>[m, n], Q: dense<f64>[m, d], x: dense<f64>[n]) -> (s: f64, t: f64, u: f64, v: f64) {
  s = min(i, j: A[i, j]);
  t = Q[i, c] * Q[i, c];
  u = A[i, j];
  v = max(i, j: A[i, j] * x[j]);
}`,
    emptyMid: 'A',
  },
  {
    name: 'cov4b',
    body: `(A: csc<i32>[m, n], X: dense<i32>[m, d]) -> (s: i32, w: i32) {
  s = max(i, j: A[i, j]);
  w = min(c, i: X[i, c]);
}`,
  },
  {
    name: 'cov4c',
    body: `(A: csr<f32>[m, n], x: dense<f32>[n], y: dense<f32>[m]) -> (v: f32, u: f32, w: f32) {
  v = sum(i, j: A[i, j] * x[j]);
  u = A[i, j];
  w = max(i, j: A[i, j] + y[i]);
}`,
    byDefault: 'no-hls',
  },
  // 5. Layouts: a dense transpose of a sparse input, results of shape [k] and [k, n] (a reduction over the leading
  // dim), a diagonal read.
  {
    name: 'cov5a',
    body: `(A: csr<f32>[m, n], Q: dense<f32>[m, d], w: dense<f32>[m], P: dense<f32>[n, n]) -> (D: dense<f32>[n, m], y: dense<f32>[d], T: dense<f32>[d, n], g: dense<f32>[n]) {
  D[j, i] = A[i, j];
  y[c] = Q[i, c] * w[i];
  T[c, j] = A[i, j] * Q[i, c];
  g[i] = P[i, i];
}`,
    widths: ['d'],
    byDefault: 'no-hls',
  },
  // Rank-3 tensors, a right side of a dim alone.
  {
    name: 'cov5b',
    body: `(X: dense<f32>[b, n, 4], A: csr<f32>[n, n]) -> (Y: dense<f32>[b, n, 4], r: f32) {
  Y[p, i, c] = A[i, j] * X[p, j, c];
  r = n / 3;
}`,
  },
  {
    name: 'cov5c',
    body: `(A: coo<f64>[m, n], Q: dense<f64>[m, d], P: dense<f64>[m, m]) -> (D: dense<f64>[n, m], T: dense<f64>[d, n], y: dense<f64>[d], r: f64) {
  D[j, i] = A[i, j];
  T[c, j] = A[i, j] * Q[i, c];
  y[c] = max(i: Q[i, c] * P[i, i]);
  r = m / 3;
}`,
    widths: ['d'],
  },
  {
    name: 'cov5d',
    body: `(X: dense<i32>[b, n, d], A: csc<i32>[n, n], V: dense<i32>[b, n]) -> (Y: dense<i32>[b, n, d], Z: dense<i32>[n, b]) {
  Y[p, i, c] = A[i, j] * X[p, j, c];
  Z[j, p] = A[i, j] * V[p, i];
}`,
    widths: ['b', 'd'],
  },
  // 6. inf, -inf, -0 and NaN into min, max and relu, which keep NaN (docs/CUDA.md, *Semantics*), and NaN through
  // arithmetic (f64; no comparison reads them).
  {
    name: 'cov6a',
    body: `(A: csr<f64>[m, n], x: dense<f64>[n], w: dense<f64>[m], v: dense<f64>[m]) -> (a: dense<f64>[m], c: dense<f64>[m], h: dense<f64>[n]) {
  a[i] = min(j: A[i, j] + x[j]) + v[i];
  c[i] = relu(w[i]) + min(w[i], 0) + max(0, w[i]);
  h[j] = max(i: relu(A[i, j]) * 2 + w[i]);
}`,
    special: { A: [-0], x: SPECIAL, w: SPECIAL, v: [NaN] },
    specialRate: 0.15,
    byDefault: 'no-hls',
  },
  // `until ... stable` where an infinity or a NaN stays (unchanged: docs/LANGUAGE-NOTES.md), on a vector and on a 2-D
  // value, a scalar counting the trips.
  {
    name: 'cov6b',
    body: `(A: csr<f64>[n, n], d0: dense<f64>[n], D0: dense<f64>[n, k]) -> (d: dense<f64>[n], D: dense<f64>[n, k], z: i32) {
  d[i] = d0[i];
  z = 0;
  repeat 6 until d stable {
    d[i] = min(d[i], min(j: abs(A[i, j]) + d[j]));
    z = z + 1;
  }
  D[i, c] = D0[i, c];
  repeat 4 until D stable {
    D[i, c] = max(D[i, c], max(j: A[i, j] + D[j, c]));
  }
}`,
    special: { d0: SPECIAL, D0: SPECIAL },
    specialRate: 0.05,
  },
  // 7. rows != cols under SpMM, SDDMM and transposes, with a hub column and a mid-sized input with no entries (and
  // cov1a).
  {
    name: 'cov7a',
    body: `(A: csr<f32>[m, n], B: dense<f32>[n, k], X: dense<f32>[m, k]) -> (Y: dense<f32>[m, k], S: csr<f32>[m, n], Z: dense<f32>[n, k], z: dense<f32>[n]) {
  Y[i, c] = A[i, j] * B[j, c];
  S[i, j] = A[i, j] * sum(p: X[i, p] * B[j, p]);
  Z[j, c] = A[i, j] * X[i, c];
  z[j] = max(i: A[i, j]);
}`,
    dims: { tiny: { m: 2, n: 5 }, mid: { m: 31, n: 9 }, large: { m: 170, n: 260 } },
    hubColumn: true,
    emptyMid: 'A',
  },
  {
    name: 'cov7b',
    body: `(A: csc<f64>[m, n], x: dense<f64>[m], B: dense<f64>[n, k], X: dense<f64>[m, k]) -> (y: dense<f64>[n], Y: dense<f64>[m, k], S: csc<f64>[m, n]) {
  y[j] = A[i, j] * x[i];
  Y[i, c] = A[i, j] * B[j, c];
  S[i, j] = A[i, j] * sum(p: X[i, p] * B[j, p]);
}`,
    dims: { tiny: { m: 4, n: 1 }, mid: { m: 12, n: 37 }, large: { m: 280, n: 150 } },
    hubColumn: true,
    emptyMid: 'A',
  },
  {
    name: 'cov7c',
    body: `(A: coo<i32>[m, n], B: dense<i32>[n, k], X: dense<i32>[m, k]) -> (Y: dense<i32>[m, k], Z: dense<i32>[n, k]) {
  Y[i, c] = A[i, j] * B[j, c];
  Z[j, c] = A[i, j] * X[i, c];
}`,
    dims: { tiny: { m: 5, n: 3 }, mid: { m: 20, n: 40 }, large: { m: 160, n: 290 } },
    hubColumn: true,
    emptyMid: 'A',
  },
];

/** The coverage programs as entries, with their inputs. */
export const coverageEntries = (): Entry[] => COVERAGE_PROGRAMS.map((p) => coverageEntry(p));

/** The coverage entries that ride along on `backend` at this scale (`byDefault`). */
export function coverageOn(backend: 'native' | 'cuda' | 'hls', entries: readonly Entry[], scale: number): Entry[] {
  const tier = (e: Entry): Coverage['byDefault'] => COVERAGE_PROGRAMS.find((p) => p.name === e.name)?.byDefault;
  return entries.filter((e) => scale >= 2 || tier(e) === 'all' || (backend !== 'hls' && tier(e) === 'no-hls'));
}
