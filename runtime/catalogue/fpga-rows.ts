/**
 * Time of a sparse-row FPGA design (Serpens-like SpMV, Sextans-like SpMM,
 * HiSpMV) on one card: Algorithm 1 of HiSpMV (Rajashekar et al., FPGA 2024),
 * which these designs share. Per row tile and dense tile, the PEs stream the
 * nonzeros window by window after the window's dense columns are loaded;
 * then the tile's result rows are written. The design's parameters say how
 * fast each part runs (runtime/plan/fpga-designs.ts); the card says how fast
 * its HBM channels are. Launch and host-side packing are not included (the
 * catalogue adds them). Formula and sources: docs/COST-MODEL.md.
 */
import { foldCycles, type FpgaDesignConfig } from '../plan/fpga-designs.js';
import type { SparseFeatures } from '../plan/types.js';
import type { DeviceSpec } from '../system/types.js';
import { cyclicImbalance, longestRows, withoutLongest } from './imbalance.js';

/** The parts of one run, seconds (total = their sum, the window loads already overlapped where the design can). */
export interface RowsTime {
  /** The nonzero stream: PE-bound (imbalance included) or HBM-bound, whichever is slower. */
  stream: number;
  /** Loading the dense operand's windows into the PEs (what of it the stream does not hide: windowLoads). */
  load: number;
  /** Clearing accumulators, folding shared rows, writing result rows, pipeline fill per pass. */
  other: number;
  total: number;
  /** The PE imbalance delta used (estimated from the features unless given). */
  imbalance: number;
}

/** Bandwidth of one HBM channel as the card sustains it: the measured total over the channels, else the datasheet figure. */
export function channelGBs(d: DeviceSpec): number {
  const f = d.fpga!;
  return d.fpgaModel ? d.fpgaModel.effectiveBandwidthGBs / f.hbmChannels : f.channelBandwidthGBs;
}

/** The nonzero stream of one dense tile, and the rows a tile shares over its lanes ('fold'). */
export interface PeStream {
  cycles: number;
  /** The PE imbalance delta used (estimated from the features unless given). */
  imbalance: number;
  /** Rows shared per row tile (a 'fold' design; 0 otherwise). */
  shared: number;
}

/**
 * Cycles of the nonzero stream of one dense tile (the packed stream's
 * length, dype_pack.h's RowPack::cycles): the busiest PE's entries with the
 * cyclic imbalance estimated from the features (or `imbalance` given).
 *  - 'lane': bounded below by the longest row, whose entries stay on one
 *    lane addLatency slots apart;
 *  - 'tree': long rows are spread over the PEs, so no row binds;
 *  - 'fold': as the packer (dype_share.h) does per tile, the k <= sharedRows
 *    longest rows are shared for the k whose stream plus fold is least: the
 *    rest as 'lane' (their moments and longest row estimated by
 *    withoutLongest) plus the shared entries spread over every PE.
 */
export function peStreamCycles(c: FpgaDesignConfig, f: SparseFeatures, imbalance?: number): PeStream {
  if (imbalance !== undefined) return streamCycles(c, f, imbalance);
  // The planner prices one op's features on a design many times (every split, stage and
  // goal); a 'fold' design's estimate walks hundreds of row lengths, so it is kept per
  // features object (never mutated: bound problems build new ones) and design.
  const key = designKey(c);
  let byDesign = streamMemo.get(f);
  if (!byDesign) streamMemo.set(f, (byDesign = new Map()));
  let s = byDesign.get(key);
  if (!s) byDesign.set(key, (s = streamCycles(c, f, undefined)));
  return s;
}

const streamMemo = new WeakMap<SparseFeatures, Map<string, PeStream>>();

/** The fields of a design the stream estimate reads. */
const designKey = (c: FpgaDesignConfig): string =>
  `${c.channels}/${c.pesPerChannel}/${c.rowSlots}/${c.colWindow}/${c.addLatency}/${c.ii}/${c.imbalanceExposure}/${c.longRows}/${c.sharedRows}`;

function streamCycles(c: FpgaDesignConfig, f: SparseFeatures, imbalance: number | undefined): PeStream {
  const pes = c.channels * c.pesPerChannel;
  const tileRows = pes * c.rowSlots;
  const deal = { pes, tileRows, colWindow: c.colWindow };
  // The busiest PE sets the pace; a rebalancing design keeps only part of the excess.
  const busiest = (g: SparseFeatures, delta: number): number =>
    (g.nnz / pes) * (1 + c.imbalanceExposure * (delta - 1)) * c.ii;
  const onLanes = (g: SparseFeatures): { cycles: number; imbalance: number } => {
    const delta = imbalance ?? cyclicImbalance(g, deal);
    return { cycles: Math.max(busiest(g, delta), g.rowLenMax * c.addLatency), imbalance: delta };
  };
  switch (c.longRows) {
    case 'lane':
      return { ...onLanes(f), shared: 0 };
    case 'tree': {
      const delta = imbalance ?? cyclicImbalance(f, { ...deal, sharesLongest: true });
      return { cycles: busiest(f, delta), imbalance: delta, shared: 0 };
    }
    case 'fold': {
      const rowTiles = Math.max(1, Math.ceil(f.rows / tileRows));
      const alone = onLanes(f);
      let best: PeStream & { cost: number } = { ...alone, shared: 0, cost: alone.cycles };
      const most = Math.min(c.sharedRows, f.rows);
      const top = longestRows(f, most * rowTiles + 1);
      for (let k = 1; k <= most; k++) {
        const { rest, removed } = withoutLongest(f, top, k * rowTiles);
        const lanes = onLanes(rest);
        const cycles = Math.max(lanes.cycles + removed / pes, f.nnz / pes);
        const cost = cycles + rowTiles * foldCycles(c, k);
        if (cost < best.cost) best = { cycles, imbalance: lanes.imbalance, shared: k, cost };
      }
      return { cycles: best.cycles, imbalance: best.imbalance, shared: best.shared };
    }
  }
}

/**
 * What loading the dense operand's windows adds to the stream, seconds, over
 * `passes` (row tile x dense tile) of `windows` windows each.
 */
function windowLoadTime(
  c: FpgaDesignConfig,
  f: SparseFeatures,
  passes: number,
  windows: number,
  stream: number,
  clockHz: number,
): number {
  const seconds = (columns: number): number => (passes * columns) / c.xPerCycle / clockHz;
  switch (c.windowLoads) {
    case 'serial':
      return seconds(windows * c.colWindow);
    case 'hispmv':
      return Math.min(seconds(windows * c.colWindow), stream);
    case 'overlap': {
      // The first window loads alone; the others behind the streams of the windows before them.
      const first = Math.min(c.colWindow, f.cols);
      return seconds(first) + Math.max(0, seconds(f.cols - first) - stream);
    }
  }
}

/**
 * One run over a matrix with features `f` and dense width `k` (1 for SpMV)
 * of design `c` at `clockHz`, its nonzeros streamed over `c.channels`
 * channels of `channelGBs` each. `imbalance` overrides the estimate of the
 * PE imbalance delta (a published figure, in the anchor tests).
 */
export function sparseRowsTime(
  c: FpgaDesignConfig,
  f: SparseFeatures,
  k: number,
  clockHz: number,
  chGBs: number,
  imbalance?: number,
): RowsTime {
  const pes = c.channels * c.pesPerChannel;
  const tileRows = pes * c.rowSlots;
  const rowTiles = Math.max(1, Math.ceil(f.rows / tileRows));
  const windows = Math.max(1, Math.ceil(f.cols / c.colWindow));
  const kTiles = Math.max(1, Math.ceil(k / c.lanes));
  const { cycles: peCycles, imbalance: delta, shared } = peStreamCycles(c, f, imbalance);
  const hbm = (f.nnz * c.entryBytes) / (c.channels * chGBs * 1e9);
  const stream = kTiles * Math.max(peCycles / clockHz, hbm);
  const load = windowLoadTime(c, f, rowTiles * kTiles, windows, stream, clockHz);
  const clear = c.clearsAllSlots ? c.rowSlots : Math.ceil(Math.min(f.rows, tileRows) / pes);
  const otherCycles =
    rowTiles * kTiles * (clear + foldCycles(c, shared) + windows * c.passOverheadCycles) +
    (kTiles * f.rows) / c.yPerCycle;
  const other = otherCycles / clockHz;
  return { stream, load, other, total: stream + load + other, imbalance: delta };
}
