/**
 * cli/calibrate.ts calibrationOps: a recorded timing's matrix and kernel, by
 * the names `dype calibrate --json` gives them, back to the planner's bound
 * ops (what bench/calibrate-refit.ts refits recorded sets from).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { calibrationKernel } from '../../cli/calibrate-dense.js';
import { calibrationOps, PROGRAMS, type ProgramName } from '../../cli/calibrate.js';
import type { PlanSpec } from '../../runtime/plan/types.js';
import { MATRIX_DIR } from '../io/data.js';

const planned = new Map<ProgramName, PlanSpec>();
beforeAll(async () => {
  for (const name of Object.keys(PROGRAMS) as ProgramName[])
    planned.set(name, (await calibrationKernel(name, PROGRAMS[name], 'wasm', [])).spec);
});

describe('calibrationOps', () => {
  it('binds a generated ladder matrix under each kernel label', () => {
    const spmv = calibrationOps(planned, 'random-1000x2', 'spmv', MATRIX_DIR)!;
    expect(spmv.A.rows).toBe(1000);
    expect(spmv.ops.map((o) => [o.kind, o.sparse?.nnz])).toEqual([['spmv', spmv.A.values.length]]);
    const spmm = calibrationOps(planned, 'banded-4000x8', 'spmm16', MATRIX_DIR)!;
    expect(spmm.ops.map((o) => [o.kind, o.gathers])).toEqual([['spmm', 16 * spmm.A.values.length]]);
    const sddmm = calibrationOps(planned, 'skewed-4000x4', 'sddmm16', MATRIX_DIR)!;
    expect(sddmm.ops.map((o) => o.kind)).toEqual(['sddmm']);
    // The quick ladder's names too.
    expect(calibrationOps(planned, 'random-2000x16', 'spmm32', MATRIX_DIR)?.A.rows).toBe(2000);
  });

  it.skipIf(!existsSync(join(MATRIX_DIR, 'ca-GrQc.mtx')))('reads a real matrix of the fit or the held-out set', () => {
    expect(calibrationOps(planned, 'ca-GrQc', 'spmv', MATRIX_DIR)?.A.rows).toBe(5242);
    expect(calibrationOps(planned, 'facebook_combined', 'spmm4', MATRIX_DIR)?.A.rows).toBe(4039);
  });

  it('gives undefined for a name or label calibrate does not make', () => {
    for (const [matrix, kernel] of [
      ['random-7x7', 'spmv'],
      ['karate', 'spmv'],
      ['random-1000x2', 'spmv16'],
      ['random-1000x2', 'spmm'],
      ['random-1000x2', 'gemm16'],
    ])
      expect(calibrationOps(planned, matrix!, kernel!, MATRIX_DIR), `${matrix} ${kernel}`).toBeUndefined();
  });
});
