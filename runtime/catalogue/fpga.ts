/**
 * FPGA implementations: the HLS designs of codegen/hls (one per op, chosen
 * by its loop nest), with the throughputs of their default parameters
 * (runtime/plan/fpga-designs.ts) and their resource estimates, the only
 * resource figures the planner and the HLS projects use. The sparse-row
 * designs (SpMV, SpMM) are timed pass by pass with their PE imbalance
 * (fpga-rows.ts); the launch (XRT) is the device's launchOverheadUs.
 */
import { FPGA_DESIGN_DEFAULTS, fpgaDesignResources } from '../plan/fpga-designs.js';
import { MODEL, width } from '../plan/model.js';
import type { PlanOp } from '../plan/types.js';
import type { DeviceSpec } from '../system/types.js';
import { channelGBs, sparseRowsTime } from './fpga-rows.js';
import { FPGA_IMPL_DESIGN, type FpgaImpl } from './names.js';
import type { FpgaImplEntry } from './types.js';

const clock = (d: DeviceSpec): number => d.fpga!.clockMHz * 1e6;
/** Seconds to stream the op's bytes over all HBM channels, at the bandwidth the card sustains. */
const stream = (op: PlanOp, d: DeviceSpec): number => op.bytes / (d.fpga!.hbmChannels * channelGBs(d) * 1e9);
/** Host-side packing of the nonzeros into channel streams, seconds. */
const pack = (op: PlanOp): number => ((op.sparse?.nnz ?? 0) * MODEL.fpga.packNsPerNnz) / 1e9;
const macs = (op: PlanOp): number => (op.gathers > 0 ? op.gathers : op.flops / 2);

/**
 * A sparse-row design (Serpens-like SpMV, Sextans-like SpMM) over the op's
 * matrix; an op without one (a dense nest given this design) streams its
 * bytes. Its matrix goes over at most the card's channels.
 */
function sparseRows(design: 'spmv' | 'spmm') {
  return (op: PlanOp, d: DeviceSpec): number => {
    if (!op.sparse) return Math.max(macs(op) / MODEL.fpga.spmmMacsPerCycle / clock(d), stream(op, d)) * 1e3;
    const base = FPGA_DESIGN_DEFAULTS[design];
    const c = { ...base, channels: Math.min(base.channels, d.fpga!.hbmChannels) };
    return (
      (sparseRowsTime(c, op.sparse, design === 'spmm' ? width(op) : 1, clock(d), channelGBs(d)).total + pack(op)) * 1e3
    );
  };
}

const entry = (impl: FpgaImpl, summary: string, ms: FpgaImplEntry['ms']): FpgaImplEntry => {
  const design = FPGA_IMPL_DESIGN[impl];
  return {
    summary,
    design,
    ms: (op, d) => (d.fpga ? ms(op, d) : Infinity),
    resources: () => fpgaDesignResources(design),
  };
};

export const FPGA_CATALOGUE: Record<FpgaImpl, FpgaImplEntry> = {
  'serpens-spmv': entry(
    'serpens-spmv',
    'Serpens-style SpMV: nonzeros streamed over HBM channels into PEs at II=1',
    sparseRows('spmv'),
  ),
  'sextans-spmm': entry('sextans-spmm', 'Sextans-style SpMM: nonzeros x dense lanes', sparseRows('spmm')),
  'sddmm-dot': entry(
    'sddmm-dot',
    'SDDMM: a dense dot product per stored entry',
    (op, d) => (Math.max(macs(op) / MODEL.fpga.spmmMacsPerCycle / clock(d), stream(op, d)) + pack(op)) * 1e3,
  ),
  'systolic-gemm': entry(
    'systolic-gemm',
    'output-stationary 16 x 16 GEMM array',
    (op, d) => Math.max(op.flops / 2 / MODEL.fpga.gemmMacsPerCycle / clock(d), stream(op, d)) * 1e3,
  ),
  stream: entry(
    'stream',
    '8-lane elementwise stream',
    (op, d) => Math.max(op.items / (FPGA_DESIGN_DEFAULTS.stream.lanes * clock(d)), stream(op, d)) * 1e3,
  ),
  // Estimate: the loop nest as written, one operation per cycle.
  'loop-nest': entry(
    'loop-nest',
    'the loop nest itself, pipelined at II=1 in its innermost loop',
    (op, d) => Math.max(Math.max(op.items, op.flops) / clock(d), stream(op, d)) * 1e3,
  ),
};
