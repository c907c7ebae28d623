/** Programs of the CUDA tests: an example or fixture through the default pipeline and lower-kernels. */
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
