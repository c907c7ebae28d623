/**
 * The FPGA kernel designs of codegen/hls (templates in hls-templates/) as
 * plain numbers the planner can use: their default parameters (channels,
 * PEs, lanes, on-chip windows), throughput (II=1 pipelines), clock, cycle
 * counts as a function of data features, and LUT/FF/BRAM/URAM/DSP estimates.
 * It lives in runtime/ because the planner (runtime/plan/cost.ts) and a
 * generated runtime must read it without importing the compiler; the HLS
 * backend writes the same figures into each project's estimates.json.
 *
 * Resource figures are estimates from per-unit costs (below), not synthesis
 * reports: no Vitis exists where this was written.
 */

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
}

export interface FpgaResources {
  lut: number;
  ff: number;
  bram: number;
  uram: number;
  dsp: number;
}

/** Features a design's cycle count depends on (absent: 0 / 1). */
export interface FpgaWork {
  rows: number;
  cols: number;
  nnz: number;
  rowLenMax: number;
  /** Dense width: columns of the dense operand (SpMM), inner dimension (SDDMM, GEMM). */
  k: number;
  /** GEMM: inner dimension; elementwise: items. */
  inner?: number;
  items?: number;
}

const base = { addLatency: 8, ii: 1 };

/**
 * Default parameters: Serpens-like SpMV with 16 channels x 8 PEs, Sextans-like
 * SpMM with 8 channels x 8 PEs x 8 dense lanes (512 MACs per cycle), a 16 x 16
 * output-stationary GEMM array (256 MACs), 8-lane streams.
 */
export const FPGA_DESIGN_DEFAULTS: Record<FpgaDesignName, FpgaDesignConfig> = {
  spmv: { ...base, channels: 16, pesPerChannel: 8, lanes: 1, rowSlots: 4096, colWindow: 4096, maxInner: 0, clockMHz: 225 },
  spmm: { ...base, channels: 8, pesPerChannel: 8, lanes: 8, rowSlots: 2048, colWindow: 1024, maxInner: 0, clockMHz: 190 },
  sddmm: { ...base, channels: 1, pesPerChannel: 1, lanes: 64, rowSlots: 0, colWindow: 0, maxInner: 1024, clockMHz: 250 },
  gemm: { ...base, channels: 1, pesPerChannel: 16, lanes: 16, rowSlots: 0, colWindow: 0, maxInner: 1024, clockMHz: 300 },
  stream: { ...base, channels: 1, pesPerChannel: 1, lanes: 8, rowSlots: 0, colWindow: 0, maxInner: 0, clockMHz: 300 },
  generic: { ...base, channels: 1, pesPerChannel: 1, lanes: 1, rowSlots: 0, colWindow: 0, maxInner: 0, clockMHz: 300 },
};

/** Per-unit costs: f32 multiplier and adder cores (full DSP), one 512-bit m_axi adapter, kernel control. */
const UNIT = {
  fmul: { lut: 150, ff: 300, dsp: 3 },
  fadd: { lut: 400, ff: 600, dsp: 2 },
  laneControl: { lut: 300, ff: 450 },
  maxi: { lut: 2500, ff: 4000, bram: 8 },
  kernel: { lut: 5000, ff: 8000, bram: 4 },
  /** Bytes per BRAM36 and per URAM block. */
  bramBytes: 4608,
  uramBytes: 36864,
};

/** Multiply-accumulate units per cycle. */
export function macsPerCycle(d: FpgaDesignName, c: FpgaDesignConfig = FPGA_DESIGN_DEFAULTS[d]): number {
  return c.channels * c.pesPerChannel * c.lanes;
}

/** Nonzeros a Serpens-style design consumes per channel per cycle. */
export function nnzPerChannelCycle(c: FpgaDesignConfig = FPGA_DESIGN_DEFAULTS.spmv): number {
  return c.pesPerChannel / c.ii;
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

const cdiv = (a: number, b: number): number => (b <= 0 ? 0 : Math.ceil(a / b));

/**
 * Cycles of one run. Sparse designs: the nonzero stream at `pes` per cycle,
 * but never faster than the longest row allows (its entries share one lane
 * and are issued at most once per adder latency),
 * plus loading each dense window into every PE, initialising and draining
 * the accumulators; repeated per column tile of width `lanes` for SpMM.
 */
export function fpgaDesignCycles(d: FpgaDesignName, w: FpgaWork, c: FpgaDesignConfig = FPGA_DESIGN_DEFAULTS[d]): number {
  const pes = c.channels * c.pesPerChannel;
  const depth = 100; // pipeline fill and drain per loop nest
  switch (d) {
    case 'spmv':
    case 'spmm': {
      const kTiles = d === 'spmm' ? Math.max(1, cdiv(w.k, c.lanes)) : 1;
      const rowTiles = Math.max(1, cdiv(w.rows, pes * c.rowSlots));
      const windows = Math.max(1, cdiv(w.cols, c.colWindow));
      // A row's entries share one lane and must be addLatency slots apart: unless other rows of
      // that lane fill the gaps, the longest row bounds the stream (measured by the csim host).
      const stream = Math.max(w.nnz / pes, w.rowLenMax * c.addLatency) * c.ii;
      const perTile = c.rowSlots + windows * (c.colWindow + depth);
      return kTiles * (stream + rowTiles * perTile) + w.rows * Math.max(1, w.k) / Math.max(1, pes) + depth;
    }
    case 'sddmm':
      return w.nnz * Math.max(1, cdiv(w.k, c.lanes)) * c.ii + w.rows * cdiv(w.k, c.lanes) + depth;
    case 'gemm': {
      const inner = w.inner ?? w.k;
      return cdiv(w.rows, c.pesPerChannel) * cdiv(w.k, c.lanes) * (inner + depth);
    }
    default:
      return cdiv(w.items ?? w.rows, c.lanes) + depth;
  }
}
