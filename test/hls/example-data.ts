/**
 * Inputs and checks shared by the C-simulation tests of the examples
 * (csim.test.ts: the host program; abi.test.ts: the ABI library): the input
 * files of an example for one real matrix (random dense operands with fixed
 * seeds, a column-stochastic PageRank matrix, an SSSP start), the reference
 * interpreter's result on the very files the C++ side read, and the
 * comparison: |hls - ref| <= 1e-4 * max(1, |ref|), non-finite values equal
 * (the kernels compute f32 in f32, with a row's nonzeros accumulated in the
 * order the host schedules them; the interpreter in float64).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { interpretKernel } from '../../interp/interpret.js';
import type { Kernel } from '../../ir/module.js';
import { toCsr, toDense } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { formatMatrixMarketArray, formatMatrixMarketCoordinate } from '../../runtime/io/mtx-write.js';
import { Rng, seedFor } from '../../runtime/random.js';
import type { CsrMatrix, DenseTensor, Tensor } from '../../runtime/tensor.js';
import { example, runCliAsync } from '../helpers/cli.js';
import { compileModule, pickKernel } from '../helpers/interp-run.js';

export const MATRIX_DIR = fileURLToPath(new URL('../../../shared/data/matrices/', import.meta.url));
export const HAVE_GXX = spawnSync('g++', ['--version']).status === 0;
export const HAVE_DATA = existsSync(MATRIX_DIR);
const TOL = 1e-4;
const SEED = 20240612;

function rand(shape: number[], name: string): DenseTensor {
  const rng = new Rng(seedFor(SEED, name));
  const data = new Float64Array(shape.reduce((a, b) => a * b, 1));
  for (let k = 0; k < data.length; k++) data[k] = rng.uniform(-1, 1);
  return { format: 'dense', shape, data };
}

function columnStochastic(A: CsrMatrix): CsrMatrix {
  const sums = new Float64Array(A.cols);
  for (let k = 0; k < A.colIdx.length; k++) sums[A.colIdx[k]!]! += Math.abs(A.values[k]!);
  return {
    ...A,
    values: Float64Array.from(A.values, (v, k) => (sums[A.colIdx[k]!]! > 0 ? v / sums[A.colIdx[k]!]! : v)),
  };
}

/** Input files for one example and matrix (written into `dir`), and the scalars. */
export function exampleInputs(
  ex: string,
  A: CsrMatrix,
  dir: string,
  matrixPath: string,
): { files: Record<string, string>; params: Record<string, number> } {
  const n = A.cols;
  const files: Record<string, string> = { A: matrixPath };
  const dense: Record<string, DenseTensor> = {};
  const params: Record<string, number> = {};
  switch (ex) {
    case 'spmv':
      dense.x = rand([n, 1], 'x');
      break;
    case 'spmm':
      dense.B = rand([n, 4], 'B');
      break;
    case 'gcn':
      Object.assign(dense, { X: rand([n, 8], 'X'), W1: rand([8, 8], 'W1'), W2: rand([8, 4], 'W2') });
      break;
    case 'attention':
      Object.assign(dense, { Q: rand([n, 4], 'Q'), K: rand([n, 4], 'K'), V: rand([n, 4], 'V') });
      break;
    case 'pagerank': {
      const P = columnStochastic(A);
      files.A = join(dir, 'A.mtx');
      writeFileSync(files.A, formatMatrixMarketCoordinate(P, 'real'));
      dense.r0 = { format: 'dense', shape: [n, 1], data: new Float64Array(n).fill(1 / n) };
      params.d = 0.85;
      break;
    }
    case 'sssp': {
      // |A|: a negative cycle would keep `until d stable` going to its maximum.
      files.A = join(dir, 'A.mtx');
      writeFileSync(
        files.A,
        formatMatrixMarketCoordinate({ ...A, values: Float64Array.from(A.values, Math.abs) }, 'real'),
      );
      const d0 = new Float64Array(A.rows).fill(Infinity);
      d0[0] = 0;
      dense.d0 = { format: 'dense', shape: [A.rows, 1], data: d0 };
      break;
    }
  }
  for (const [name, t] of Object.entries(dense)) {
    files[name] = join(dir, `${name}.mtx`);
    writeFileSync(files[name]!, formatMatrixMarketArray(t, 'real'));
  }
  return { files, params };
}

/** The example's kernel (after the default pipeline) and its first result's name. */
export function exampleKernel(ex: string): { kernel: Kernel; out: string } {
  const kernel = pickKernel(compileModule(readFileSync(example(`${ex}.dy`), 'utf8'), `${ex}.dy`));
  return { kernel, out: kernel.results[0]!.name };
}

/** The command-line arguments of a host program or ABI check for these inputs. */
export function hostArgs(
  files: Record<string, string>,
  params: Record<string, number>,
  out: string,
  outPath: string,
): string[] {
  return [
    ...Object.entries(files).flatMap(([k, v]) => ['--in', `${k}=${v}`]),
    '--out',
    `${out}=${outPath}`,
    ...Object.entries(params).flatMap(([k, v]) => ['--param', `${k}=${v}`]),
  ];
}

/** The reference interpreter's result, reading the very files the C++ side read. */
export function referenceResult(
  kernel: Kernel,
  out: string,
  files: Record<string, string>,
  params: Record<string, number>,
): Tensor {
  const tensors = new Map<string, Tensor>();
  for (const p of kernel.params) {
    if (p.type.shape.length === 0) continue;
    const m = loadMatrix(files[p.name]!);
    if (p.type.format !== 'dense') tensors.set(p.name, toCsr(m));
    else {
      const d = toDense(m);
      tensors.set(p.name, p.type.shape.length === 1 ? { ...d, shape: [d.data.length] } : d);
    }
  }
  return interpretKernel(kernel, { tensors, scalars: new Map(Object.entries(params)) }).outputs.get(out)!;
}

/** A dense Matrix Market array as written by the host (nan allowed: 0/0 of an empty row is the reference's answer too). */
export function readArray(path: string): Float64Array {
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('%'));
  const [r, c] = lines[0]!.split(/\s+/).map(Number) as [number, number];
  const out = new Float64Array(r * c);
  for (let q = 0; q < r * c; q++) {
    const t = lines[1 + q]!.trim();
    const v = t === 'nan' ? NaN : t === 'inf' ? Infinity : t === '-inf' ? -Infinity : Number(t);
    out[(q % r) * c + Math.floor(q / r)] = v;
  }
  return out;
}

/** The written dense result against the reference, within the tolerance. */
export function expectCloseToReference(name: string, data: Float64Array, ref: Tensor): void {
  expect(ref.format).toBe('dense');
  const b = (ref as DenseTensor).data;
  expect(data.length, `${name}: length`).toBe(b.length);
  let worst = 0;
  for (let k = 0; k < b.length; k++) {
    const [x, y] = [data[k]!, b[k]!];
    if (!Number.isFinite(y) || !Number.isFinite(x)) {
      expect(Object.is(x, y) || (Number.isNaN(x) && Number.isNaN(y)), `${name}[${k}]: ${x} vs ${y}`).toBe(true);
      continue;
    }
    worst = Math.max(worst, Math.abs(x - y) / Math.max(1, Math.abs(y)));
  }
  expect(worst, `${name}: worst relative error`).toBeLessThanOrEqual(TOL);
}

export function loadCsr(file: string): CsrMatrix {
  return toCsr(loadMatrix(join(MATRIX_DIR, file)));
}

/**
 * Writes each example's project with the BUILT cli (`dype hls`, so the templates must be found from dist/) into
 * `work/<example>` and then runs `build` on it, two examples at a time (the two cores).
 */
export async function eachProject(
  examples: readonly string[],
  work: string,
  build: (ex: string, proj: string) => Promise<void>,
): Promise<void> {
  const queue = [...examples];
  const worker = async (): Promise<void> => {
    for (let ex = queue.shift(); ex !== undefined; ex = queue.shift()) {
      const proj = join(work, ex);
      const r = await runCliAsync(['hls', example(`${ex}.dy`), '-o', proj], { timeoutMs: 60_000 });
      if (r.status !== 0 || r.stderr !== '') throw new Error(`dype hls ${ex}: ${r.stderr}`);
      await build(ex, proj);
    }
  };
  await Promise.all([worker(), worker()]);
}
