/**
 * Implementations for hand-made and generated PlanOps in planner tests:
 * what the emitters produce for a typical op of each kind (a sparse op gets
 * the three CUDA row schedules and its Serpens/Sextans design, a GEMM the
 * tiled schedule and the systolic array, ...). Compiled programs get theirs
 * from codegen/implementations.ts; this stand-in exists only for synthetic
 * problems, which have no loop nests to ask.
 */
import type { OpImpls } from '../../runtime/catalogue/index.js';

export function typicalImpls(kind: string): OpImpls {
  switch (kind) {
    case 'spmv':
    case 'reduce':
      return {
        cpu: ['nnz-split'],
        gpu: ['adaptive-rows', 'warp-per-row', 'merge-path', 'row-per-thread'],
        fpga: ['serpens-spmv'],
      };
    case 'spmm':
      return {
        cpu: ['nnz-split'],
        gpu: ['adaptive-rows', 'warp-per-row', 'merge-path', 'row-per-thread'],
        fpga: ['sextans-spmm'],
      };
    case 'sddmm':
      return { cpu: ['nnz-split'], gpu: ['warp-per-row', 'merge-path', 'row-per-thread'], fpga: ['sddmm-dot'] };
    case 'gemm':
      return { cpu: ['row-split'], gpu: ['tiled', 'warp-per-row', 'row-per-thread'], fpga: ['systolic-gemm'] };
    case 'gemv':
    case 'contract':
      return { cpu: ['row-split'], gpu: ['warp-per-row', 'row-per-thread'], fpga: ['systolic-gemm'] };
    default:
      return { cpu: ['row-split'], gpu: ['elementwise', 'row-per-thread'], fpga: ['stream'] };
  }
}
