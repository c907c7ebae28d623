/**
 * The matrices bench/gpu/generate.py makes on the GPU machine, made here by
 * the same rules (see its header: a counter hash, lowbias32, in 32-bit
 * arithmetic), entry for entry: prepare.ts plans them for dype's picks
 * without carrying them (10^7 entries and more). Values are the same
 * float32 draws (as float64).
 */
import type { CsrMatrix } from '../../runtime/tensor.js';

const GOLDEN = 0x9e3779b9;

function h32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

/** Draw i of stream `seed`: h32(i x golden + h32(seed)), in 32 bits. */
const draw = (base: number, i: number): number => h32((Math.imul(i, GOLDEN) + base) | 0);

/** A generated matrix: its kind and parameters as generated.txt spells them. */
export interface GeneratedSpec {
  name: string;
  kind: 'stencil3d' | 'rmat';
  /** stencil3d: [N]; rmat: [scale, edges, hub draws...]. */
  params: number[];
  seed: number;
}

/** The spec's line of generated.txt (generate.py's input): name kind params seed widths. */
export function specLine(s: GeneratedSpec, widths: readonly number[]): string {
  const params = s.kind === 'rmat' ? `${s.params[0]}:${s.params[1]}:${s.params.slice(2).join(',')}` : `${s.params[0]}`;
  return `${s.name} ${s.kind} ${params} ${s.seed} ${widths.join(',')}`;
}

/** Entries as sorted keys row x 2^shift + col (exact in float64 below 2^53), duplicates merged. */
function toCsr(rows: number, cols: number, keys: Float64Array, shift: number, seed: number): CsrMatrix {
  keys.sort();
  let n = 0;
  for (let k = 0; k < keys.length; k++) if (k === 0 || keys[k] !== keys[k - 1]) keys[n++] = keys[k]!;
  const scale = 2 ** shift;
  const rowPtr = new Int32Array(rows + 1);
  const colIdx = new Int32Array(n);
  const values = new Float64Array(n);
  const base = h32(seed * 8 + 4);
  const f32 = new Float32Array(1);
  for (let k = 0; k < n; k++) {
    const key = keys[k]!;
    const r = Math.floor(key / scale);
    rowPtr[r + 1]!++;
    colIdx[k] = key - r * scale;
    f32[0] = (draw(base, k) / 4294967296) * 2 - 1;
    values[k] = f32[0];
  }
  for (let r = 0; r < rows; r++) rowPtr[r + 1]! += rowPtr[r]!;
  return { format: 'csr', rows, cols, rowPtr, colIdx, values };
}

function stencil3d(n: number, seed: number): CsrMatrix {
  const rows = n ** 3;
  const offs: [number, (x: number, y: number, z: number) => boolean][] = [
    [-n * n, (_x, _y, z) => z > 0],
    [-n, (_x, y) => y > 0],
    [-1, (x) => x > 0],
    [0, () => true],
    [1, (x) => x < n - 1],
    [n, (_x, y) => y < n - 1],
    [n * n, (_x, _y, z) => z < n - 1],
  ];
  const out = new Float64Array(7 * rows);
  let m = 0;
  for (let r = 0; r < rows; r++) {
    const x = r % n;
    const y = Math.floor(r / n) % n;
    const z = Math.floor(r / (n * n));
    for (const [off, ok] of offs) if (ok(x, y, z)) out[m++] = r * 2 ** 32 + r + off;
  }
  return toCsr(rows, rows, out.subarray(0, m), 32, seed);
}

function rmat(scale: number, edges: number, hubs: readonly number[], seed: number): CsrMatrix {
  const n = 2 ** scale;
  const total = edges + hubs.reduce((a, b) => a + b, 0);
  const keys = new Float64Array(total);
  const base = h32(seed * 8 + 1);
  for (let e = 0; e < edges; e++) {
    let row = 0;
    let col = 0;
    for (let level = 0; level < scale; level++) {
      const u = draw(base, e * scale + level) / 4294967296;
      const rb = u >= 0.57 + 0.19 ? 1 : 0;
      const cb = (u >= 0.57 && u < 0.57 + 0.19) || u >= 0.57 + 0.19 + 0.19 ? 1 : 0;
      row = row * 2 + rb;
      col = col * 2 + cb;
    }
    keys[e] = row * n + col;
  }
  const hubBase = h32(seed * 8 + 2);
  const colBase = h32(seed * 8 + 3);
  let at = edges;
  let start = 0;
  hubs.forEach((count, j) => {
    const row = draw(hubBase, j) % n;
    for (let t = 0; t < count; t++) keys[at++] = row * n + (draw(colBase, start + t) % n);
    start += count;
  });
  return toCsr(n, n, keys, scale, seed);
}

export function generateMatrix(s: GeneratedSpec): CsrMatrix {
  switch (s.kind) {
    case 'stencil3d':
      return stencil3d(s.params[0]!, s.seed);
    case 'rmat':
      return rmat(s.params[0]!, s.params[1]!, s.params.slice(2), s.seed);
  }
}

/**
 * Matrices run.sh generates on the GPU machine (generate.py): a regular 3-D
 * stencil (14.6M entries, 2.1M rows of at most 7) and an R-MAT graph over
 * 2^20 vertices with 10^7 edge draws and three hubs of 10^5, 3 x 10^5 and
 * 10^6 column draws (10.7M entries, the longest row 644k).
 */
export const GENERATED: GeneratedSpec[] = [
  { name: 'stencil128', kind: 'stencil3d', params: [128], seed: 1 },
  { name: 'rmat20', kind: 'rmat', params: [20, 10_000_000, 100_000, 300_000, 1_000_000], seed: 2 },
];
