/**
 * The wasm target of `dype compile`: per kernel `<kernel>.wasm` (validated,
 * optimised, shared memory for threads) and `<kernel>.manifest.json`, which
 * runtime/wasm reads to lay out buffers and run the ops in program order.
 */
import type { CompileTarget, ProjectFiles, TargetContext } from '../project.js';
import { emitWasm } from './emit.js';

export const wasmTarget: CompileTarget = {
  name: 'wasm',
  async emit(ctx: TargetContext): Promise<ProjectFiles> {
    const files: ProjectFiles = new Map();
    for (const k of ctx.program.module.kernels) {
      const { binary, manifest } = await emitWasm(k);
      files.set(`${k.name}.wasm`, binary);
      files.set(`${k.name}.manifest.json`, `${JSON.stringify(manifest, null, 2)}\n`);
    }
    return files;
  },
};
