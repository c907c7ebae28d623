/**
 * The wasm emitter's two-cursor row loop (codegen/cpu/pairs.ts, codegen/wasm/emit.ts `pairedFor`): a module
 * printed with it and one without (`pairs: false`) give the same bits for SpMV, PageRank and SSSP (f32 and
 * f64) on matrices whose rows are long enough for it (a skewed one, whose halves split far from the middle row,
 * and one with rows of 0 to 40 entries and an odd count) and on one whose rows are not; the two modules differ,
 * and both equal the reference interpreter.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PAIR_MIN_ENTRIES } from '../../codegen/cpu/pairs.js';
import { emitWasm } from '../../codegen/wasm/emit.js';
import { interpretKernel } from '../../interp/interpret.js';
import type { CsrMatrix } from '../../runtime/tensor.js';
import { createWasmExecutor } from '../../runtime/wasm/executor.js';
import { exampleInputs } from '../helpers/example-inputs.js';
import { expectClose, expectIdentical, loopKernel, TOL_F32, TOL_F64, toMaps } from './compare.js';

const EXAMPLES = new URL('../../examples/', import.meta.url);

function csr(lens: readonly number[]): CsrMatrix {
  const rows = lens.length;
  const rowPtr = new Int32Array(rows + 1);
  for (let i = 0; i < rows; i++) rowPtr[i + 1] = rowPtr[i]! + lens[i]!;
  const colIdx = new Int32Array(rowPtr[rows]!);
  for (let i = 0; i < rows; i++) {
    for (let p = rowPtr[i]!; p < rowPtr[i + 1]!; p++) colIdx[p] = (i + (p - rowPtr[i]!) * 5) % rows;
    colIdx.subarray(rowPtr[i]!, rowPtr[i + 1]!).sort();
  }
  const values = Float64Array.from(colIdx, (c, p) => ((c * 13 + p) % 11) / 4 - 1 + 1e-7 * p);
  return { format: 'csr', rows, cols: rows, rowPtr, colIdx, values };
}

const MATRICES: [string, CsrMatrix, boolean][] = [
  ['skewed', csr(Array.from({ length: 777 }, (_, i) => (i < 35 ? 250 : 1 + (i % 3)))), true],
  ['mixed', csr(Array.from({ length: 601 }, (_, i) => (i % 89 === 0 ? 0 : 5 + ((i * 7919) % 36)))), true],
  ['short', csr(Array.from({ length: 500 }, (_, i) => 1 + (i % 5))), false],
];

describe('wasm: rows by two cursors', () => {
  for (const ex of ['spmv', 'pagerank', 'sssp'])
    for (const dtype of ['f32', 'f64'] as const)
      it(`${ex} ${dtype}: the same bits with and without the two cursors, and the reference`, async () => {
        let src = readFileSync(new URL(`${ex}.dy`, EXAMPLES), 'utf8');
        if (dtype === 'f64') src = src.replaceAll('f32', 'f64');
        const kernel = loopKernel(src, `${ex}.dy`);
        const on = await emitWasm(kernel, { pairs: true });
        const off = await emitWasm(kernel, { pairs: false });
        expect(Buffer.from(on.binary).equals(Buffer.from(off.binary))).toBe(false);
        const withPairs = await createWasmExecutor(on.binary, on.manifest);
        const without = await createWasmExecutor(off.binary, off.manifest);
        for (const [name, A, long] of MATRICES) {
          expect(A.values.length / A.rows >= PAIR_MIN_ENTRIES).toBe(long);
          const inputs = exampleInputs(ex, A);
          const want = interpretKernel(kernel, toMaps(inputs)).outputs;
          const a = withPairs.run(toMaps(inputs)).outputs;
          const b = without.run(toMaps(inputs)).outputs;
          for (const [out, t] of want) {
            expectIdentical(a.get(out)!, b.get(out)!, `${ex} ${dtype} ${name}: ${out}`);
            expectClose(a.get(out)!, t, dtype === 'f32' ? TOL_F32 : TOL_F64, `${ex} ${dtype} ${name}: ${out}`);
          }
        }
      });
});
