/**
 * What follows a column block's entry loop in the native library
 * (codegen/cpu/lanes.ts), printed so that gcc still vectorises the block.
 *
 * relu in the native library (codegen/cpu/cprint.ts `dy_relu_f32`,
 * `dy_relu_f64`: integer operations on the bits, so that gcc vectorises a
 * column block whose accumulators it wraps). On the lanes of SpMM's column
 * blocks (a width of 40: a block of 32 or 16 lanes written out, then the
 * rest), every special value comes out as the wasm backend's relu gives it,
 * bit for bit: +0 for -0, negatives, the smallest subnormals and -inf; x for
 * +0, positives and +inf; NaN for NaN of either sign. The identity pattern makes each
 * output the relu of one value of B.
 */
import { describe, expect, it } from 'vitest';
import { compileCpuKernel } from '../../codegen/cpu/compile.js';
import { cpuLibrarySource } from '../../codegen/cpu/library.js';
import { wasmManifest } from '../../codegen/wasm/emit.js';
import { generatedMatrix } from '../../runtime/generate.js';
import { atThreads } from '../helpers/native-run.js';
import type { Kernel } from '../../ir/module.js';
import type { CsrMatrix, DenseTensor, Tensor } from '../../runtime/tensor.js';
import { haveCompiler } from '../helpers/cc.js';
import { compileWasm, expectIdentical, loopKernel } from '../wasm/compare.js';

/** A NaN with its sign bit set (relu keeps it: the test on the sign alone would give +0). */
const NEG_NAN = new Float64Array(BigUint64Array.of(0xfff8000000000000n).buffer)[0]!;

const SPECIAL = [
  NEG_NAN,
  0,
  -0,
  1,
  -1,
  2.5,
  -2.5,
  Infinity,
  -Infinity,
  NaN,
  1e-45,
  -1e-45,
  5e-324,
  -5e-324,
  3.4e38,
  -3.4e38,
  1e300,
  -1e300,
  Number.MIN_VALUE,
  -Number.MAX_VALUE,
];

/** The kernel's output `out` from its native library at 1 and 2 threads: wasm's bits, then `check` of it. */
async function againstWasm(
  k: Kernel,
  inputs: { tensors: Map<string, Tensor>; scalars: Map<string, number> },
  out: string,
  what: string,
  check: (got: Tensor) => void = () => {},
): Promise<void> {
  const wasm = await compileWasm(k);
  const want = wasm.exec.run(inputs).outputs.get(out)!;
  wasm.exec.close();
  const c = compileCpuKernel('lane_tails', k, null);
  try {
    atThreads(c, [1, 2], inputs, (outputs, threads) => {
      const got = outputs.get(out)!;
      expectIdentical(got, want, `${what}, ${threads} thread(s)`);
      check(got);
    });
  } finally {
    c.build.cleanup();
  }
}

describe.skipIf(!haveCompiler())('column block tails in the native library', () => {
  for (const t of ['f32', 'f64'] as const)
    it(`${t}: every special value as wasm gives it, on full blocks and the rest of a row of 40`, async () => {
      const k = loopKernel(
        `kernel r(A: csr<${t}>[n, n], B: dense<${t}>[n, h]) -> (Y: dense<${t}>[n, h]) { Y[i, c] = relu(A[i, j] * B[j, c]); }`,
      );
      const n = 300;
      const h = 40;
      const A: CsrMatrix = {
        format: 'csr',
        rows: n,
        cols: n,
        rowPtr: Int32Array.from({ length: n + 1 }, (_, i) => i),
        colIdx: Int32Array.from({ length: n }, (_, i) => i),
        values: new Float64Array(n).fill(1),
      };
      const B: DenseTensor = {
        format: 'dense',
        shape: [n, h],
        data: Float64Array.from({ length: n * h }, (_, q) => SPECIAL[(q * 7 + (q >> 5)) % SPECIAL.length]!),
      };
      const inputs = {
        tensors: new Map<string, Tensor>([
          ['A', A],
          ['B', B],
        ]),
        scalars: new Map<string, number>(),
      };
      await againstWasm(k, inputs, 'Y', `${t} relu`, (got) => {
        const y = (got as DenseTensor).data;
        const b = B.data;
        const f = t === 'f32' ? Math.fround : (x: number) => x;
        for (let q = 0; q < y.length; q++) {
          const x = f(b[q]!);
          const r = y[q]!;
          if (Number.isNaN(x)) expect(Number.isNaN(r), `relu(NaN) at ${q}`).toBe(true);
          else if (x > 0) expect(r, `relu(${x}) at ${q}`).toBe(x);
          else expect(Object.is(r, 0), `relu(${x}) at ${q} is +0`).toBe(true);
        }
      });
    });

  it('a value that loads (E @ V / s[i]) is computed for every lane before the stores, with wasm bits at 1 and 2 threads', async () => {
    const k = loopKernel(
      'kernel t(E: csr<f32>[n, n], V: dense<f32>[n, d], s: dense<f32>[n]) -> (O: dense<f32>[n, d]) { O[i, c] = sum(j: E[i, j] * V[j, c]) / s[i]; }',
    );
    const source = cpuLibrarySource('t', 'test', [{ kernel: k, manifest: wasmManifest(k, [], true) }]);
    // In the copy for d = 32, its block of 32 lanes: the 32 values, then the stores.
    const w32 = source.slice(source.indexOf('static void dy_f0_w32('), source.indexOf('static void dy_f0_w64('));
    const beforeStores = w32.slice(0, w32.indexOf('O['));
    expect(beforeStores.match(/const float dy_v\d+ = \(dy_a\d+_acc0_\d+ \/ s\[i\]\);/g)).toHaveLength(32);
    const n = 700;
    const E = generatedMatrix(n, 6, false, 9);
    for (const d of [32, 40, 7]) {
      const inputs = {
        tensors: new Map<string, Tensor>([
          ['E', E],
          [
            'V',
            {
              format: 'dense',
              shape: [n, d],
              data: Float64Array.from({ length: n * d }, (_, q) => ((q * 13) % 23) / 7 - 1.5),
            },
          ],
          ['s', { format: 'dense', shape: [n], data: Float64Array.from({ length: n }, (_, i) => 0.5 + (i % 9)) }],
        ]),
        scalars: new Map<string, number>(),
      };
      await againstWasm(k, inputs, 'O', `E @ V / s at d = ${d}`);
    }
  });
});
