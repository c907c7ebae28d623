/**
 * The examples as bench/gpu plans them in-process (prepare.ts's picks for the
 * generated matrices, fit.ts's prices): each compiled once per process, and
 * a job's bindings (its matrix A and, for SpMM, the dense width k).
 */
import { join } from 'node:path';
import { plannedSpec } from '../../codegen/implementations.js';
import { loadProgram, optimise, selectKernel } from '../../cli/program.js';
import type { Tensor } from '../../runtime/tensor.js';

export interface CompiledExample {
  kernel: ReturnType<typeof selectKernel>;
  spec: ReturnType<typeof plannedSpec>;
}

const compiled = new Map<string, CompiledExample>();

/** examples/<ex>.dy under `root`, compiled and optimised once. */
export function compiledExample(root: string, ex: string): CompiledExample {
  let c = compiled.get(ex);
  if (!c) {
    const file = join(root, 'examples', `${ex}.dy`);
    const module = optimise(loadProgram(file));
    const kernel = selectKernel(module, file, undefined);
    c = { kernel, spec: plannedSpec(module, file, kernel.name) };
    compiled.set(ex, c);
  }
  return c;
}

/** A job's tensors and scalars: its sparse matrix A, and k where the job has a dense width. */
export function jobBindings(
  a: Tensor,
  k: number | undefined,
): { tensors: Map<string, Tensor>; scalars: Map<string, number> } {
  return { tensors: new Map([['A', a]]), scalars: new Map(k === undefined ? [] : [['k', k]]) };
}
