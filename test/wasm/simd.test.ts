/**
 * 128-bit SIMD in the wasm emitter (codegen/wasm/simd.ts): which loops take
 * the vector path (module text holds v128 ops for the dense inner loops of
 * SpMM, GEMM and dense elementwise code, none for SpMV or SDDMM's dot
 * product), and that the vector path gives bit for bit the scalar path's
 * results, on real matrices and on widths that are not a multiple of the
 * lane count and that take every block size (1, 3, 5, 7, 31, 33), for f32 and f64, at 1 and 2 threads; and
 * that both equal the reference interpreter within tolerance.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { emitWasm, type EmitOptions } from '../../codegen/wasm/emit.js';
import { planVector } from '../../codegen/wasm/simd.js';
import { ladd, lload, lmul, lvar, type LExpr, type LStmt } from '../../ir/loops.js';
import type { Kernel } from '../../ir/module.js';
import { toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { Rng } from '../../runtime/random.js';
import type { DenseTensor, SparseMatrix, Tensor } from '../../runtime/tensor.js';
import { createWasmExecutor, type WasmExecutor } from '../../runtime/wasm/executor.js';
import { expectClose, expectIdentical, loopKernel, TOL_F32, TOL_F64, toMaps } from './compare.js';
import { interpretKernel } from '../../interp/interpret.js';

const MATRIX_DIR = fileURLToPath(new URL('../../../shared/data/matrices/', import.meta.url));
const EXAMPLES_DIR = fileURLToPath(new URL('../../examples/', import.meta.url));
const HAVE_DATA = existsSync(MATRIX_DIR);
const example = (name: string): Kernel =>
  loopKernel(readFileSync(join(EXAMPLES_DIR, `${name}.dy`), 'utf8'), `${name}.dy`);

function rand(shape: number[], seed: number): DenseTensor {
  const rng = new Rng(seed);
  const data = new Float64Array(shape.reduce((a, b) => a * b, 1));
  for (let k = 0; k < data.length; k++) data[k] = rng.uniform(-1, 1);
  return { format: 'dense', shape, data };
}

/** A small random CSR matrix with some empty rows and one long row. */
function randomCsr(rows: number, cols: number, seed: number): SparseMatrix {
  const rng = new Rng(seed);
  const rowPtr = new Int32Array(rows + 1);
  const colIdx: number[] = [];
  const values: number[] = [];
  for (let r = 0; r < rows; r++) {
    const n = r === 1 ? cols : r % 5 === 3 ? 0 : Math.floor(rng.uniform(0, 6));
    const cs = new Set<number>();
    for (let t = 0; t < n; t++) cs.add(r === 1 ? t : Math.floor(rng.uniform(0, cols)));
    for (const c of [...cs].sort((a, b) => a - b)) {
      colIdx.push(c);
      values.push(rng.uniform(-2, 2));
    }
    rowPtr[r + 1] = colIdx.length;
  }
  return { format: 'csr', rows, cols, rowPtr, colIdx: Int32Array.from(colIdx), values: Float64Array.from(values) };
}

async function textOf(k: Kernel): Promise<string> {
  return (await emitWasm(k, { text: true })).text!;
}

/** k compiled with and without SIMD, each at 1 and 2 threads (compiled once, run on many inputs). */
async function bothPaths(
  k: Kernel,
): Promise<{ run: (tensors: Record<string, Tensor>, what: string, reference?: boolean) => void; close: () => void }> {
  const vec = await emitWasm(k, { simd: true });
  const sca = await emitWasm(k, { simd: false });
  expect(WebAssembly.validate(vec.binary as Uint8Array<ArrayBuffer>)).toBe(true);
  expect(vec.binary).not.toEqual(sca.binary);
  const execs: WasmExecutor[] = [];
  for (const c of [vec, sca])
    for (const threads of [1, 2]) execs.push(await createWasmExecutor(c.binary, c.manifest, { threads }));
  return {
    run(tensors, what, reference = false) {
      const runs = execs.map((e) => e.run(toMaps({ tensors })).outputs);
      for (const [name, t] of runs[0]!)
        for (let r = 1; r < runs.length; r++)
          expectIdentical(
            runs[r]!.get(name)!,
            t,
            `${what}: ${name} (${r < 2 ? 'simd' : 'scalar'}, ${(r % 2) + 1} thread(s), vs simd at 1)`,
          );
      if (!reference) return;
      for (const [name, t] of interpretKernel(k, toMaps({ tensors })).outputs) {
        const dtype = k.results.find((r) => r.name === name)!.type.dtype;
        expectClose(
          runs[0]!.get(name)!,
          t,
          dtype === 'f32' ? TOL_F32 : TOL_F64,
          `${what}: ${name} (simd vs reference)`,
        );
      }
    },
    close: () => execs.forEach((e) => e.close()),
  };
}

async function simdEqualsScalar(
  k: Kernel,
  inputs: [Record<string, Tensor>, string][],
  reference: boolean,
): Promise<void> {
  const p = await bothPaths(k);
  try {
    for (const [tensors, what] of inputs) p.run(tensors, what, reference);
  } finally {
    p.close();
  }
}

describe('simd: which loops take the vector path', () => {
  it('gcn, spmm and attention (the SpMM) carry v128 arithmetic; spmv none', async () => {
    const attention = await textOf(example('attention'));
    // SDDMM reads K's rows 4 entries x 4 columns at a time and transposes them; the last d mod 4 columns lane by lane.
    expect(attention).toMatch(/i8x16\.shuffle/);
    expect(attention).toMatch(/f32x4\.replace_lane/);
    for (const ex of ['gcn', 'spmm', 'attention']) {
      const t = await textOf(example(ex));
      expect(t, ex).toMatch(/f32x4\.mul/);
      expect(t, ex).toMatch(/f32x4\.add/);
      expect(t, ex).toMatch(/v128\.store/);
    }
    expect(await textOf(example('gcn'))).toMatch(/f32x4\.max/); // the fused relu
    expect(await textOf(example('spmv'))).not.toMatch(/v128|f32x4/);
  });
  it('f64 SpMM uses f64x2', async () => {
    const k = loopKernel(
      `kernel k(A: csr<f64>[m, n], B: dense<f64>[n, h]) -> (Y: dense<f64>[m, h]) { Y[i, c] = A[i, j] * B[j, c]; }`,
    );
    expect(await textOf(k)).toMatch(/f64x2\.mul/);
  });
  it("SpMM reads each entry's value with one load-splat (f32 and f64), no scalar load and splat", async () => {
    for (const [t, splat] of [
      ['f32', /v128\.load32_splat/],
      ['f64', /v128\.load64_splat/],
    ] as const) {
      const text = await textOf(
        loopKernel(
          `kernel k(A: csr<${t}>[m, n], B: dense<${t}>[n, h]) -> (Y: dense<${t}>[m, h]) { Y[i, c] = A[i, j] * B[j, c]; }`,
        ),
      );
      expect(text, t).toMatch(splat);
      expect(text, t).not.toMatch(t === 'f32' ? /f32x4\.splat\s*\(\s*f32\.load/ : /f64x2\.splat\s*\(\s*f64\.load/);
    }
  });
  it('the plan: SpMM and GEMM column loops and SDDMM entry loops vectorise; SpMV, reductions over k, host math, row loops and strided stores do not', () => {
    const plans = (k: Kernel): string[] => {
      const out: string[] = [];
      const visit = (
        ss: readonly import('../../ir/loops.js').LStmt[],
        bufs: import('../../ir/loops.js').LBuffer[],
      ): void => {
        for (const s of ss)
          if (s.k === 'for') {
            out.push(`${s.var}:${planVector(s, bufs)?.elem ?? '-'}`);
            visit(s.body, bufs);
          }
      };
      for (const f of k.loops!) visit(f.body, f.buffers);
      return out;
    };
    // gcn: GEMM (i, k, j), SpMM (i, k, p0), twice.
    expect(plans(example('gcn'))).toEqual([
      'i:-',
      'k:f32',
      'j:-',
      'i:-',
      'k:f32',
      'p0:-',
      'i:-',
      'k:f32',
      'j:-',
      'i:-',
      'k:f32',
      'p0:-',
    ]);
    expect(plans(example('spmv'))).toEqual(['i:-', 'p0:-']);
    // attention: SDDMM runs by lanes of entries (its dot product over k is a reduction: no plan for k);
    // max and sum over a row are reductions, exp is host math; op4 is an SpMM.
    expect(plans(example('attention'))).toEqual([
      'i:-',
      'p0:f32',
      'k:-',
      'i:-',
      'p0:-',
      'i:-',
      'p0:-',
      'i:-',
      'p0:-',
      'i:-',
      'k:f32',
      'p0:-',
    ]);
    // Dense elementwise: the row loop itself.
    expect(
      plans(
        loopKernel(
          `kernel k(x: dense<f32>[n], y: dense<f32>[n]) -> (z: dense<f32>[n]) { z[i] = relu(2.0 * x[i] - y[i]); }`,
        ),
      ),
    ).toEqual(['i:f32']);
    // A transpose: the outer loop would store with stride n (scalar); the inner one stores contiguously and gathers X's column.
    expect(plans(loopKernel(`kernel k(X: dense<f32>[n, h]) -> (Z: dense<f32>[h, n]) { Z[c, i] = X[i, c]; }`))).toEqual([
      'c:-',
      'i:f32',
    ]);
  });
});

// 31 f32 is blocks of 4, 2 and 1 vectors and 3 scalar columns; f64 blocks of 4 (x3), 2 and 1 and 1 scalar.
const widths = [1, 3, 5, 7, 31, 33];

describe('simd: bit-identical to the scalar path', () => {
  for (const t of ['f32', 'f64'] as const) {
    it(`SpMM on a random matrix with empty rows, widths ${widths.join(', ')} (${t})`, async () => {
      const k = loopKernel(
        `kernel k(A: csr<${t}>[m, n], B: dense<${t}>[n, h]) -> (Y: dense<${t}>[m, h]) { Y[i, c] = relu(A[i, j] * B[j, c]) ; }`,
      );
      const A = randomCsr(300, 280, 7);
      await simdEqualsScalar(
        k,
        widths.map((h) => [{ A, B: rand([280, h], h) }, `spmm ${t} h=${h}`]),
        true,
      );
    });
    it(`GEMM and elementwise, widths ${widths.join(', ')} (${t})`, async () => {
      const k =
        loopKernel(`kernel k(X: dense<${t}>[n, f], W: dense<${t}>[f, h], b: dense<${t}>[h]) -> (Y: dense<${t}>[n, h], Z: dense<${t}>[n, h]) {
        Y[i, c] = X[i, j] * W[j, c];
        Z[i, c] = max(Y[i, c] + b[c], 0.5 * Y[i, c]) / 3.0;
      }`);
      await simdEqualsScalar(
        k,
        widths.map((h) => [{ X: rand([67, 9], 1), W: rand([9, h], h), b: rand([h], 2 * h) }, `gemm ${t} h=${h}`]),
        true,
      );
    });
  }
  it(`gathers: SDDMM on a random matrix and a transpose, widths ${widths.join(', ')} (f32, f64)`, async () => {
    for (const t of ['f32', 'f64']) {
      const A = randomCsr(300, 300, 11);
      const sddmm = loopKernel(
        `kernel k(A: csr<${t}>[n, n], Q: dense<${t}>[n, d], K: dense<${t}>[n, d]) -> (S: csr<${t}>[n, n]) { S[i, j] = A[i, j] * sum(k: Q[i, k] * K[j, k]); }`,
      );
      await simdEqualsScalar(
        sddmm,
        widths.map((d) => [{ A, Q: rand([300, d], d), K: rand([300, d], d + 1) }, `sddmm ${t} d=${d}`]),
        true,
      );
      const transpose = loopKernel(`kernel k(X: dense<${t}>[n, h]) -> (Z: dense<${t}>[h, n]) { Z[c, i] = X[i, c]; }`);
      await simdEqualsScalar(
        transpose,
        widths.map((h) => [{ X: rand([37, h], h) }, `transpose ${t} h=${h}`]),
        true,
      );
    }
  });
  it('every blocking and spread gives the same bits: the default, [8, 4, 1], [3, 1], [1], 2 and 4 walks against 1 walk (SpMM and gcn, f32 and f64)', async () => {
    const once = async (k: Kernel, opts: EmitOptions, tensors: Record<string, Tensor>) => {
      const c = await emitWasm(k, opts);
      // Every call in spread walks where the op has them.
      const ex = await createWasmExecutor(c.binary, c.manifest, { threads: 1, spreadFromBytes: 0 });
      try {
        return ex.run(toMaps({ tensors })).outputs;
      } finally {
        ex.close();
      }
    };
    const A = randomCsr(120, 120, 5);
    for (const t of ['f32', 'f64']) {
      const cases: [string, Record<string, Tensor>][] = [
        [
          `kernel k(A: csr<${t}>[m, n], B: dense<${t}>[n, h]) -> (Y: dense<${t}>[m, h]) { Y[i, c] = A[i, j] * B[j, c]; }`,
          { A, B: rand([120, 37], 4) },
        ],
        // 75 columns: f32 takes a block of 4 walks (64 lanes) first, f64 one of 4 walks and one of 2.
        [
          `kernel k(A: csr<${t}>[m, n], B: dense<${t}>[n, h]) -> (Y: dense<${t}>[m, h]) { Y[i, c] = A[i, j] * B[j, c]; }`,
          { A, B: rand([120, 75], 5) },
        ],
        [
          `kernel gcn(A: csr<${t}>[n, n], X: dense<${t}>[n, f], W1: dense<${t}>[f, h], W2: dense<${t}>[h, c]) -> (Y: dense<${t}>[n, c]) {
            T1[i, k] = X[i, j] * W1[j, k];
            H1[i, k] = relu(A[i, j] * T1[j, k]);
            T2[i, k] = H1[i, j] * W2[j, k];
            Y[i, k] = A[i, j] * T2[j, k];
          }`,
          // h = 70 and c = 40 take blocks of 4 and of 2 spread walks (f32).
          { A, X: rand([120, 19], 6), W1: rand([19, 70], 7), W2: rand([70, 40], 8) },
        ],
      ];
      for (const [src, tensors] of cases) {
        const k = loopKernel(src);
        const want = await once(k, { spreadWalks: 1 }, tensors);
        const variants: EmitOptions[] = [
          {},
          { vectorBlocks: [8, 4, 1] },
          { vectorBlocks: [3, 1] },
          { vectorBlocks: [1] },
          { spreadWalks: 2 },
          { spreadWalks: 4 },
          { spreadWalks: 4, vectorBlocks: [3, 1] },
        ];
        for (const opts of variants) {
          const got = await once(k, opts, tensors);
          for (const [name, y] of want)
            expectIdentical(got.get(name)!, y, `${t} ${k.name} ${JSON.stringify(opts)}: ${name}`);
        }
      }
    }
  });
  it('spread walks read every cache line of a block in its first walk: vector offsets up to 15 x 16 bytes with 4 walks, 3 x 16 without', async () => {
    const k = loopKernel(
      `kernel k(A: csr<f32>[m, n], B: dense<f32>[n, h]) -> (Y: dense<f32>[m, h]) { Y[i, c] = A[i, j] * B[j, c]; }`,
    );
    const offsets = async (spreadWalks: number): Promise<number> => {
      const { text } = await emitWasm(k, { spreadWalks, text: true });
      return Math.max(...[...text!.matchAll(/v128\.(?:load|store) offset=(\d+)/g)].map((x) => Number(x[1])));
    };
    expect(await offsets(1)).toBe(48);
    expect(await offsets(2)).toBe(112);
    expect(await offsets(4)).toBe(240);
    for (const bad of [0, 1.5, -2, 17])
      await expect(emitWasm(k, { spreadWalks: bad })).rejects.toThrow(/spreadWalks must be an integer in 1\.\.16/);
  });
  it('refuses a blocking that is not strictly decreasing positive integers', async () => {
    const k = loopKernel(
      `kernel k(A: csr<f32>[m, n], B: dense<f32>[n, h]) -> (Y: dense<f32>[m, h]) { Y[i, c] = A[i, j] * B[j, c]; }`,
    );
    for (const bad of [[], [4, 4], [2, 4], [0], [2.5, 1]])
      await expect(emitWasm(k, { vectorBlocks: bad })).rejects.toThrow(/vectorBlocks must be strictly decreasing/);
  });
  it('an inner loop whose gathered row is addressed through a let of its own emits (no rows read ahead of the let) and equals the reference', async () => {
    // The transposed steps read the rows ahead of the body, where the body's lets do not exist yet.
    const k = loopKernel(
      'kernel k(A: csr<f32>[n, n], Q: dense<f32>[n, d], K: dense<f32>[n, d]) -> (S: csr<f32>[n, n]) { S[i, j] = A[i, j] * sum(k: Q[i, k] * K[j, k]); }',
    );
    const inner = (ss: readonly LStmt[]): Extract<LStmt, { k: 'for' }> | undefined => {
      for (const s of ss) if (s.k === 'for') return s.body.some((x) => x.k === 'for') ? inner(s.body) : s;
      return undefined;
    };
    const loop = inner(k.loops![0]!.body)!;
    const set = loop.body[0]!;
    if (set.k !== 'set' || set.value.k !== 'bin') throw new Error('unexpected SDDMM loop IR');
    // K's row through the let: the same sum, K[jj + k] for K[j * d + k].
    const viaLet = (e: LExpr): LExpr =>
      e.k === 'load' && e.buf === 'K'
        ? lload('K', ladd(lvar('jj'), lvar(loop.var)))
        : e.k === 'bin'
          ? { ...e, lhs: viaLet(e.lhs), rhs: viaLet(e.rhs) }
          : e;
    loop.body = [
      { k: 'let', var: 'jj', type: 'index', value: lmul(lvar('j'), lvar('d')) },
      { ...set, value: viaLet(set.value) },
    ];
    const { binary, manifest } = await emitWasm(k);
    expect(WebAssembly.validate(binary as Uint8Array<ArrayBuffer>)).toBe(true);
    const ex = await createWasmExecutor(binary, manifest, { threads: 1 });
    try {
      const A = randomCsr(300, 300, 11);
      for (const d of [5, 9]) {
        // Values in [0.5, 1.5]: no cancellation, so f32 stays within the tolerance of the f64 reference.
        const pos = (t: DenseTensor): DenseTensor => ({ ...t, data: t.data.map((x) => Math.abs(x) + 0.5) });
        const inputs = toMaps({ tensors: { A, Q: pos(rand([300, d], d)), K: pos(rand([300, d], d + 1)) } });
        const want = interpretKernel(k, inputs).outputs.get('S')!;
        expectClose(ex.run(inputs).outputs.get('S')!, want, TOL_F32, `sddmm via a let d=${d}`);
      }
    } finally {
      ex.close();
    }
  });
  it('a vectorised row loop split across threads (odd slice bounds), f32 and f64', async () => {
    for (const t of ['f32', 'f64']) {
      const k = loopKernel(
        `kernel k(x: dense<${t}>[n], y: dense<${t}>[n]) -> (z: dense<${t}>[n]) { z[i] = relu(2.0 * x[i] - y[i]) + abs(y[i]) / 3.0; }`,
      );
      expect(k.loops!.length).toBe(1);
      expect(await textOf(k)).toMatch(t === 'f32' ? /f32x4\.abs/ : /f64x2\.abs/);
      await simdEqualsScalar(
        k,
        [1001, 257, 3].map((n) => [{ x: rand([n], n), y: rand([n], n + 1) }, `elementwise ${t} n=${n}`]),
        true,
      );
    }
  });
  describe.skipIf(!HAVE_DATA)('real matrices', () => {
    for (const file of ['cora.cites', 'adder_dcop_05.mtx']) {
      it(`gcn and spmm on ${file}, widths ${widths.join(', ')}`, async () => {
        const A = toCsr(loadMatrix(join(MATRIX_DIR, file)));
        const n = A.cols;
        // Against the reference: test/wasm/real-matrices.test.ts; here the two paths against each other.
        await simdEqualsScalar(
          example('spmm'),
          widths.map((h) => [{ A, B: rand([n, h], 10 + h) }, `spmm/${file} k=${h}`]),
          false,
        );
        await simdEqualsScalar(
          example('gcn'),
          widths.map((h) => [
            { A, X: rand([n, 6], 3), W1: rand([6, h], 4 + h), W2: rand([h, h], 5 + h) },
            `gcn/${file} h=${h}`,
          ]),
          false,
        );
        await simdEqualsScalar(
          example('attention'),
          [[{ A, Q: rand([n, 5], 6), K: rand([n, 5], 7), V: rand([n, 5], 8) }, `attention/${file}`]],
          false,
        );
      });
    }
  });
});
