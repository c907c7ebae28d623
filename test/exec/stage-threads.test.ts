/**
 * What a partition's CPU stage runs each op on (runtime/engine/execute.ts
 * stagePlans with the input's bound problem): the count the system's CPU
 * model prices lowest (cpuThreadsFor), as `dype run` picks it; device stages
 * carry none; without a problem the backend's threads stand.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { plannedSpec } from '../../codegen/implementations.js';
import { compileSource } from '../../frontend/compile.js';
import { DEFAULT_PIPELINE, runPipeline } from '../../passes/index.js';
import { cpuThreadsFor } from '../../runtime/catalogue/index.js';
import { stagePlans } from '../../runtime/engine/execute.js';
import { sparseFeaturesOf } from '../../runtime/guards/index.js';
import { toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { bindProblem } from '../../runtime/plan/bind.js';
import { evaluateChoices } from '../../runtime/plan/dp.js';
import { loadSystemFile } from '../../runtime/system/load.js';
import { STEADY } from '../helpers/goal.js';

const root = join(import.meta.dirname, '..', '..');
const M = join(root, '..', 'shared', 'data', 'matrices');
const module = runPipeline(compileSource(readFileSync(join(root, 'examples', 'spmv.dy'), 'utf8'), 'spmv.dy').module!, {
  passes: [...DEFAULT_PIPELINE, 'lower-kernels'],
});
const spec = plannedSpec(module, 'spmv.dy', module.kernels[0]!.name);

function problemOf(file: string) {
  const A = toCsr(loadMatrix(join(M, file)));
  return bindProblem(spec, {
    sparse: new Map([['A', sparseFeaturesOf(A, 2)]]),
    dims: new Map([
      ['m', A.rows],
      ['n', A.cols],
    ]),
    scalars: new Map(),
  });
}

describe.skipIf(!existsSync(M))('threads per op of a CPU stage', () => {
  it("this machine's fitted model: karate's SpMV on one thread, bcsstk33's on two; none without a problem", () => {
    const sys = loadSystemFile(join(root, 'systems', 'this-machine.json'));
    const cpu = sys.devices.find((d) => d.kind === 'cpu')!;
    const part = { choices: [{ start: 0, end: spec.ops.length, device: cpu.id, count: 1 }] };
    for (const [file, want] of [
      ['karate.mtx', 1],
      ['bcsstk33.mtx', 2],
    ] as const) {
      const problem = problemOf(file);
      const m = evaluateChoices(sys, problem, part.choices, STEADY)!;
      const [stage] = stagePlans(sys, spec, part, m, problem);
      expect(stage!.threads, file).toEqual({ op0: want });
      expect(cpuThreadsFor(problem.ops[0]!, cpu)).toBe(want);
      expect(stagePlans(sys, spec, part, m)[0]!.threads).toBeUndefined();
    }
  });

  it('a GPU stage carries no thread counts', () => {
    const sys = loadSystemFile(join(root, 'systems', 'paper-1g1f.json'));
    const gpu = sys.devices.find((d) => d.kind === 'gpu')!;
    const part = { choices: [{ start: 0, end: spec.ops.length, device: gpu.id, count: 1 }] };
    const problem = problemOf('karate.mtx');
    const [stage] = stagePlans(sys, spec, part, evaluateChoices(sys, problem, part.choices, STEADY)!, problem);
    expect(stage!.kind).toBe('gpu');
    expect(stage!.threads).toBeUndefined();
  });
});
