/**
 * SDDMM on the native CPU target, lanes over a row's entries with each
 * lane's row of K read whole and transposed (codegen/cpu/transposed.ts):
 * the library prints the 8 x 8 (f32) and 4 x 4 (f64) transposes, and at
 * widths that take whole column steps, a remainder or only the remainder
 * (1, 3, 7, 8, 9, 31, 33), on rows long enough for the lanes (bcsstk13,
 * about 42 entries a row) and too short (karate, and a matrix whose rows
 * hold 7, 8 and 9 entries), the results equal the wasm backend bit for bit
 * (both add each entry's products in order) at 1 and 2 threads and the
 * reference interpreter within tolerance; so do f32's short rows, and the
 * last entries of its long rows, in lanes across rows (crossRowShort,
 * crossRowLong), on cora and on runs of rows of 0-7 entries broken by long
 * rows. Skipped without a C compiler or
 * the matrices.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCpuLibraryAsync, type CpuLibraryBuild } from '../../codegen/cpu/build.js';
import { cpuLibrarySource } from '../../codegen/cpu/library.js';
import { wasmManifest } from '../../codegen/wasm/emit.js';
import { interpretKernel } from '../../interp/interpret.js';
import { lvar, type LStmt } from '../../ir/loops.js';
import type { Kernel } from '../../ir/module.js';
import { toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { createNativeCpuExecutor } from '../../runtime/native/cpu-executor.js';
import type { CsrMatrix, DenseTensor, Tensor } from '../../runtime/tensor.js';
import type { WasmExecutor } from '../../runtime/wasm/executor.js';
import { haveCompiler } from '../helpers/cc.js';
import { rand } from '../helpers/example-inputs.js';
import {
  compileWasm,
  expectClose,
  expectIdentical,
  loopKernel,
  toMaps,
  TOL_F32,
  TOL_F64,
  type Compiled,
} from '../wasm/compare.js';

const MATRIX_DIR = fileURLToPath(new URL('../../../shared/data/matrices/', import.meta.url));
const READY = existsSync(MATRIX_DIR) && haveCompiler();
const sddmm = (t: string): string =>
  `kernel sddmm_${t}(A: csr<${t}>[n, n], Q: dense<${t}>[n, d], K: dense<${t}>[n, d]) -> (S: csr<${t}>[n, n]) { S[i, j] = A[i, j] * sum(k: Q[i, k] * K[j, k]); }`;

/** n rows of 7, 8 and 9 entries in turn at scattered columns: one block of 8 lanes and 0 or 1 left, or none. */
function rowsAround8(n: number): CsrMatrix {
  const rowPtr = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) rowPtr[i + 1] = rowPtr[i]! + 7 + (i % 3);
  const colIdx = new Int32Array(rowPtr[n]!);
  for (let i = 0; i < n; i++)
    for (let p = rowPtr[i]!, q = 0; p < rowPtr[i + 1]!; p++, q++) colIdx[p] = (q * Math.floor(n / 9) + i) % n;
  for (let i = 0; i < n; i++) colIdx.subarray(rowPtr[i]!, rowPtr[i + 1]!).sort();
  const values = Float64Array.from(colIdx, (c, p) => ((c * 13 + p) % 11) / 4 - 1);
  return { format: 'csr', rows: n, cols: n, rowPtr, colIdx, values };
}

/**
 * n rows whose lengths cycle through 0-7 entries with a row of 8-20 every 11th: runs of short rows (empty ones
 * among them) broken by long ones, so lanes across rows start, fill and flush in every position.
 */
function mixedShortRows(n: number): CsrMatrix {
  const len = (i: number): number => (i % 11 === 10 ? 8 + (i % 13) : (i * 5 + (i >> 3)) % 8);
  const rowPtr = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) rowPtr[i + 1] = rowPtr[i]! + len(i);
  const colIdx = new Int32Array(rowPtr[n]!);
  for (let i = 0; i < n; i++)
    for (let p = rowPtr[i]!, q = 0; p < rowPtr[i + 1]!; p++, q++) colIdx[p] = (i * 7 + q * 37) % n;
  for (let i = 0; i < n; i++) colIdx.subarray(rowPtr[i]!, rowPtr[i + 1]!).sort();
  const values = Float64Array.from(colIdx, (c, p) => ((c * 13 + p) % 11) / 4 - 1);
  return { format: 'csr', rows: n, cols: n, rowPtr, colIdx, values };
}

/**
 * Builds the library of kernel k from its C source as `edit` returns it, and checks its S against wasm's at 1 and 2
 * threads. `zeroed`: run once, zero the library's memory, then run on fresh tensor objects (S starts at 0).
 */
async function libraryAgainstWasm(
  k: Kernel,
  edit: (src: string) => string,
  inputs: () => { tensors: Record<string, Tensor> },
  zeroed: boolean,
  what: string,
): Promise<void> {
  const manifest = wasmManifest(k, [], true);
  const program = `sddmm_${what.replace(/\W+/g, '_')}`;
  const lib = await buildCpuLibraryAsync(edit(cpuLibrarySource(program, 'test', [{ kernel: k, manifest }])), null);
  const w = await compileWasm(k);
  try {
    const want = w.exec.run(toMaps(inputs())).outputs.get('S')!;
    for (const threads of [1, 2]) {
      const ex = createNativeCpuExecutor(lib.path, manifest, { program, programHash: 'test', threads });
      try {
        if (zeroed) {
          ex.run(toMaps(inputs()));
          new Uint8Array(ex.memory.buffer).fill(0);
        }
        expectIdentical(ex.run(toMaps(inputs())).outputs.get('S')!, want, `${what}, ${threads} thread(s)`);
      } finally {
        ex.close();
      }
    }
  } finally {
    w.exec.close();
    lib.cleanup();
  }
}

/** Values in [0.5, 1.5]: no cancellation in the dot products, so an f32 result is close to the f64 reference. */
function positive(t: DenseTensor): DenseTensor {
  return { ...t, data: t.data.map((x) => Math.abs(x) + 0.5) };
}

describe.skipIf(!READY)('native SDDMM: lanes over entries, rows transposed', () => {
  const kernels: Kernel[] = [];
  const wasm = new Map<string, Compiled>();
  const native = new Map<string, WasmExecutor[]>();
  let build: CpuLibraryBuild;
  let source = '';

  beforeAll(async () => {
    for (const t of ['f32', 'f64']) kernels.push(loopKernel(sddmm(t), `sddmm_${t}.dy`));
    const entries = kernels.map((kernel) => ({ kernel, manifest: wasmManifest(kernel, [], true) }));
    source = cpuLibrarySource('sddmm', 'test', entries);
    const building = buildCpuLibraryAsync(source, null);
    for (const k of kernels) wasm.set(k.name, await compileWasm(k));
    build = await building;
    entries.forEach(({ kernel, manifest }) =>
      native.set(
        kernel.name,
        [1, 2].map((threads) =>
          createNativeCpuExecutor(build.path, manifest, { program: 'sddmm', programHash: 'test', threads }),
        ),
      ),
    );
  }, 120_000);

  afterAll(() => {
    for (const es of native.values()) for (const e of es) e.close();
    for (const c of wasm.values()) c.exec.close();
    build?.cleanup();
  });

  it('the library transposes 8 x 8 f32 and 4 x 4 f64 blocks of K', () => {
    expect(source).toMatch(/DY_SHUF8\(dy_row\d+, dy_row\d+, 0, 8, 1, 9, 4, 12, 5, 13\)/);
    expect(source).toMatch(/DY_SHUF4\(dy_row\d+, dy_row\d+, 0, 4, 2, 6\)/);
  });

  it("f32's short rows take the lanes across rows (a pass of their own, Q's rows read per lane); f64's do not", () => {
    // Kernel 0 is f32, kernel 1 f64 (beforeAll's order); each op's functions are dy_f<op>...
    expect(source).toMatch(/static void dy_f0_short\(/);
    expect(source).toMatch(/static void dy_f0_long\(/);
    expect(source).not.toMatch(/dy_f1_short/);
    const short = source.slice(source.indexOf('static void dy_f0_short('), source.indexOf('static void dy_f0('));
    expect(short).toMatch(/const float \*dy_r\d+ = Q \+ \(\(dy_br\d+\[7\] \* d\) \+ 0\);/);
    // A long row's last entries (fewer than 8) join lanes across the long rows in their own pass, not the plain loop.
    const long = source.slice(source.indexOf('static void dy_f0_long('), source.indexOf('static void dy_f0_short('));
    expect(long).toMatch(/const float \*dy_r\d+ = Q \+ \(\(dy_br\d+\[7\] \* d\) \+ 0\);/);
    expect(long).toMatch(/for \(; dy_p\d+ \+ 8 <= dy_pe\d+; dy_p\d+ \+= 8\) \{/);
    // Each pass walks a list of its rows, built without a branch; the two take the rows tile by tile.
    expect(short).toMatch(/dy_nl\d+ \+= \(int\)\(A_rowPtr\[dy_r\d+ \+ 1\] - A_rowPtr\[dy_r\d+\] < 8\);/);
    expect(source).toMatch(/dy_nl\d+ \+= \(int\)\(A_rowPtr\[dy_r\d+ \+ 1\] - A_rowPtr\[dy_r\d+\] >= 8\);/);
    expect(source).toMatch(/dy_f0_long\(dy_b, dy_s, dy_t, dy_u\);\n\s+dy_f0_short\(dy_b, dy_s, dy_t, dy_u\);/);
  });

  it('a literal row count: the two passes still go by tiles, and equal wasm bit for bit (1 and 2 threads)', async () => {
    const k = loopKernel(
      'kernel k(A: csr<f32>[2700, 2700], Q: dense<f32>[2700, d], K: dense<f32>[2700, d]) -> (S: csr<f32>[2700, 2700]) { S[i, j] = A[i, j] * sum(k: Q[i, k] * K[j, k]); }',
      'sddmm_literal.dy',
    );
    const A = mixedShortRows(2700);
    await libraryAgainstWasm(
      k,
      (src) => {
        expect(src).toMatch(/const long long dy_z = dy_hi < 2700LL \? dy_hi : 2700LL;/);
        return src;
      },
      () => ({ tensors: { A, Q: rand([2700, 9], 'Qlit'), K: rand([2700, 9], 'Klit') } }),
      false,
      'literal rows',
    );
  });

  it('each entry is computed once: a library whose stores add counts the visits (1 and 2 threads, chunks over several tiles)', async () => {
    // A row run by both passes, or by two tiles, writes the same bits twice: comparing results cannot see it.
    // With every store of S turned into an add over S zeroed, a second visit doubles the entry.
    // 12,000 rows: at 2 threads eight chunks of about 1,500 rows, each over two tiles of the passes.
    const A = mixedShortRows(12000);
    await libraryAgainstWasm(
      loopKernel(sddmm('f32'), 'sddmm_once.dy'),
      (plain) => {
        // An index may hold one level of brackets (the lanes' S_vals[dy_bp[q]]).
        const store = /(S_vals\[(?:[^[\]\n]|\[[^\]\n]*\])+\]) = /g;
        const adding = plain.replace(store, '$1 += ');
        expect(plain.match(store)?.length).toBeGreaterThan(0);
        expect(adding.match(/S_vals\[.*\] = /g)).toBeNull();
        expect(adding).toMatch(/S_vals\[dy_bp\d+\[0\]\] \+= /);
        return adding;
      },
      // New tensor objects each run: copied in again after the memory is zeroed.
      () => ({
        tensors: { A: { ...A }, Q: positive(rand([A.rows, 3], 'Qonce')), K: positive(rand([A.rows, 3], 'Konce')) },
      }),
      true,
      'each entry once',
    );
  });

  it('an accumulator that starts from another keeps the column blocks: the library builds and equals wasm bit for bit', async () => {
    // The transposed block prints an accumulator's start before its renames; acc9 = acc0 must not take it.
    const k = loopKernel(sddmm('f32'), 'sddmm_start.dy');
    const entries = k.loops![0]!.body[0]!;
    if (entries.k !== 'for' || entries.body[0]!.k !== 'for') throw new Error('unexpected SDDMM loop IR');
    const p = entries.body[0];
    const [lane, acc, inner, store] = p.body as [LStmt, LStmt, LStmt, LStmt];
    if (acc.k !== 'let' || inner.k !== 'for' || inner.body[0]!.k !== 'set' || store.k !== 'store')
      throw new Error('unexpected SDDMM loop IR');
    const set = inner.body[0]!;
    if (set.value.k !== 'bin') throw new Error('unexpected SDDMM loop IR');
    p.body = [
      lane,
      acc,
      { k: 'let', var: 'acc9', type: 'f32', value: lvar(acc.var) },
      { ...inner, body: [set, { k: 'set', var: 'acc9', value: { ...set.value, lhs: lvar('acc9') } }] },
      { ...store, value: { k: 'bin', op: '+', type: 'f32', lhs: store.value, rhs: lvar('acc9') } },
    ];
    const manifest = wasmManifest(k, [], true);
    const src = cpuLibrarySource('sddmm_start', 'test', [{ kernel: k, manifest }]);
    expect(src).not.toMatch(/DY_SHUF8\(dy_row/);
    const lib = await buildCpuLibraryAsync(src, null);
    const w = await compileWasm(k);
    const ex = createNativeCpuExecutor(lib.path, manifest, { program: 'sddmm_start', programHash: 'test', threads: 1 });
    try {
      const A = toCsr(loadMatrix(join(MATRIX_DIR, 'bcsstk13.mtx')));
      const inputs = { tensors: { A, Q: rand([A.rows, 9], 'Q9s'), K: rand([A.rows, 9], 'K9s') } };
      expectIdentical(
        ex.run(toMaps(inputs)).outputs.get('S')!,
        w.exec.run(toMaps(inputs)).outputs.get('S')!,
        'acc9 = acc0',
      );
    } finally {
      ex.close();
      w.exec.close();
      lib.cleanup();
    }
  }, 60_000);

  for (const file of [
    'bcsstk13.mtx',
    'karate.mtx',
    'rows of 7, 8 and 9',
    'short rows of 0-7 among long ones',
    'cora.cites',
  ]) {
    it(`${file}: widths 1, 3, 7, 8, 9, 31, 33 equal wasm bit for bit (1 and 2 threads) and the reference`, () => {
      const A = /\.(mtx|cites)$/.test(file)
        ? toCsr(loadMatrix(join(MATRIX_DIR, file)))
        : file.startsWith('short')
          ? mixedShortRows(2700) // three tiles of the two passes (codegen/cpu/emit.ts CROSS_TILE), lanes left at each end
          : rowsAround8(600);
      for (const k of kernels)
        for (const d of [1, 3, 7, 8, 9, 31, 33]) {
          const inputs = {
            tensors: { A, Q: positive(rand([A.rows, d], `Q${d}`)), K: positive(rand([A.rows, d], `K${d}`)) },
          };
          const what = `${k.name} ${file} d=${d}`;
          const want = interpretKernel(k, toMaps(inputs)).outputs.get('S')!;
          const viaWasm = wasm.get(k.name)!.exec.run(toMaps(inputs)).outputs.get('S')!;
          const [one, two] = native.get(k.name)!.map((e) => e.run(toMaps(inputs)).outputs.get('S')!);
          expectIdentical(one!, viaWasm, `${what}: native vs wasm`);
          expectIdentical(two!, one!, `${what}: native at 2 threads vs 1`);
          expectClose(one!, want, k.name.endsWith('f32') ? TOL_F32 : TOL_F64, `${what}: native vs reference`);
        }
    });
  }
});
