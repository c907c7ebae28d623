/**
 * The names of every implementation an op can run as, per device kind: the
 * words plan.json, the planner's stages, the native libraries' op_impls()
 * and the dispatcher share. Costs and resources of each live beside them in
 * this folder; which of them a compiled program actually has comes from the
 * emitters (PlanOpSpec.impls).
 */
import type { DeviceKind } from '../system/types.js';
import type { FpgaDesignName } from '../plan/fpga-designs.js';

/** CPU (wasm kernels): the op's top loop split across threads by stored entries, by rows, or not at all. */
export const CPU_IMPLS = ['nnz-split', 'row-split', 'serial'] as const;
/** GPU (generated CUDA): the schedules of codegen/cuda/variants.ts. */
export const GPU_IMPLS = [
  'adaptive-rows',
  'warp-per-row',
  'merge-path',
  'row-per-thread',
  'tiled',
  'elementwise',
  'block-reduce',
  'serial',
] as const;
/** FPGA (generated HLS): one design per op, chosen by codegen/hls/match.ts. */
export const FPGA_IMPLS = [
  'serpens-spmv',
  'sextans-spmm',
  'sddmm-dot',
  'systolic-gemm',
  'stream',
  'loop-nest',
] as const;

export type CpuImpl = (typeof CPU_IMPLS)[number];
export type GpuImpl = (typeof GPU_IMPLS)[number];
export type FpgaImpl = (typeof FPGA_IMPLS)[number];

export interface ImplByKind {
  cpu: CpuImpl;
  gpu: GpuImpl;
  fpga: FpgaImpl;
}
export type ImplName = ImplByKind[DeviceKind];

/** Every kind must appear: a new DeviceKind is a type error here until it has its list. */
export const IMPLEMENTATIONS: { readonly [K in DeviceKind]: readonly ImplByKind[K][] } = {
  cpu: CPU_IMPLS,
  gpu: GPU_IMPLS,
  fpga: FPGA_IMPLS,
};

/** The HLS design (templates, parameters, resource estimates) behind each FPGA implementation. */
export const FPGA_IMPL_DESIGN: Record<FpgaImpl, FpgaDesignName> = {
  'serpens-spmv': 'spmv',
  'sextans-spmm': 'spmm',
  'sddmm-dot': 'sddmm',
  'systolic-gemm': 'gemm',
  stream: 'stream',
  'loop-nest': 'generic',
};

export function fpgaImplOfDesign(d: FpgaDesignName): FpgaImpl {
  const hit = (Object.keys(FPGA_IMPL_DESIGN) as FpgaImpl[]).find((k) => FPGA_IMPL_DESIGN[k] === d);
  if (!hit) throw new Error(`internal: no FPGA implementation for design '${d}'`);
  return hit;
}

export function isImplOf<K extends DeviceKind>(kind: K, name: string): name is ImplByKind[K] {
  return (IMPLEMENTATIONS[kind] as readonly string[]).includes(name);
}

/** For exhaustive switches over device kinds: a kind nobody handles is a type error at the call. */
export function unhandledKind(k: never): never {
  throw new Error(`internal: device kind '${String(k)}' is not handled`);
}
