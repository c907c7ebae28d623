/**
 * Whether relaxed-SIMD fused multiply-add would pay in the wasm SpMM (issue
 * 15 item 3). Node 20 has relaxed SIMD only behind
 * --experimental-wasm-relaxed-simd (set here at start-up), so the emitter
 * does not use it; this measures what it would give. Two hand-built
 * binaryen modules of the emitter's SpMM shape (f32, K = 32: per row, 8
 * vectors of 4 columns held in locals over the row's entries, the entry's
 * value splat, the row of B loaded contiguously) differ only in
 * `acc + a * b` (f32x4.mul then add, what dype emits) against
 * f32x4.relaxed_madd. Timed at 1 thread, medians of RUNS runs after a
 * warm-up, on real matrices; the outputs are compared bit for bit (fused
 * rounds once, so they may differ, which the emitter's rule forbids: its
 * SIMD path must equal the scalar path's bits).
 *   npm run build && node dist/bench/wasm-fma.js [RUNS]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { toCsr } from '../runtime/io/convert.js';
import { loadMatrix } from '../runtime/io/load.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
const { default: binaryen } = await import('binaryen');
/** binaryen's C entry for a SIMD ternary: its JS API has no constructor for the relaxed ones. */
const raw = binaryen as unknown as {
  _BinaryenSIMDTernary(module: number, op: number, a: number, b: number, c: number): number;
};

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const RUNS = Number(process.argv[2] ?? 9);
const MATRICES = ['bcsstk33.mtx', 'luxembourg_osm.mtx', 'facebook_combined.txt', 'ca-GrQc.mtx'];
const K = 32;
const VECS = K / 4;

/** spmm(rowPtr, colIdx, vals, B, Y, rows): byte offsets into one memory. */
function build(fused: boolean): WebAssembly.Module {
  const m = new binaryen.Module();
  m.setFeatures(binaryen.Features.MVP | binaryen.Features.SIMD128 | binaryen.Features.RelaxedSIMD);
  m.setMemory(1, 65536, 'mem');
  const i32 = binaryen.i32;
  const v128 = binaryen.v128;
  // Params 0..5; locals: 6 i (row), 7 p, 8 end, 9 bRow (byte address), 10 a (v128), 11.. the accumulators.
  const [PTR, COL, VAL, B, Y, ROWS, I, P, END, BROW, A] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  const acc = (v: number): number => 11 + v;
  const get = (x: number, t: number): number => m.local.get(x, t);
  const madd = (a: number, b: number, c: number): number =>
    fused ? raw._BinaryenSIMDTernary(m.ptr, binaryen.RelaxedMaddVecF32x4, a, b, c) : m.f32x4.add(c, m.f32x4.mul(a, b));
  const at = (base: number, index: number, scale: number): number =>
    m.i32.add(get(base, i32), m.i32.mul(index, m.i32.const(scale)));
  const entry = m.block(null, [
    m.local.set(A, m.f32x4.splat(m.f32.load(0, 4, at(VAL, get(P, i32), 4)))),
    m.local.set(BROW, at(B, m.i32.load(0, 4, at(COL, get(P, i32), 4)), K * 4)),
    ...Array.from({ length: VECS }, (_, v) =>
      m.local.set(acc(v), madd(get(A, v128), m.v128.load(v * 16, 4, get(BROW, i32)), get(acc(v), v128))),
    ),
    m.local.set(P, m.i32.add(get(P, i32), m.i32.const(1))),
  ]);
  const row = m.block(null, [
    ...Array.from({ length: VECS }, (_, v) => m.local.set(acc(v), m.v128.const(new Array(16).fill(0)))),
    m.local.set(P, m.i32.load(0, 4, at(PTR, get(I, i32), 4))),
    m.local.set(END, m.i32.load(4, 4, at(PTR, get(I, i32), 4))),
    m.block('done', [
      m.loop('entries', m.block(null, [m.br('done', m.i32.ge_s(get(P, i32), get(END, i32))), entry, m.br('entries')])),
    ]),
    ...Array.from({ length: VECS }, (_, v) => m.v128.store(v * 16, 4, at(Y, get(I, i32), K * 4), get(acc(v), v128))),
    m.local.set(I, m.i32.add(get(I, i32), m.i32.const(1))),
  ]);
  const body = m.block(null, [
    m.local.set(I, m.i32.const(0)),
    m.block('end', [
      m.loop('rows', m.block(null, [m.br('end', m.i32.ge_s(get(I, i32), get(ROWS, i32))), row, m.br('rows')])),
    ]),
  ]);
  m.addFunction(
    'spmm',
    binaryen.createType([i32, i32, i32, i32, i32, i32]),
    binaryen.none,
    [i32, i32, i32, i32, v128, ...Array.from({ length: VECS }, () => v128)],
    body,
  );
  m.addFunctionExport('spmm', 'spmm');
  if (!m.validate()) throw new Error('wasm-fma: module does not validate');
  m.optimize();
  const bin = m.emitBinary();
  m.dispose();
  return new WebAssembly.Module(new Uint8Array(bin));
}

interface Row {
  matrix: string;
  nnz: number;
  mulAddMs: number;
  fusedMs: number;
  speedup: number;
  differing: number;
  maxRelDiff: number;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

function run(mod: WebAssembly.Module, file: string): { ms: number; y: Float32Array } {
  const A = toCsr(loadMatrix(join(root, '..', 'shared', 'data', 'matrices', file)));
  const nnz = A.rowPtr[A.rows]!;
  const bytes = [4 * (A.rows + 1), 4 * nnz, 4 * nnz, 4 * A.cols * K, 4 * A.rows * K];
  const offs: number[] = [];
  let at = 0;
  for (const b of bytes) {
    offs.push(at);
    at += Math.ceil(b / 16) * 16;
  }
  const inst = new WebAssembly.Instance(mod, {});
  const mem = inst.exports['mem'] as WebAssembly.Memory;
  const need = Math.ceil(at / 65536) + 1 - mem.buffer.byteLength / 65536;
  if (need > 0) mem.grow(need);
  const buf = mem.buffer;
  new Int32Array(buf, offs[0], A.rows + 1).set(A.rowPtr.subarray(0, A.rows + 1));
  new Int32Array(buf, offs[1], nnz).set(A.colIdx.subarray(0, nnz));
  const vals = new Float32Array(buf, offs[2], nnz);
  // Values and B from a fixed generator: the two modules see the same bits.
  let s = 12345;
  const rnd = (): number => {
    s = (s * 1103515245 + 12345) >>> 0;
    return (s >>> 8) / 16777216 - 0.5;
  };
  for (let q = 0; q < nnz; q++) vals[q] = rnd();
  const B = new Float32Array(buf, offs[3], A.cols * K);
  for (let q = 0; q < B.length; q++) B[q] = rnd();
  const spmm = inst.exports['spmm'] as (...a: number[]) => void;
  const call = (): void => spmm(offs[0]!, offs[1]!, offs[2]!, offs[3]!, offs[4]!, A.rows);
  call();
  const times: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const t0 = performance.now();
    call();
    times.push(performance.now() - t0);
  }
  return { ms: median(times), y: new Float32Array(buf, offs[4], A.rows * K).slice() };
}

const mulAdd = build(false);
const fused = build(true);
const rows: Row[] = [];
console.log(`wasm SpMM K=${K} f32, 1 thread, median of ${RUNS}; load ${loadavg()[0]!.toFixed(2)}`);
console.log(
  'matrix                     nnz   mul+add ms   relaxed_madd ms   speed-up   outputs differing   max rel diff',
);
for (const file of MATRICES) {
  const a = run(mulAdd, file);
  const b = run(fused, file);
  let differing = 0;
  let maxRel = 0;
  for (let q = 0; q < a.y.length; q++) {
    if (Object.is(a.y[q], b.y[q])) continue;
    differing++;
    maxRel = Math.max(maxRel, Math.abs(a.y[q]! - b.y[q]!) / Math.max(1e-30, Math.abs(a.y[q]!)));
  }
  const A = toCsr(loadMatrix(join(root, '..', 'shared', 'data', 'matrices', file)));
  const row: Row = {
    matrix: file,
    nnz: A.rowPtr[A.rows]!,
    mulAddMs: a.ms,
    fusedMs: b.ms,
    speedup: a.ms / b.ms,
    differing: differing / a.y.length,
    maxRelDiff: maxRel,
  };
  rows.push(row);
  console.log(
    `${file.padEnd(22)} ${String(row.nnz).padStart(8)} ${a.ms.toFixed(3).padStart(12)} ${b.ms.toFixed(3).padStart(17)} ${row.speedup.toFixed(2).padStart(9)}x ${(100 * row.differing).toFixed(1).padStart(18)}% ${maxRel.toExponential(1).padStart(14)}`,
  );
}
const out = join(root, 'bench', 'results');
mkdirSync(out, { recursive: true });
writeFileSync(
  join(out, 'wasm-fma.json'),
  JSON.stringify({ runs: RUNS, k: K, load: loadavg()[0], node: process.version, rows }, null, 2),
);
console.log(`saved ${join('bench', 'results', 'wasm-fma.json')}`);
