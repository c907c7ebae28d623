/**
 * Dense elementwise ops over whole rows in the native library and the wasm
 * kernels (codegen/cpu/flat.ts): one loop over the elements where every
 * access is the element's own, the row's loop kept otherwise. Wasm's results
 * equal the reference interpreter's, at 1 and 2 threads the same bits, and
 * the native library's are wasm's bit for bit, on widths that fill no
 * vector, some, and many.
 */
import { describe, expect, it } from 'vitest';
import { compileCpuKernel } from '../../codegen/cpu/compile.js';
import { cpuLibrarySource } from '../../codegen/cpu/library.js';
import { wasmManifest } from '../../codegen/wasm/emit.js';
import { atThreads } from '../helpers/native-run.js';
import { createWasmExecutor } from '../../runtime/wasm/executor.js';
import type { DenseTensor, Tensor } from '../../runtime/tensor.js';
import { haveCompiler } from '../helpers/cc.js';
import { compileWasm, expectIdentical, expectWasmMatches, loopKernel } from '../wasm/compare.js';

const source = (src: string): string => {
  const k = loopKernel(src);
  return cpuLibrarySource('t', 'test', [{ kernel: k, manifest: wasmManifest(k, [], true) }]);
};

/** The loops over the op's elements in the library's one op function (dy_f0). */
const loopsOf = (c: string): string[] =>
  (c.slice(c.indexOf('static void dy_f0('), c.indexOf('typedef void (*dy_fn)')).match(/^ *for \(.*\{$/gm) ?? []).map(
    (l) => l.trim(),
  );

const dense = (rows: number, cols: number, seed: number): DenseTensor => ({
  format: 'dense',
  shape: [rows, cols],
  // Negatives and zeros of both signs (no NaN: the sign of a NaN that arithmetic passes on is the hardware's, and
  // relu's own NaN cases are test/native/lane-tails.test.ts's).
  data: Float64Array.from({ length: rows * cols }, (_, p) => {
    const q = (p * 7 + seed) % 23;
    return q === 0 ? -0 : q === 1 ? -1e30 : (q - 11) * 0.37 + seed * 1e-3;
  }),
});

describe('elementwise rows as one loop in the native library', () => {
  it('prints a map whose every access is its element as one loop over lo*k .. hi*k', () => {
    const loops = loopsOf(
      source('kernel m(X: dense<f32>[n, k]) -> (Y: dense<f32>[n, k]) { Y[i, j] = relu(X[i, j]); }'),
    );
    expect(loops).toHaveLength(1);
    expect(loops[0]).toMatch(
      /^for \(int j = \(int\)\(dy_lo\d+ \* k\), dy_end\d+ = \(int\)\(dy_hi\d+ \* k\); j < dy_end\d+;/,
    );
  });

  it('keeps the row loop where a value is read by its row or column alone (a broadcast), and for GEMM', () => {
    for (const src of [
      'kernel b(X: dense<f32>[n, k], c: dense<f32>[k]) -> (Y: dense<f32>[n, k]) { Y[i, j] = X[i, j] + c[j]; }',
      'kernel r(X: dense<f32>[n, k], s: dense<f32>[n]) -> (Y: dense<f32>[n, k]) { Y[i, j] = X[i, j] / s[i]; }',
      'kernel t(X: dense<f32>[k, n]) -> (Y: dense<f32>[n, k]) { Y[i, j] = X[j, i]; }',
    ]) {
      const loops = loopsOf(source(src));
      expect(loops, src).toHaveLength(2);
      expect(loops[0], src).toMatch(/^for \(int i = /);
    }
  });

  describe.skipIf(!haveCompiler())('equals the reference, and wasm bit for bit', () => {
    for (const t of ['f32', 'f64'] as const)
      it(`${t}: a two-input map at widths 1, 3, 4, 5, 8 and 17, at 1 and 2 threads`, async () => {
        const k = loopKernel(
          `kernel m(X: dense<${t}>[n, k], Z: dense<${t}>[n, k]) -> (Y: dense<${t}>[n, k]) { Y[i, j] = relu(X[i, j] - Z[i, j] * 0.5); }`,
        );
        const wasm = await compileWasm(k);
        const wasm2 = await createWasmExecutor(wasm.binary, wasm.manifest, { threads: 2 });
        const c = compileCpuKernel('flat_rows', k, null);
        try {
          for (const width of [1, 3, 4, 5, 8, 17]) {
            const n = 1031;
            const [X, Z] = [dense(n, width, 1), dense(n, width, 5)];
            const want = expectWasmMatches(wasm, { tensors: { X, Z } }, `${t} width ${width}`).get('Y')!;
            const inputs = {
              tensors: new Map<string, Tensor>([
                ['X', X],
                ['Z', Z],
              ]),
              scalars: new Map<string, number>(),
            };
            expectIdentical(wasm2.run(inputs).outputs.get('Y')!, want, `${t} width ${width}, wasm at 2 threads`);
            atThreads(c, [1, 2], inputs, (outputs, threads) =>
              expectIdentical(outputs.get('Y')!, want, `${t} width ${width}, ${threads} thread(s)`),
            );
          }
        } finally {
          c.build.cleanup();
          wasm.exec.close();
          wasm2.close();
        }
      });
  });
});
