/**
 * `dype compile` builds guards for two targets from the same --profile
 * files (the runtime and the report targets); the matrices are read and the
 * guards fitted once per compile, and come out as from a fresh build.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileProgram } from '../../cli/compile.js';
import type { TargetContext } from '../../codegen/project.js';
import { buildKernelGuards } from '../../codegen/runtime/project.js';
import { matrices, root } from '../guards/fixtures.js';
import { goal } from '../helpers/goal.js';

describe('buildKernelGuards across the targets of one compile', () => {
  it('reads each profile matrix and fits the guards once, as a fresh build would', () => {
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
    const first = buildKernelGuards(shared, o);
    const second = buildKernelGuards(shared, { ...o, target: 'report' });
    const other = buildKernelGuards(shared, { perProfile: 3 });
    const fresh = buildKernelGuards(ctx(), o);
    const feats = (b: typeof first) => b.kernels[0]!.profiles.bindings[0]!.sparse.get('A');
    // The report target gets the runtime target's build; other fitting options fit again from the same features.
    expect(second).toBe(first);
    expect(other).not.toBe(first);
    expect(feats(other)).toBe(feats(first));
    expect(feats(fresh)).not.toBe(feats(first));
    expect(feats(fresh)).toEqual(feats(first));
    expect(second.kernels[0]!.plans).toEqual(fresh.kernels[0]!.plans);
  });
});
