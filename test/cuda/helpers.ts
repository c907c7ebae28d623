/** Programs of the CUDA tests (an example or fixture through the default pipeline and lower-kernels) and writing their projects. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileProgram } from '../../cli/compile.js';
import { emitCuda } from '../../codegen/cuda/emit.js';
import type { CompiledProgram } from '../../codegen/project.js';
import { formatMatrixMarketArray } from '../../runtime/io/mtx-write.js';
import { run } from './nvcc.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export function exampleProgram(name: string): CompiledProgram {
  return compileProgram(`${ROOT}examples/${name}.dy`).program;
}

export function fixtureProgram(name: string): CompiledProgram {
  return compileProgram(`${ROOT}test/cuda/fixtures/${name}.dy`).program;
}

/** The text of one __global__ function of a generated .cu file (empty where there is none: a test's expect fails on it). */
export function kernelText(cu: string, name: string): string {
  const at = cu.indexOf(` ${name}(`);
  return at < 0 ? '' : cu.slice(at, cu.indexOf('\n}\n', at));
}

/** The launch stub of one variant in a generated .cu file (empty where there is none). */
export function stubText(cu: string, name: string): string {
  const at = cu.indexOf(`extern "C" int ${name}(`);
  return at < 0 ? '' : cu.slice(at, cu.indexOf('\n}\n', at));
}

/** Writes a project's files (names may hold folders, e.g. emu/cuda_runtime_api.h) under dir. */
export function writeProject(dir: string, files: ReadonlyMap<string, string | Uint8Array>): void {
  for (const [f, text] of files) {
    const p = join(dir, f);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, text);
  }
}

/** A seeded linear congruential generator of values in [0, 1] rounded to 4 decimals (so 1 itself may come). */
export function lcg(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return Math.round((s / 2147483648) * 1e4) / 1e4;
  };
}

/** A dense rows x cols Matrix Market array of values in [-1, 1] (or [0, 1] when nonneg). */
export function denseMtx(rows: number, cols: number, rnd: () => number, nonneg = false): string {
  const data = new Float64Array(rows * cols);
  for (let k = 0; k < data.length; k++) {
    const u = rnd();
    data[k] = nonneg ? u : 2 * u - 1;
  }
  return formatMatrixMarketArray({ format: 'dense', shape: [rows, cols], data }, 'real');
}

/** One program run on one matrix by a checking driver: its input files, params and outputs. */
export interface Job {
  prog: string;
  matrix: string;
  inputs: Record<string, string>;
  params: string[];
  outs: string[];
  /** What the driver reads instead of `inputs` (the same values in other files: NumPy arrays). */
  driverInputs?: Record<string, string>;
  /** The driver reads the references as float64 .npy arrays (converted from dype's Matrix Market). */
  npyRefs?: boolean;
}

/** A little-endian NumPy .npy file (format 1.0, C order) of float32, float64 or int32 values. */
export function writeNpy(path: string, shape: readonly number[], data: Float32Array | Float64Array | Int32Array): void {
  const descr = data instanceof Float32Array ? '<f4' : data instanceof Float64Array ? '<f8' : '<i4';
  const dims = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${dims}, }`;
  // Magic, version and length take 10 bytes; the header pads with spaces to a multiple of 64 and ends in a newline.
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  writeFileSync(
    path,
    Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]),
  );
}

/** A CSR matrix as the .csr folder of .npy arrays dype_check reads (rowPtr, colIdx int32; vals float32; cols). */
export function writeCsrDir(
  path: string,
  m: { rows: number; cols: number; rowPtr: Int32Array; colIdx: Int32Array; values: Float64Array },
): void {
  mkdirSync(path, { recursive: true });
  writeNpy(join(path, 'rowPtr.npy'), [m.rows + 1], m.rowPtr);
  writeNpy(join(path, 'colIdx.npy'), [m.colIdx.length], m.colIdx);
  writeNpy(join(path, 'vals.npy'), [m.values.length], Float32Array.from(m.values));
  writeFileSync(join(path, 'cols'), `${m.cols}\n`);
}

/**
 * Writes the examples' kernels (`<ex>.cu`, its header, the emulation and the ABI header) into `dir` and builds
 * test/cuda/fixtures/`fixture` against them on the CPU emulation as `exe`; returns g++'s status and output.
 */
export async function buildEmuFixture(
  dir: string,
  examples: readonly string[],
  fixture: string,
  exe: string,
): Promise<{ status: number | null; output: string }> {
  for (const ex of examples) {
    const files = emitCuda(exampleProgram(ex));
    const wanted = [`${ex}.cu`, `${ex}_cuda.h`, 'emu/cuda_runtime_api.h', 'dype_abi.h'];
    writeProject(dir, new Map(wanted.map((f) => [f, files.get(f)!])));
  }
  const src = join(ROOT, 'test/cuda/fixtures', fixture);
  return run('g++', ['-std=c++17', '-O1', '-DDYPE_CUDA_EMU', '-Iemu', '-I.', '-o', exe, src], dir);
}
