/**
 * Every example on real matrices from ../shared/data/matrices through wasm,
 * against the reference interpreter (tolerance in test/wasm/compare.ts: the
 * examples are f32, so |wasm - ref| <= 1e-4 * max(1, |ref|), non-finite
 * positions equal), and two runs bit-identical. Matrices: cora.cites (edge
 * list), Erdos971 (empty rows), adder_dcop_05 (one row holding most entries),
 * karate, west0479 (explicit zeros), and the rectangular lp_ship04l for
 * spmv/spmm. A declared csc and coo on Erdos971 too. One module per example
 * and format, compiled once. Skipped when the data directory is absent.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { toCoo, toCsc, toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { createWasmExecutor } from '../../runtime/wasm/executor.js';
import { exampleInputs as inputs } from '../helpers/example-inputs.js';
import { compileWasm, expectIdentical, expectWasmMatches, loopKernel, toMaps, type Compiled } from './compare.js';

const MATRIX_DIR = fileURLToPath(new URL('../../../shared/data/matrices/', import.meta.url));
const EXAMPLES_DIR = fileURLToPath(new URL('../../examples/', import.meta.url));
const HAVE_DATA = existsSync(MATRIX_DIR);
const SQUARE = ['cora.cites', 'Erdos971.mtx', 'adder_dcop_05.mtx', 'karate.mtx', 'west0479.mtx'];
const RECT = ['lp_ship04l.mtx'];
const EXAMPLES = ['spmv', 'spmm', 'gcn', 'attention', 'pagerank', 'sssp'];
const ANY_SHAPE = new Set(['spmv', 'spmm']);
type Fmt = 'csr' | 'csc' | 'coo';

describe.skipIf(!HAVE_DATA)('examples on real matrices: wasm equals the interpreter within tolerance', () => {
  const compiled = new Map<string, Compiled>();
  beforeAll(async () => {
    for (const ex of EXAMPLES)
      for (const f of ['csr', 'csc', 'coo'] as const) {
        const src = readFileSync(join(EXAMPLES_DIR, `${ex}.dy`), 'utf8').replaceAll('csr<', `${f}<`);
        compiled.set(`${ex}.${f}`, await compileWasm(loopKernel(src, `${ex}.dy`)));
      }
  });
  it('every example module is valid wasm', () => {
    expect(compiled.size).toBe(EXAMPLES.length * 3);
    for (const c of compiled.values()) expect(WebAssembly.validate(c.binary as Uint8Array<ArrayBuffer>)).toBe(true);
  });
  for (const file of [...SQUARE, ...RECT]) {
    describe(file, () => {
      const data = loadMatrix(join(MATRIX_DIR, file));
      const conv = { csr: toCsr, csc: toCsc, coo: toCoo } as const;
      const formats: Fmt[] = file === 'Erdos971.mtx' ? ['csr', 'csc', 'coo'] : ['csr'];
      for (const ex of EXAMPLES) {
        if (RECT.includes(file) && !ANY_SHAPE.has(ex)) continue;
        for (const f of formats) {
          it(`${ex} (${f})`, () => {
            expectWasmMatches(compiled.get(`${ex}.${f}`)!, inputs(ex, conv[f](data)), `${ex}/${file}/${f}`);
          });
        }
      }
    });
  }
});

describe.skipIf(!HAVE_DATA)('threads: results bit-identical at 1, 2 and 3 threads (rows split by nnz)', () => {
  for (const file of ['adder_dcop_05.mtx', 'cora.cites', 'lp_ship04l.mtx']) {
    it(file, async () => {
      const A = toCsr(loadMatrix(join(MATRIX_DIR, file)));
      for (const ex of EXAMPLES) {
        if (A.rows !== A.cols && !ANY_SHAPE.has(ex)) continue;
        const src = readFileSync(join(EXAMPLES_DIR, `${ex}.dy`), 'utf8');
        const c = await compileWasm(loopKernel(src, `${ex}.dy`));
        const want = c.exec.run(toMaps(inputs(ex, A))).outputs;
        for (const threads of [2, 3]) {
          const exec = await createWasmExecutor(c.binary, c.manifest, { threads });
          try {
            expect(exec.threads).toBe(threads);
            for (let run = 0; run < 2; run++) {
              const got = exec.run(toMaps(inputs(ex, A))).outputs;
              for (const [n, t] of want)
                expectIdentical(got.get(n)!, t, `${ex}/${file}: ${n} at ${threads} threads, run ${run}`);
            }
          } finally {
            exec.close();
          }
        }
      }
    });
  }
});
