/**
 * The row kernel of merge-path's SpMM form (codegen/cuda/merge.ts) takes an
 * output element a thread, a row's columns on neighbouring threads. With a
 * thread per row walking its columns one after another (a warp's loads rows
 * apart), the H200 took about 0.42 us a column whatever the rows (36 us at
 * K = 16, 84 us at K = 128 on 1,000-13,000-row matrices; docs/PERFORMANCE.md). The SpMV form keeps a row a thread. What both compute
 * is checked against the reference in emulate.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { emitCuda } from '../../codegen/cuda/emit.js';
import { exampleProgram, kernelText, stubText } from './helpers.js';

describe("merge-path's row kernel", () => {
  it('SpMM: an output element a thread over a grid-stride loop, launched only for a nonzero width', () => {
    const cu = emitCuda(exampleProgram('spmm')).get('spmm.cu')!;
    const rows = kernelText(cu, 'dy_spmm_op0_merge_path_rows');
    expect(rows).toContain('dy_x < dy_elems');
    expect(rows).toContain('(int)(dy_x - dy_r * dy_K)');
    // No loop over the columns is left in it.
    expect(rows).not.toMatch(/for \(int \w+ = 0[,;]/);
    const stub = stubText(cu, 'dype_spmm_spmm_op0_merge_path');
    expect(stub).toMatch(/if \(dy_K > 0\) DY_LAUNCH\(dy_spmm_op0_merge_path_rows, \(unsigned\)\(dy_fix_blocks/);
  });

  it('SpMV: a row a thread', () => {
    const cu = emitCuda(exampleProgram('spmv')).get('spmv.cu')!;
    const rows = kernelText(cu, 'dy_spmv_op0_merge_path_rows');
    expect(rows).toContain('for (long long dy_row =');
    expect(rows).not.toContain('dy_elems');
  });
});
