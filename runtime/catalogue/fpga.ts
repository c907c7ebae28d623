/**
 * FPGA implementations: the HLS designs of codegen/hls (one per op, chosen
 * by its loop nest), with the throughputs of their default parameters
 * (runtime/plan/fpga-designs.ts) and their resource estimates, the only
 * resource figures the planner and the HLS projects use.
 */
import { fpgaDesignResources } from '../plan/fpga-designs.js';
import { MODEL } from '../plan/model.js';
import type { PlanOp } from '../plan/types.js';
import type { DeviceSpec } from '../system/types.js';
import { FPGA_IMPL_DESIGN, type FpgaImpl } from './names.js';
import type { FpgaImplEntry } from './types.js';

const clock = (d: DeviceSpec): number => d.fpga!.clockMHz * 1e6;
/** Seconds to stream the op's bytes over the HBM channels. */
const stream = (op: PlanOp, d: DeviceSpec): number => op.bytes / (d.fpga!.hbmChannels * d.fpga!.channelBandwidthGBs * 1e9);
/** Host-side packing of the nonzeros into channel streams, seconds. */
const pack = (op: PlanOp): number => ((op.sparse?.nnz ?? 0) * MODEL.fpga.packNsPerNnz) / 1e9;
const macs = (op: PlanOp): number => (op.gathers > 0 ? op.gathers : op.flops / 2);

function serpens(op: PlanOp, d: DeviceSpec): number {
  const cycles = (op.sparse?.nnz ?? 0) / (MODEL.fpga.spmvNnzPerChannelCycle * Math.min(MODEL.fpga.matrixChannels, d.fpga!.hbmChannels));
  // The dense vector is read once per column window and the result written once: the streamed bytes.
  return (Math.max(cycles / clock(d), stream(op, d)) + pack(op)) * 1e3;
}

const entry = (impl: FpgaImpl, summary: string, ms: FpgaImplEntry['ms']): FpgaImplEntry => {
  const design = FPGA_IMPL_DESIGN[impl];
  return { summary, design, ms: (op, d) => (d.fpga ? ms(op, d) : Infinity), resources: () => fpgaDesignResources(design) };
};

export const FPGA_CATALOGUE: Record<FpgaImpl, FpgaImplEntry> = {
  'serpens-spmv': entry('serpens-spmv', 'Serpens-style SpMV: nonzeros streamed over HBM channels into PEs at II=1', serpens),
  'sextans-spmm': entry('sextans-spmm', 'Sextans-style SpMM: nonzeros x dense lanes', (op, d) => (Math.max(macs(op) / MODEL.fpga.spmmMacsPerCycle / clock(d), stream(op, d)) + pack(op)) * 1e3),
  'sddmm-dot': entry('sddmm-dot', 'SDDMM: a dense dot product per stored entry', (op, d) => (Math.max(macs(op) / MODEL.fpga.spmmMacsPerCycle / clock(d), stream(op, d)) + pack(op)) * 1e3),
  'systolic-gemm': entry('systolic-gemm', 'output-stationary 16 x 16 GEMM array', (op, d) => Math.max(op.flops / 2 / MODEL.fpga.gemmMacsPerCycle / clock(d), stream(op, d)) * 1e3),
  stream: entry('stream', '8-lane elementwise stream', (op, d) => Math.max(op.items / (8 * clock(d)), stream(op, d)) * 1e3),
  // Estimate: the loop nest as written, one operation per cycle.
  'loop-nest': entry('loop-nest', 'the loop nest itself, pipelined at II=1 in its innermost loop', (op, d) => Math.max(Math.max(op.items, op.flops) / clock(d), stream(op, d)) * 1e3),
};
