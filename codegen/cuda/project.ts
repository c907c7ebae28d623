/** The cuda target of `dype compile`: the files of emit.ts under out/cuda/. */
import type { CompileTarget, ProjectFiles, TargetContext } from '../project.js';
import { emitCuda } from './emit.js';

export const cudaTarget: CompileTarget = {
  name: 'cuda',
  async emit(ctx: TargetContext): Promise<ProjectFiles> {
    return emitCuda(ctx.program);
  },
};
