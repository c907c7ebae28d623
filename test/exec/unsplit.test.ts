/**
 * A stage split over several instances names each op that ran on one of them
 * (`unsplit`: an op with nothing to split) once, however many trips of a
 * repeat ran it; it listed the op once per trip. GPUs are loopback wasm
 * memories (test/helpers/loopback.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuardedRuntime } from '../../runtime/engine/runtime.js';
import { closeBackends, WasmStageBackend, type StageBackends } from '../../runtime/exec/index.js';
import type { GuardPlan } from '../../runtime/guards/types.js';
import { loadSystemFile } from '../../runtime/system/load.js';
import type { CsrMatrix } from '../../runtime/tensor.js';
import { specOf } from '../helpers/compile.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { loopback } from '../helpers/loopback.js';
import { fixedPlan, throughputConfig } from '../guards/runtime-fixture.js';
import { compileWasm, loopKernel } from '../wasm/compare.js';
import { join } from 'node:path';

const SRC = `kernel k(A: csr<f32>[n, n], x0: dense<f32>[n]) -> (x: dense<f32>[n], s: f32) {
  x[i] = x0[i];
  s = sum(i: x[i]);
  repeat 5 { x[i] = 0.5 * A[i, j] * x[j] + 0.1; s = sum(i: x[i]); }
}`;

describe('unsplit ops of a split stage', () => {
  let backends: StageBackends;
  let plan: GuardPlan;
  let config: ReturnType<typeof throughputConfig>;
  beforeAll(async () => {
    const kernel = loopKernel(SRC, 'k.dy');
    const spec = specOf(SRC, 'k.dy');
    const c = await compileWasm(kernel);
    c.exec.close();
    backends = {
      cpu: await WasmStageBackend.create(c.binary, c.manifest),
      gpu: await loopback('gpu', c.binary, c.manifest, 2),
    };
    plan = fixedPlan([{ start: 0, end: spec.ops.length, device: 'gpu', count: 2 }]);
    config = throughputConfig(kernel, spec, c.manifest, plan);
  });
  afterAll(() => closeBackends(backends));

  it('are named once each, not once per trip', async () => {
    const sys = loadSystemFile(join(REPO_ROOT, 'systems', 'paper-2g2f.json'));
    const rt = createGuardedRuntime(config, { system: sys, backends });
    // A ring of 8 vertices.
    const n = 8;
    const A: CsrMatrix = {
      format: 'csr',
      rows: n,
      cols: n,
      rowPtr: Int32Array.from({ length: n + 1 }, (_, i) => i),
      colIdx: Int32Array.from({ length: n }, (_, i) => (i + 1) % n),
      values: new Float64Array(n).fill(1),
    };
    const r = await rt.run({ A, x0: { format: 'dense', shape: [n], data: new Float64Array(n).fill(1) } });
    const unsplit = r.stages.flatMap((s) => s.unsplit);
    // The scalar sums (before and inside the loop) have no rows to split.
    expect(unsplit.length).toBeGreaterThan(0);
    expect(new Set(unsplit).size).toBe(unsplit.length);
    rt.close();
  });
});
