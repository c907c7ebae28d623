/** Programs of the CUDA tests (an example or fixture through the default pipeline and lower-kernels) and writing their projects. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileProgram } from '../../cli/compile.js';
import type { CompiledProgram } from '../../codegen/project.js';
import { formatMatrixMarketArray } from '../../runtime/io/mtx-write.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export function exampleProgram(name: string): CompiledProgram {
  return compileProgram(`${ROOT}examples/${name}.dy`).program;
}

export function fixtureProgram(name: string): CompiledProgram {
  return compileProgram(`${ROOT}test/cuda/fixtures/${name}.dy`).program;
}

/** Writes a project's files (names may hold folders, e.g. emu/cuda_runtime_api.h) under dir. */
export function writeProject(dir: string, files: ReadonlyMap<string, string>): void {
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
}
