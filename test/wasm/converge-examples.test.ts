/**
 * The convergence-loop examples reach the answers of independent solvers on
 * their demo graphs. SSSP (examples/sssp.dy, `until d stable`) on
 * luxembourg_osm from vertex 0 through the wasm backend equals
 * scipy.sparse.csgraph.shortest_path (Dijkstra) on the graph as the kernel
 * reads it (d[i] takes A[i, j] + d[j]: scipy is given A transposed); where
 * python3 with scipy is missing, a Dijkstra written here stands in, and the
 * test's name says so. PageRank (examples/pagerank.dy, `until r within 1e-6`)
 * on cage8 equals power iteration in float64 with the same update and the
 * same stop test (L1 norm of the change at most 1e-6): the reference
 * interpreter exactly in trips and to 1e-12 in values, the f32 wasm backend
 * to 1e-6 in L1. The reference interpreter runs SSSP only on a small graph
 * (Erdos971); 1,035 trips over 239k entries are the wasm backend's job.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { interpretKernel } from '../../interp/interpret.js';
import { toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import type { CsrMatrix, DenseTensor } from '../../runtime/tensor.js';
import { compileWasm, loopKernel, toMaps } from './compare.js';

const MATRIX_DIR = fileURLToPath(new URL('../../../shared/data/matrices/', import.meta.url));
const EXAMPLES_DIR = fileURLToPath(new URL('../../examples/', import.meta.url));
const HAVE_DATA = existsSync(MATRIX_DIR);
const SCIPY = spawnSync('python3', ['-c', 'import scipy.sparse.csgraph, scipy.io'], { encoding: 'utf8' }).status === 0;

const example = (name: string): string => readFileSync(join(EXAMPLES_DIR, name), 'utf8');

/** scipy's Dijkstra from `source` over the transpose of the Matrix Market file (edge j -> i weighs A[i, j]). */
function scipyDistances(path: string, source: number): Float64Array {
  const py = [
    'import sys, scipy.io, scipy.sparse.csgraph as g',
    'A = scipy.io.mmread(sys.argv[1]).tocsr()',
    'A.data = abs(A.data)',
    "d = g.shortest_path(A.T.tocsr(), method='D', directed=True, indices=int(sys.argv[2]))",
    "sys.stdout.write(' '.join(repr(float(x)) for x in d))",
  ].join('\n');
  const r = spawnSync('python3', ['-c', py, path, String(source)], { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`scipy failed: ${r.stderr}`);
  return Float64Array.from(r.stdout.split(' '), (s) => (s === 'inf' ? Infinity : Number(s)));
}

/** Dijkstra with a binary heap over edges j -> i of weight |A[i, j]| (CSR of A read by columns). */
function dijkstra(A: CsrMatrix, source: number): Float64Array {
  const n = A.rows;
  const out: number[][] = Array.from({ length: n }, () => []);
  for (let i = 0; i < n; i++)
    for (let k = A.rowPtr[i]!; k < A.rowPtr[i + 1]!; k++) out[A.colIdx[k]!]!.push(i, Math.abs(A.values[k]!));
  const dist = new Float64Array(n).fill(Infinity);
  const heap: [number, number][] = [[0, source]];
  dist[source] = 0;
  const up = (h: [number, number][], c: number): void => {
    while (c > 0) {
      const p = (c - 1) >> 1;
      if (h[p]![0] <= h[c]![0]) break;
      [h[p], h[c]] = [h[c]!, h[p]!];
      c = p;
    }
  };
  const pop = (h: [number, number][]): [number, number] => {
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      for (let c = 0; ;) {
        const l = 2 * c + 1;
        const m = l + 1 < h.length && h[l + 1]![0] < h[l]![0] ? l + 1 : l;
        if (l >= h.length || h[c]![0] <= h[m]![0]) break;
        [h[c], h[m]] = [h[m]!, h[c]!];
        c = m;
      }
    }
    return top;
  };
  while (heap.length > 0) {
    const [d, u] = pop(heap);
    if (d > dist[u]!) continue;
    const e = out[u]!;
    for (let q = 0; q < e.length; q += 2) {
      const v = e[q]!;
      const nd = d + e[q + 1]!;
      if (nd < dist[v]!) {
        dist[v] = nd;
        heap.push([nd, v]);
        up(heap, heap.length - 1);
      }
    }
  }
  return dist;
}

const referenceDistances = (file: string, A: CsrMatrix): Float64Array =>
  SCIPY ? scipyDistances(join(MATRIX_DIR, file), 0) : dijkstra(A, 0);
const SOLVER = SCIPY
  ? 'scipy.sparse.csgraph.shortest_path'
  : 'a Dijkstra written in this test (no python3 with scipy here)';

function ssspInputs(A: CsrMatrix): { tensors: Record<string, DenseTensor | CsrMatrix> } {
  const d0 = new Float64Array(A.rows).fill(Infinity);
  d0[0] = 0;
  return {
    tensors: {
      A: { ...A, values: Float64Array.from(A.values, Math.abs) },
      d0: { format: 'dense', shape: [A.rows], data: d0 },
    },
  };
}

/** Power iteration in float64: r <- (1 - d) / n + d A r until sum |r_new - r| <= tol; the trips it took. */
function powerIteration(A: CsrMatrix, d: number, tol: number, max: number): { r: Float64Array; trips: number } {
  const n = A.rows;
  let r = new Float64Array(n).fill(0.000985);
  for (let t = 1; t <= max; t++) {
    const next = new Float64Array(n);
    let l1 = 0;
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let k = A.rowPtr[i]!; k < A.rowPtr[i + 1]!; k++) s += A.values[k]! * r[A.colIdx[k]!]!;
      next[i] = (1 - d) / n + d * s;
      l1 += Math.abs(next[i]! - r[i]!);
    }
    r = next;
    if (l1 <= tol) return { r, trips: t };
  }
  return { r, trips: max };
}

const r0 = (n: number): DenseTensor => ({ format: 'dense', shape: [n], data: new Float64Array(n).fill(0.000985) });
const dense = (t: unknown): Float64Array => Float64Array.from((t as DenseTensor).data);

describe.skipIf(!HAVE_DATA)('convergence loops reach the answers of independent solvers', () => {
  it(`sssp on luxembourg_osm from vertex 0 (wasm) equals ${SOLVER}`, async () => {
    const A = toCsr(loadMatrix(join(MATRIX_DIR, 'luxembourg_osm.mtx')));
    const want = referenceDistances('luxembourg_osm.mtx', A);
    const c = await compileWasm(loopKernel(example('sssp.dy'), 'sssp.dy'));
    try {
      const res = c.exec.run(toMaps(ssspInputs(A)));
      const got = dense(res.outputs.get('d'));
      // Hop counts below 2^24 are exact in f32, so equality is exact.
      expect(got).toEqual(want);
      expect(want.filter((x) => x === Infinity).length).toBeLessThan(A.rows / 100);
      const [rep] = res.repeats;
      expect(rep).toMatchObject({ runs: 1, converged: 1, until: { value: 'd' } });
      // Bellman-Ford stops one trip after the largest hop count (1034) is reached.
      expect(rep!.trips).toBe(Math.max(...want.filter(Number.isFinite)) + 1);
    } finally {
      c.exec.close();
    }
  }, 60_000);

  it(`sssp on Erdos971 (reference interpreter) equals ${SOLVER}`, () => {
    const A = toCsr(loadMatrix(join(MATRIX_DIR, 'Erdos971.mtx')));
    const k = loopKernel(example('sssp.dy'), 'sssp.dy');
    const res = interpretKernel(k, toMaps(ssspInputs(A)));
    expect(dense(res.outputs.get('d'))).toEqual(referenceDistances('Erdos971.mtx', A));
    expect(res.repeats[0]!.converged).toBe(1);
  });

  it('pagerank on cage8 stops where float64 power iteration with the L1 test does (reference and wasm)', async () => {
    const A = toCsr(loadMatrix(join(MATRIX_DIR, 'cage8.mtx')));
    const want = powerIteration(A, 0.85, 1e-6, 1000);
    expect(want.trips).toBeLessThan(1000);
    const inputs = {
      tensors: { A, r0: r0(A.rows) },
      scalars: { d: 0.85 },
    };
    const k = loopKernel(example('pagerank.dy'), 'pagerank.dy');
    const ref = interpretKernel(k, toMaps(inputs));
    expect(ref.repeats[0]).toMatchObject({ trips: want.trips, converged: 1, max: 1000 });
    const r = dense(ref.outputs.get('r'));
    for (let i = 0; i < r.length; i++) expect(Math.abs(r[i]! - want.r[i]!)).toBeLessThanOrEqual(1e-12);
    const c = await compileWasm(k);
    try {
      const res = c.exec.run(toMaps(inputs));
      const w = dense(res.outputs.get('r'));
      let l1 = 0;
      for (let i = 0; i < w.length; i++) l1 += Math.abs(w[i]! - want.r[i]!);
      expect(l1).toBeLessThanOrEqual(1e-6);
      expect(res.repeats[0]!.converged).toBe(1);
      expect(Math.abs(res.repeats[0]!.trips - want.trips)).toBeLessThanOrEqual(1);
    } finally {
      c.exec.close();
    }
  });
});
