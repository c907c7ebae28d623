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
  /** Latency the kernel pins on its accumulating adder (BIND_OP latency=), cycles. */
  faddLatency: number;
  /** Read latency of the accumulator memory (URAM, BIND_STORAGE latency=), cycles. */
  accReadLatency: number;
  /**
   * The accumulator's read-add-write chain, accSpacing(faddLatency, accReadLatency):
   * the kernel declares this dependence distance and the host keeps equal rows this many slots apart.
   */
  addLatency: number;
  /** Largest inner dimension a GEMM / SDDMM keeps on chip. */
  maxInner: number;
  /** Clock the design is expected to close at (MHz), from published designs of its kind. */
  clockMHz: number;
  /** Initiation interval of the main pipeline. */
  ii: number;
  // Sparse-row designs (spmv, spmm): how the kernel deals rows out and moves its vectors.
  // Their cost is runtime/catalogue/fpga-rows.ts; the other designs leave these neutral.
  /** Dense-operand columns loaded into a PE's window per cycle: the columns one window word holds (dype's: 2, 64 bits). */
  xPerCycle: number;
  /**
   * How window loads and the stream share time: 'serial', each window's
   * colWindow columns load before its stream; 'overlap', the window's real
   * columns load into one of two buffers while the other streams (dype's
   * template: only the first window and what the streams do not cover show);
   * 'hispmv', HiSpMV's estimator for its ping-pong buffers, min(load, stream).
   */
  windowLoads: WindowLoads;
  /** Result rows written per cycle. */
  yPerCycle: number;
  /** Whether a row tile clears every accumulator slot (the loop as written) or only the rows it holds. */
  clearsAllSlots: boolean;
  /**
   * What a row longer than its lane's share costs: 'lane', its entries stay on
   * one lane addLatency cycles apart; 'fold', up to sharedRows rows a tile go
   * to partial slots of every lane, folded into the row after the tile's
   * stream (foldCycles, dype's template); 'tree', every long row is split over
   * the PEs and summed in the pipeline (HiSpMV's intra-row distribution).
   */
  longRows: LongRowDeal;
  /** Rows a tile may share over all lanes (their partial slots per lane), with longRows 'fold'. */
  sharedRows: number;
  /**
   * Share of the cyclic PE imbalance's excess (delta - 1) the design keeps:
   * 1 when rows are only dealt cyclically (Serpens, dype's template); below 1
   * when the design rebalances (HiSpMV's hybrid row distribution).
   */
  imbalanceExposure: number;
  /** Where a PE's window of the dense operand lives: UltraRAM (a 4096-column window in one block) or BRAM. */
  windowStorage: 'uram' | 'bram';
  /** Pipeline fill and drain per pass (row tile x column window x dense tile), cycles. */
  passOverheadCycles: number;
  /** Bytes streamed per nonzero: a 64-bit word of value, row slot and window column. */
  entryBytes: number;
}

export type LongRowDeal = 'lane' | 'fold' | 'tree';
export type WindowLoads = 'serial' | 'overlap' | 'hispmv';

/**
 * Fill of the fold's pipelines (clear, the channels' folds, the write-back's merge tree over the channels),
 * cycles; dype_share.h FOLD_FILL_CYCLES. An estimate: the merge tree is log2(channels) adders of faddLatency
 * deep, the fold a URAM read and an add.
 */
export const FOLD_FILL_CYCLES = 48;

/** PE parts of a shared row a channel folds a cycle (sparse_rows.cpp.hbs _FOLD_W; dype_share.h FOLD_W). */
export const FOLD_PES_PER_CYCLE = 2;

/**
 * Cycles a 'fold' design spends on n shared rows of a tile, per dense tile:
 * clearing their partial slots (n); every channel at once folding its PEs'
 * parts, FOLD_PES_PER_CYCLE of one row a cycle into the row's running sum,
 * which is taken up again at least addLatency cycles later
 * (pesPerChannel / FOLD_PES_PER_CYCLE x max(n, addLatency)); the write-back
 * merging the channels' sums of one row a cycle through an adder tree (n);
 * and the pipelines' fill. The host packer weighs sharing with the same
 * formula (hls-templates/host/dype_share.h fold_cycles;
 * test/hls/cycle-model.test.ts holds the two equal).
 */
export function foldCycles(c: FpgaDesignConfig, n: number): number {
  return n > 0 ? 2 * n + (c.pesPerChannel / FOLD_PES_PER_CYCLE) * Math.max(n, c.addLatency) + FOLD_FILL_CYCLES : 0;
}

export interface FpgaResources {
  lut: number;
  ff: number;
  bram: number;
  uram: number;
  dsp: number;
}

/**
 * Cycles between two updates of one accumulator slot that the hardware needs:
 * the memory read, the adder, the write-back. The generated kernel derives
 * its dependence distance from the same two latencies (the _ADD_LATENCY
 * macro), and the host packer spaces equal slots by it.
 */
export const accSpacing = (faddLatency: number, accReadLatency: number): number => accReadLatency + faddLatency + 1;

/** f32 adder latency pinned in the sparse-row and GEMM kernels; URAM read latency of the accumulators. */
const FADD_LATENCY = 5;
const ACC_READ_LATENCY = 2;

/** Neutral sparse-row fields for the designs that do not stream rows. */
const base = {
  faddLatency: FADD_LATENCY,
  accReadLatency: ACC_READ_LATENCY,
  addLatency: accSpacing(FADD_LATENCY, ACC_READ_LATENCY),
  ii: 1,
  xPerCycle: 1,
  windowLoads: 'serial' as WindowLoads,
  yPerCycle: 1,
  clearsAllSlots: true,
  longRows: 'lane' as LongRowDeal,
  sharedRows: 0,
  imbalanceExposure: 1,
  windowStorage: 'bram' as 'uram' | 'bram',
  passOverheadCycles: 100,
  entryBytes: 8,
};

/**
 * Default parameters: Serpens-like SpMV with 16 channels x 8 PEs (x windows
 * in UltraRAM), Sextans-like SpMM with 4 channels x 8 PEs x 8 dense lanes
 * (256 MACs per cycle: two instances and two GEMMs, a GCN, fit one U280
 * with its shell; resources counted per partition bank), a 16 x 16
 * output-stationary GEMM array (256 MACs), 8-lane streams. The sparse-row
 * fields are the template as written (hls-templates/kernel/sparse_rows.cpp.hbs):
 * rows dealt cyclically to the lanes, a row's entries addLatency slots apart,
 * except up to 16 long rows a tile shared over all lanes and folded after the
 * tile's stream (where the packer finds that shorter), a window's real
 * columns loaded two a cycle (one 64-bit word) into one half of its buffer
 * while the other half streams, only the tile's own rows cleared (all lanes a cycle) and written
 * back, 512 bits a cycle (16 SpMV rows, 2 SpMM rows of 8 lanes).
 */
export const FPGA_DESIGN_DEFAULTS: Record<FpgaDesignName, FpgaDesignConfig> = {
  spmv: {
    ...base,
    channels: 16,
    pesPerChannel: 8,
    lanes: 1,
    rowSlots: 4080,
    colWindow: 4096,
    xPerCycle: 2,
    maxInner: 0,
    clockMHz: 225,
    clearsAllSlots: false,
    yPerCycle: 16,
    windowStorage: 'uram',
    longRows: 'fold',
    sharedRows: 16,
    windowLoads: 'overlap',
  },
  spmm: {
    ...base,
    channels: 4,
    pesPerChannel: 8,
    lanes: 8,
    rowSlots: 2048,
    colWindow: 1024,
    xPerCycle: 2,
    maxInner: 0,
    clockMHz: 190,
    clearsAllSlots: false,
    yPerCycle: 2,
    longRows: 'fold',
    sharedRows: 16,
    windowLoads: 'overlap',
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
  /** A FIFO bit 32 entries deep: one SRL32 LUT (HLS maps shallow streams to shift registers). */
  fifoLutPerBit32: 1,
  /**
   * The U280 platform shell (static region: PCIe, XDMA, HBM and DDR
   * controllers, and the dynamic region's interconnect), counted once per
   * bitstream against the card's resources.
   */
  shell: { lut: 180_000, ff: 280_000, bram: 200, uram: 0, dsp: 4 },
  /**
   * 32-bit words one block holds at full depth: a BRAM36 as 1K x 36, an UltraRAM as 4K x 72 (one
   * word a row: a deeper array cascades more blocks whatever its bytes).
   */
  bramWords32: 1024,
  uramWords32: 4096,
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
      "dype's Serpens-style SpMV as its template is written (hls-templates/kernel/sparse_rows.cpp.hbs): 16 channels x 8 PEs, 4080 row slots and 16 shared-row parts per PE (one 4096-deep UltraRAM), 4096-column windows double-buffered in UltraRAM (two halves of two-column words in one block a lane, two columns loaded a cycle), rows dealt cyclically (dype_pack.h) but for up to 16 long rows a tile shared over all lanes and folded after the stream (dype_share.h), a window's real columns loaded into one half while the other streams, only the tile's rows cleared (all lanes a cycle) and written back 16 a cycle (512 bits)",
    measuredOn: 'design',
  },
  'FPGA_DESIGN_DEFAULTS.spmm': {
    unit: '-',
    kind: 'design',
    source:
      "dype's Sextans-style SpMM as its template is written: 4 channels x 8 PEs x 8 dense lanes (so that a GCN's two SpMM and two GEMM instances fit a U280 with its shell: DY6207), 2048 row slots, 1024-column windows in BRAM (two halves of two-column words, the next window loading two columns a cycle while one streams), up to 16 long rows a tile shared over all lanes, result rows written 2 a cycle (512 bits)",
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
  'FPGA_DESIGN_DEFAULTS.*.faddLatency': {
    unit: 'cycles',
    kind: 'estimate',
    source:
      'estimate: the latency pinned on the f32 accumulating adder (BIND_OP impl=fulldsp latency=5); Vitis HLS schedules a full-DSP f32 add in 4 to 8 cycles at 225-300 MHz, and a pinned figure makes the kernel and the host agree on it',
    measuredOn: 'none',
    notInEval: 'the planner reads addLatency, computed from it once when the module loads',
  },
  'FPGA_DESIGN_DEFAULTS.*.accReadLatency': {
    unit: 'cycles',
    kind: 'estimate',
    source:
      'estimate: the URAM read latency pinned on the accumulators (BIND_STORAGE latency=2: the output register UltraRAM needs to meet timing, UG573)',
    measuredOn: 'none',
    notInEval: 'the planner reads addLatency, computed from it once when the module loads',
  },
  'FPGA_DESIGN_DEFAULTS.*.addLatency': {
    unit: 'cycles',
    kind: 'computed',
    source:
      'computed: the read-add-write chain of one accumulator slot, accReadLatency + faddLatency + 1; the dependence distance the kernel declares and the spacing the host packer keeps',
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
  'FPGA_UNIT_COSTS.fifoLutPerBit32': {
    unit: 'LUT per bit per 32 entries',
    kind: 'architecture',
    source:
      'a SLICEM LUT is a 32-deep shift register (SRL32) of one bit (AMD UltraScale CLB user guide, UG574); HLS implements shallow streams as SRL FIFOs',
    measuredOn: 'UltraScale+ architecture',
  },
  'FPGA_UNIT_COSTS.shell': {
    unit: 'LUT, FF, BRAM36, URAM, DSP',
    kind: 'estimate',
    source:
      "estimate: the Alveo U280 gen3x16 XDMA platform's shell (static region and the dynamic region's interconnect to 32 HBM pseudo-channels), about 14% of the card's LUTs and 10% of its BRAM; not a synthesis report (no Vitis where this was written)",
    measuredOn: 'none',
    notInEval: "feasibility only: whether a stage's kernels fit one card; no time reads it",
  },
  FPGA_UNIT_COSTS: {
    unit: 'LUT, FF, BRAM36, DSP per unit',
    kind: 'estimate',
    source:
      "estimate: per-unit resource costs of an f32 multiplier (3 DSPs) and adder (2 DSPs) in full-DSP floating-point cores, a lane's control, a 512-bit m_axi adapter and the kernel's control; not synthesis reports (no Vitis where this was written). Only FPGA feasibility (a stage's designs must fit one card) reads them",
    measuredOn: 'none',
  },
  'FPGA_UNIT_COSTS.bramWords32': {
    unit: '32-bit words',
    kind: 'architecture',
    source: 'a BRAM36 block configured 1K x 36 holds 1,024 words of 32 bits (AMD UltraScale+ memory resources, UG573)',
    measuredOn: 'UltraScale+ architecture',
  },
  'FPGA_UNIT_COSTS.uramWords32': {
    unit: '32-bit words',
    kind: 'architecture',
    source:
      'an UltraRAM block is 4K x 72 with a fixed aspect ratio, so it holds 4,096 words of 32 bits; a deeper array cascades blocks (AMD UltraScale+ memory resources, UG573)',
    measuredOn: 'UltraScale+ architecture',
  },
};

/**
 * Depths of the sparse-row designs' streams (hls-templates/kernel/sparse_rows.cpp.hbs; codegen/hls sizes them
 * from here): step ranges, packed words and step lengths per channel; window words from the loader to each
 * channel and a tile's slot sums from each channel to the write-back (32: one SRL32 deep, so the loader runs a
 * burst ahead and a channel goes on to its next tile while the write-back writes the last 32 slots); shared rows and their sums.
 */
export const SPARSE_ROW_STREAMS = { range: 4, words: 64, len: 4, share: 16, window: 32, slot: 32, part: 16 } as const;

/** LUTs of a design's FIFOs (SRL shift registers: bits x ceil(depth / 32)). */
function fifoLuts(d: FpgaDesignName, c: FpgaDesignConfig): number {
  if (d !== 'spmv' && d !== 'spmm') return 0;
  const srl = (bits: number, depth: number): number => bits * Math.ceil(depth / 32) * UNIT.fifoLutPerBit32;
  const S = SPARSE_ROW_STREAMS;
  // Per channel: a range stream (two int32), a word stream (pesPerChannel 64-bit entries), a length stream, a
  // window stream (xPerCycle columns of each dense lane; one dense operand) and a slot stream (a slot's sums of
  // every PE and dense lane). With shared rows, per channel their numbers and sums, and the numbers once more for
  // the write-back.
  const perChannel =
    srl(64, S.range) +
    srl(64 * c.pesPerChannel, S.words) +
    srl(32, S.len) +
    srl(32 * c.xPerCycle * c.lanes, S.window) +
    srl(32 * c.pesPerChannel * c.lanes, S.slot) +
    (c.longRows === 'fold' ? srl(32, S.share) + srl(32 * c.lanes, S.part) : 0);
  return c.channels * perChannel + (c.longRows === 'fold' ? srl(32, S.share) : 0);
}

/** Multiply-accumulate units per cycle. */
export function macsPerCycle(d: FpgaDesignName, c: FpgaDesignConfig = FPGA_DESIGN_DEFAULTS[d]): number {
  return c.channels * c.pesPerChannel * c.lanes;
}

/**
 * What one bitstream needs: the shell once, and every kernel instance (one
 * per op: two SpMM ops are two instances) with its FIFOs. The planner's
 * feasibility check and the HLS project's legality check both count this.
 */
export function fpgaProjectResources(instances: readonly FpgaResources[]): FpgaResources {
  const use: FpgaResources = { ...UNIT.shell };
  for (const r of instances) for (const k of RESOURCE_KINDS) use[k] += r[k];
  return use;
}

export const RESOURCE_KINDS = ['lut', 'ff', 'bram', 'uram', 'dsp'] as const;

/** The first resource `use` exceeds on a card with `have`, or undefined when it fits. */
export function resourceOverflow(
  use: FpgaResources,
  have: FpgaResources,
): { kind: keyof FpgaResources; need: number; have: number } | undefined {
  for (const k of RESOURCE_KINDS) if (use[k] > have[k]) return { kind: k, need: use[k], have: have[k] };
  return undefined;
}

/** LUT/FF/BRAM/URAM/DSP of one design instance with the given parameters, its FIFOs included. */
export function fpgaDesignResources(d: FpgaDesignName, c: FpgaDesignConfig = FPGA_DESIGN_DEFAULTS[d]): FpgaResources {
  const macs = macsPerCycle(d, c);
  const pes = c.channels * c.pesPerChannel;
  // m_axi ports: a sparse-row design's channels, its step table, one dense operand and the result. An epilogue's
  // further dense operands (a bias; SSSP's d[i], read through a second port of the window's buffer since one port
  // serves one dataflow process) are each one more adapter that this count leaves out (the planner does not see
  // the epilogue; UNIT.maxi is about 0.2% of a U280's LUTs).
  const ports = d === 'spmv' || d === 'spmm' ? c.channels + 3 : d === 'gemm' || d === 'sddmm' ? 4 : 3;
  let bram = UNIT.kernel.bram + ports * UNIT.maxi.bram;
  let uram = 0;
  if (d === 'spmv' || d === 'spmm') {
    // Each PE keeps its own copy of the dense window and its rows' accumulators, partitioned by
    // lane and dense lane (sparse_rows.cpp.hbs): every bank is a memory of its own, at least one block.
    // Two halves of each window where the next loads while one streams; the accumulators' depth
    // is the row slots and the shared rows' parts.
    const banks = pes * c.lanes;
    const buffers = windowBuffers(c);
    // Window words of xPerCycle 32-bit columns: an UltraRAM row is 72 bits wide (two columns), a
    // BRAM36 1K x 36, 512 x 72 (as deep as it is narrow).
    const words = (buffers * c.colWindow) / c.xPerCycle;
    const wide = Math.ceil((32 * c.xPerCycle) / 72);
    if (c.windowStorage === 'uram') uram += banks * wide * Math.ceil(words / UNIT.uramWords32);
    else bram += banks * Math.ceil((words * c.xPerCycle) / UNIT.bramWords32);
    uram += banks * Math.ceil((c.rowSlots + c.sharedRows) / UNIT.uramWords32);
  } else if (d === 'gemm') {
    bram += 2 * c.lanes * Math.ceil(c.maxInner / UNIT.bramWords32);
  } else if (d === 'sddmm') {
    bram += 2 * Math.ceil(c.maxInner / UNIT.bramWords32);
  }
  const arith = d === 'stream' || d === 'generic' ? c.lanes : macs;
  const fold = foldUnits(c);
  return {
    lut:
      UNIT.kernel.lut +
      ports * UNIT.maxi.lut +
      arith * (UNIT.fmul.lut + UNIT.fadd.lut + UNIT.laneControl.lut) +
      fold.adders * UNIT.fadd.lut +
      fifoLuts(d, c),
    ff:
      UNIT.kernel.ff +
      ports * UNIT.maxi.ff +
      arith * (UNIT.fmul.ff + UNIT.fadd.ff + UNIT.laneControl.ff) +
      fold.adders * UNIT.fadd.ff +
      fold.sumBits,
    bram,
    uram,
    dsp: arith * (UNIT.fmul.dsp + UNIT.fadd.dsp) + fold.adders * UNIT.fadd.dsp,
  };
}

function windowBuffers(c: FpgaDesignConfig): number {
  switch (c.windowLoads) {
    case 'serial':
      return 1;
    case 'overlap':
    case 'hispmv':
      return 2;
  }
}

/**
 * The fold of shared rows ('fold' designs), per dense lane: in each channel
 * FOLD_PES_PER_CYCLE adders (the parts a cycle added up, then into the
 * running sum) and the write-back's tree over the channels (channels - 1
 * adders); in registers the channels' running sums and the merged rows.
 */
function foldUnits(c: FpgaDesignConfig): { adders: number; sumBits: number } {
  switch (c.longRows) {
    case 'fold':
      return {
        adders: (c.channels * FOLD_PES_PER_CYCLE + c.channels - 1) * c.lanes,
        sumBits: 32 * c.sharedRows * c.lanes * (c.channels + 1),
      };
    case 'lane':
    case 'tree':
      return { adders: 0, sumBits: 0 };
  }
}
