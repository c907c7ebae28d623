/** Programs of the CUDA tests (an example or fixture through the default pipeline and lower-kernels) and writing their projects. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileProgram } from '../../cli/compile.js';
import type { CompiledProgram } from '../../codegen/project.js';

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
