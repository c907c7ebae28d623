/**
 * `dype compile` builds guards twice from the same --profile files (the
 * runtime and the report targets); the matrices are read once per compile,
 * and the guards come out as they would from a fresh read.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileProgram } from '../../cli/compile.js';
import type { TargetContext } from '../../codegen/project.js';
import { buildKernelGuards } from '../../codegen/runtime/project.js';
import { matrices, root } from '../guards/fixtures.js';
import { goal } from '../helpers/goal.js';

describe('buildKernelGuards across the targets of one compile', () => {
  it('reads each profile matrix once and builds the same guards', () => {
    const { program } = compileProgram(join(root, 'examples', 'spmv.dy'));
    const ctx = (): TargetContext => ({
      program,
      system: 'paper-1g1f',
      goal: goal('throughput'),
      profiles: [{ name: 'A', path: join(matrices, 'karate.mtx') }],
      outDir: '',
    });
    const shared = ctx();
    const o = { perProfile: 4 };
    const first = buildKernelGuards(shared, o).kernels[0]!;
    const second = buildKernelGuards(shared, { ...o, target: 'report' }).kernels[0]!;
    const fresh = buildKernelGuards(ctx(), o).kernels[0]!;
    const feats = (k: typeof first) => k.profiles.bindings[0]!.sparse.get('A');
    expect(feats(second)).toBe(feats(first));
    expect(feats(fresh)).not.toBe(feats(first));
    expect(feats(fresh)).toEqual(feats(first));
    expect(second.plans).toEqual(fresh.plans);
  });
});
