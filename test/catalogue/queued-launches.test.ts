/**
 * The catalogue prices the launches and memsets a GPU schedule queues after
 * its first (QUEUED_AFTER_FIRST, runtime/catalogue/gpu.ts); this holds the
 * count against the generated CUDA stubs of every sparse op of the examples,
 * so a stub that gains or loses a launch fails here until the catalogue says so.
 * adaptive-rows queues its long-row pass only where the longest row can be
 * long (queuedAfterFirst; the stubs' test is test/cuda/adaptive-long.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { plannedSpec } from '../../codegen/implementations.js';
import { emitCuda } from '../../codegen/cuda/emit.js';
import { lowerKernelsPass } from '../../passes/lower-kernels.js';
import { QUEUED_AFTER_FIRST, queuedAfterFirst } from '../../runtime/catalogue/gpu.js';
import type { GpuImpl } from '../../runtime/catalogue/names.js';
import { bindProblem } from '../../runtime/plan/bind.js';
import type { PlanOp, SparseFeatures } from '../../runtime/plan/types.js';
import { exampleProgram } from '../cuda/helpers.js';
import { optimised } from '../helpers/compile.js';

/** Each op stub of a program's .cu: its variant and the stream operations it queues (the scalar path of SpMM stubs). */
function stubs(program: string): { name: string; variant: GpuImpl; queued: number }[] {
  const files = emitCuda(exampleProgram(program));
  const cu = files.get(`${program}.cu`)!;
  const out: { name: string; variant: GpuImpl; queued: number }[] = [];
  for (const m of cu.matchAll(/^extern "C" int (dype_\w+_op\d+_(\w+))\(.*\{\n([\s\S]*?)^\}\n/gm)) {
    const variant = m[2]!.replace(/_/g, '-') as GpuImpl;
    if (!(variant in QUEUED_AFTER_FIRST)) continue;
    // A stub with a 16-byte vector path launches either it or the scalar one: count the scalar path.
    const launches = [...m[3]!.matchAll(/DY_LAUNCH\((\w+)/g)].filter((l) => !/_vec(_|$)/.test(l[1]!)).length;
    const memsets = [...m[3]!.matchAll(/cudaMemsetAsync\(/g)].length;
    out.push({ name: m[1]!, variant, queued: launches + memsets });
  }
  return out;
}

describe('queued launches of the GPU schedules', () => {
  for (const program of ['spmv', 'spmm', 'pagerank', 'sssp', 'gcn']) {
    it(`${program}: every sparse stub queues 1 + QUEUED_AFTER_FIRST operations`, () => {
      const found = stubs(program);
      expect(found.length).toBeGreaterThan(0);
      for (const s of found)
        expect({ stub: s.name, queued: s.queued }).toEqual({ stub: s.name, queued: 1 + QUEUED_AFTER_FIRST[s.variant] });
    });
  }
});

const root = join(import.meta.dirname, '..', '..');

/** The op of examples/<name>.dy (spmv or spmm) bound to a matrix of these features. */
function opOf(name: 'spmv' | 'spmm', f: SparseFeatures): PlanOp {
  const file = `examples/${name}.dy`;
  const module = lowerKernelsPass.run(optimised(readFileSync(join(root, file), 'utf8')));
  const dims =
    name === 'spmv'
      ? [
          ['m', f.rows],
          ['n', f.cols],
        ]
      : [
          ['m', f.rows],
          ['n', f.cols],
          ['k', 32],
        ];
  return bindProblem(plannedSpec(module, file, name), {
    sparse: new Map([['A', f]]),
    dims: new Map(dims as [string, number][]),
    scalars: new Map(),
  }).ops[0]!;
}

const rows = (mean: number, max: number): SparseFeatures => ({
  rows: 10_000,
  cols: 10_000,
  nnz: mean * 10_000,
  rowLenMean: mean,
  rowLenMax: max,
  rowLenCv: 0.5,
  emptyRowFraction: 0,
  top1PctNnzShare: 0.02,
  localityScore: 0.5,
});

describe("adaptive-rows' long-row pass in the model", () => {
  it('SpMV: queued only past 32 steps of the lanes a mean row gets (4 entries: 4 lanes, 128 entries)', () => {
    expect(queuedAfterFirst('adaptive-rows', opOf('spmv', rows(4, 128)))).toBe(0);
    expect(queuedAfterFirst('adaptive-rows', opOf('spmv', rows(4, 129)))).toBe(QUEUED_AFTER_FIRST['adaptive-rows']);
  });
  it('SpMM: queued only past 1024 entries, whatever the lanes', () => {
    expect(queuedAfterFirst('adaptive-rows', opOf('spmm', rows(4, 1024)))).toBe(0);
    expect(queuedAfterFirst('adaptive-rows', opOf('spmm', rows(4, 1025)))).toBe(QUEUED_AFTER_FIRST['adaptive-rows']);
  });
  it('the other schedules queue what they always queue', () => {
    for (const impl of Object.keys(QUEUED_AFTER_FIRST) as GpuImpl[])
      if (impl !== 'adaptive-rows')
        expect(queuedAfterFirst(impl, opOf('spmv', rows(4, 5000)))).toBe(QUEUED_AFTER_FIRST[impl]);
  });
  it("every adaptive-rows stub guards its memset and its second launch by the caller's longest figure", () => {
    let stubs = 0;
    let long = 0;
    for (const program of ['spmv', 'spmm', 'gcn']) {
      const cu = emitCuda(exampleProgram(program)).get(`${program}.cu`)!;
      for (const m of cu.matchAll(/^extern "C" int (dype_\w+_adaptive_rows)\(.*\{\n([\s\S]*?)^\}\n/gm)) {
        const body = m[2]!;
        stubs++;
        long += [...body.matchAll(/DY_LAUNCH\(\w+_long,/g)].length;
        expect(body, m[1]).toMatch(
          /if \(dy_longest <= 0 \|\| \(long long\)dy_longest > [^\n]*\{\n[^}]*cudaMemsetAsync/,
        );
        for (const l of body.matchAll(/^(.*)\n\s*DY_LAUNCH\(\w+_long,/gm))
          expect(l[1]!.trim(), m[1]).toBe('if (dy_count != nullptr)');
      }
    }
    expect(stubs).toBeGreaterThanOrEqual(3);
    expect(long).toBeGreaterThanOrEqual(stubs);
  });
});
