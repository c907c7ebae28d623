/**
 * The FPGA kernel designs of codegen/hls (templates in hls-templates/) as
 * plain numbers the planner can use: their default parameters (channels,
 * PEs, lanes, on-chip windows, how rows are dealt and vectors moved),
 * throughput (II=1 pipelines), clock, and LUT/FF/BRAM/URAM/DSP estimates.
 * The sparse-row designs' time as a function of data features is
 * runtime/catalogue/fpga-rows.ts.
 * It lives in runtime/ because the planner (runtime/plan/cost.ts) and a
 * generated runtime must read it without importing the compiler; the HLS
 * backend writes the same figures into each project's estimates.json.
 *
 * Resource figures are estimates from per-unit costs (below), not synthesis
 * reports: no Vitis exists where this was written.
 */
import type { ParameterTable } from './parameters.js';

export type FpgaDesignName = 'spmv' | 'spmm' | 'sddmm' | 'gemm' | 'stream' | 'generic';

export interface FpgaDesignConfig {
  /** HBM channels the sparse operand is streamed from (one m_axi bundle each). */
  channels: number;
  /** Processing elements per channel (nonzeros consumed per channel per cycle). */
  pesPerChannel: number;
  /** Dense lanes per PE: columns of the dense operand per nonzero (SpMM), dot-product lanes (SDDMM), PE columns (GEMM). */
  lanes: number;
  /** Rows accumulated on chip per lane (URAM), and columns of the dense operand held per window (BRAM). */
  rowSlots: number;
  colWindow: number;
  /** Latency of the accumulating adder: the host keeps equal rows this many slots apart. */
  addLatency: number;
  /** Largest inner dimension a GEMM / SDDMM keeps on chip. */
  maxInner: number;
  /** Clock the design is expected to close at (MHz), from published designs of its kind. */
  clockMHz: number;
  /** Initiation interval of the main pipeline. */
  ii: number;
  // Sparse-row designs (spmv, spmm): how the kernel deals rows out and moves its vectors.
  // Their cost is runtime/catalogue/fpga-rows.ts; the other designs leave these neutral.
  /** Dense-operand columns loaded into a PE's window per cycle (512-bit words: 16 floats). */
  xPerCycle: number;
  /** Whether the next window loads while the PEs stream the current one (ping-pong buffers). */
  pingPong: boolean;
  /** Result rows written per cycle. */
  yPerCycle: number;
  /** Whether a row tile clears every accumulator slot (the loop as written) or only the rows it holds. */
  clearsAllSlots: boolean;
  /** Whether long rows are split over all PEs (intra-row distribution): then no lane waits on its longest row. */
  sharesLongRows: boolean;
  /**
   * Share of the cyclic PE imbalance's excess (delta - 1) the design keeps:
   * 1 when rows are only dealt cyclically (Serpens, dype's template); below 1
   * when the design rebalances (HiSpMV's hybrid row distribution).
   */
  imbalanceExposure: number;
  /** Pipeline fill and drain per pass (row tile x column window x dense tile), cycles. */
  passOverheadCycles: number;
  /** Bytes streamed per nonzero: a 64-bit word of value, row slot and window column. */
  entryBytes: number;
}

export interface FpgaResources {
  lut: number;
  ff: number;
  bram: number;
  uram: number;
  dsp: number;
}

/** Neutral sparse-row fields for the designs that do not stream rows. */
const base = {
  addLatency: 8,
  ii: 1,
  xPerCycle: 1,
  pingPong: false,
  yPerCycle: 1,
  clearsAllSlots: true,
  sharesLongRows: false,
  imbalanceExposure: 1,
  passOverheadCycles: 100,
  entryBytes: 8,
};

/**
 * Default parameters: Serpens-like SpMV with 16 channels x 8 PEs, Sextans-like
 * SpMM with 8 channels x 8 PEs x 8 dense lanes (512 MACs per cycle), a 16 x 16
 * output-stationary GEMM array (256 MACs), 8-lane streams. The sparse-row
 * fields are the template as written (hls-templates/kernel/sparse_rows.cpp.hbs):
 * rows dealt cyclically to the lanes with nothing rebalanced, a row's entries
 * addLatency slots apart, one window column loaded per cycle before the
 * stream (no ping-pong), every accumulator slot cleared per tile, one result
 * row written per cycle.
 */
export const FPGA_DESIGN_DEFAULTS: Record<FpgaDesignName, FpgaDesignConfig> = {
  spmv: {
    ...base,
    channels: 16,
    pesPerChannel: 8,
    lanes: 1,
    rowSlots: 4096,
    colWindow: 4096,
    maxInner: 0,
    clockMHz: 225,
  },
  spmm: {
    ...base,
    channels: 8,
    pesPerChannel: 8,
    lanes: 8,
    rowSlots: 2048,
    colWindow: 1024,
    maxInner: 0,
    clockMHz: 190,
  },
  sddmm: {
    ...base,
    channels: 1,
    pesPerChannel: 1,
    lanes: 64,
    rowSlots: 0,
    colWindow: 0,
    maxInner: 1024,
    clockMHz: 250,
  },
  gemm: {
    ...base,
    channels: 1,
    pesPerChannel: 16,
    lanes: 16,
    rowSlots: 0,
    colWindow: 0,
    maxInner: 1024,
    clockMHz: 300,
  },
  stream: { ...base, channels: 1, pesPerChannel: 1, lanes: 8, rowSlots: 0, colWindow: 0, maxInner: 0, clockMHz: 300 },
  generic: { ...base, channels: 1, pesPerChannel: 1, lanes: 1, rowSlots: 0, colWindow: 0, maxInner: 0, clockMHz: 300 },
};

/** Per-unit costs: f32 multiplier and adder cores (full DSP), one 512-bit m_axi adapter, kernel control. */
export const FPGA_UNIT_COSTS = {
  fmul: { lut: 150, ff: 300, dsp: 3 },
  fadd: { lut: 400, ff: 600, dsp: 2 },
  laneControl: { lut: 300, ff: 450 },
  maxi: { lut: 2500, ff: 4000, bram: 8 },
  kernel: { lut: 5000, ff: 8000, bram: 4 },
  /** Bytes per BRAM36 and per URAM block. */
  bramBytes: 4608,
  uramBytes: 36864,
};
const UNIT = FPGA_UNIT_COSTS;

/**
 * Where the designs' parameters and the unit costs come from (docs/COST-MODEL.md
 * "Every model parameter"; test/eval/parameters.test.ts checks every leaf has an entry).
 */
export const FPGA_DESIGN_SOURCES: ParameterTable = {
  'FPGA_DESIGN_DEFAULTS.spmv': {
    unit: '-',
    kind: 'design',
    source:
      "dype's Serpens-style SpMV as its template is written (hls-templates/kernel/sparse_rows.cpp.hbs): 16 channels x 8 PEs, 4096 row slots per PE, 4096-column windows, rows dealt cyclically (dype_pack.h), one window column loaded and one result row written a cycle, loads before the stream, every slot cleared per tile",
    measuredOn: 'design',
  },
  'FPGA_DESIGN_DEFAULTS.spmm': {
    unit: '-',
    kind: 'design',
    source:
      "dype's Sextans-style SpMM as its template is written: 8 channels x 8 PEs x 8 dense lanes, 2048 row slots, 1024-column windows, the same vector paths as the SpMV",
    measuredOn: 'design',
  },
  'FPGA_DESIGN_DEFAULTS.sddmm': {
    unit: '-',
    kind: 'design',
    source: "dype's SDDMM design: a 64-lane dot product per stored entry, inner dimension up to 1024 on chip",
    measuredOn: 'design',
  },
  'FPGA_DESIGN_DEFAULTS.gemm': {
    unit: '-',
    kind: 'design',
    source: "dype's GEMM design: a 16 x 16 output-stationary array, inner dimension up to 1024 on chip",
    measuredOn: 'design',
  },
  'FPGA_DESIGN_DEFAULTS.stream': {
    unit: '-',
    kind: 'design',
    source: "dype's elementwise design: 8 lanes at II=1",
    measuredOn: 'design',
  },
  'FPGA_DESIGN_DEFAULTS.generic': {
    unit: '-',
    kind: 'design',
    source: "dype's generic design: the loop nest as written, pipelined at II=1 in its innermost loop",
    measuredOn: 'design',
  },
  'FPGA_DESIGN_DEFAULTS.*.entryBytes': {
    unit: 'bytes',
    kind: 'design',
    source:
      'the 64-bit packed word of value, row slot and window column (dype_pack.h; Serpens and HiSpMV pack the same)',
    measuredOn: 'design',
  },
  'FPGA_DESIGN_DEFAULTS.*.passOverheadCycles': {
    unit: 'cycles',
    kind: 'estimate',
    source:
      'estimate: pipeline fill and drain per pass (row tile x column window x dense tile) of the sparse-row designs',
    measuredOn: 'none',
  },
  'FPGA_DESIGN_DEFAULTS.*.clockMHz': {
    unit: 'MHz',
    kind: 'estimate',
    source:
      'estimate: the target clock written into each HLS project, from published designs of the kind (HiSpMV closes at 221-225 MHz on the U280)',
    measuredOn: 'none',
    notInEval:
      "the HLS projects' target clock (codegen/hls); the planner times every design at the card's fpga.clockMHz",
  },
  FPGA_UNIT_COSTS: {
    unit: 'LUT, FF, BRAM36, DSP per unit',
    kind: 'estimate',
    source:
      "estimate: per-unit resource costs of an f32 multiplier (3 DSPs) and adder (2 DSPs) in full-DSP floating-point cores, a lane's control, a 512-bit m_axi adapter and the kernel's control; not synthesis reports (no Vitis where this was written). Only FPGA feasibility (a stage's designs must fit one card) reads them",
    measuredOn: 'none',
  },
  'FPGA_UNIT_COSTS.bramBytes': {
    unit: 'bytes',
    kind: 'architecture',
    source: 'a BRAM36 block holds 36 Kb = 4608 bytes (AMD UltraScale+ memory resources, UG573)',
    measuredOn: 'UltraScale+ architecture',
  },
  'FPGA_UNIT_COSTS.uramBytes': {
    unit: 'bytes',
    kind: 'architecture',
    source: 'an UltraRAM block holds 288 Kb = 36864 bytes (AMD UltraScale+ memory resources, UG573)',
    measuredOn: 'UltraScale+ architecture',
  },
};

/** Multiply-accumulate units per cycle. */
export function macsPerCycle(d: FpgaDesignName, c: FpgaDesignConfig = FPGA_DESIGN_DEFAULTS[d]): number {
  return c.channels * c.pesPerChannel * c.lanes;
}

/** LUT/FF/BRAM/URAM/DSP of one design instance with the given parameters. */
export function fpgaDesignResources(d: FpgaDesignName, c: FpgaDesignConfig = FPGA_DESIGN_DEFAULTS[d]): FpgaResources {
  const macs = macsPerCycle(d, c);
  const pes = c.channels * c.pesPerChannel;
  const ports = d === 'spmv' || d === 'spmm' ? c.channels + 3 : d === 'gemm' || d === 'sddmm' ? 4 : 3;
  let bram = UNIT.kernel.bram + ports * UNIT.maxi.bram;
  let uram = 0;
  if (d === 'spmv' || d === 'spmm') {
    // Each PE keeps its own copy of the dense window (lanes wide) and its rows' accumulators.
    bram += pes * Math.ceil((c.colWindow * 4 * c.lanes) / UNIT.bramBytes);
    uram += pes * Math.ceil((c.rowSlots * 4 * c.lanes) / UNIT.uramBytes);
  } else if (d === 'gemm') {
    bram += 2 * c.lanes * Math.ceil((c.maxInner * 4) / UNIT.bramBytes);
  } else if (d === 'sddmm') {
    bram += 2 * Math.ceil((c.maxInner * 4) / UNIT.bramBytes);
  }
  const arith = d === 'stream' || d === 'generic' ? c.lanes : macs;
  return {
    lut: UNIT.kernel.lut + ports * UNIT.maxi.lut + arith * (UNIT.fmul.lut + UNIT.fadd.lut + UNIT.laneControl.lut),
    ff: UNIT.kernel.ff + ports * UNIT.maxi.ff + arith * (UNIT.fmul.ff + UNIT.fadd.ff + UNIT.laneControl.ff),
    bram,
    uram,
    dsp: arith * (UNIT.fmul.dsp + UNIT.fadd.dsp),
  };
}
