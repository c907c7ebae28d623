/** Runs a compiled native CPU library (codegen/cpu/compile.ts) at each thread count, closing each executor. */
import type { CompiledCpuKernel } from '../../codegen/cpu/compile.js';
import { createNativeCpuExecutor } from '../../runtime/native/cpu-executor.js';
import type { Tensor } from '../../runtime/tensor.js';

export function atThreads(
  c: CompiledCpuKernel,
  counts: readonly number[],
  inputs: { tensors: Map<string, Tensor>; scalars: Map<string, number> },
  each: (outputs: Map<string, Tensor>, threads: number) => void,
): void {
  for (const threads of counts) {
    const ex = createNativeCpuExecutor(c.build.path, c.manifest, { threads, program: c.program, programHash: c.hash });
    try {
      each(ex.run(inputs).outputs, threads);
    } finally {
      ex.close();
    }
  }
}
