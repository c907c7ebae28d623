/**
 * What a kernel template is filled from, and what the legality checks read:
 * the design chosen for one loop function, its kernel arguments with HBM
 * bundles and banks, the streams, on-chip arrays, loops and functions the
 * emitted code has, and the C++ fragments (expressions, statements) already
 * printed. Templates only substitute these; no decisions are made there.
 */
import type { FpgaDesignConfig, FpgaDesignName, FpgaResources } from '../../runtime/plan/fpga-designs.js';

export interface KernelArg {
  /** C++ parameter name. */
  name: string;
  /** C++ parameter type (`const float*`, `int32_t`). */
  cType: string;
  kind: 'ptr' | 'scalar';
  /** For pointers: the m_axi bundle and HBM bank it is connected to. */
  bundle?: string;
  bank?: number;
  /** Host expression of the argument (in the launch function) and, for pointers, its element count. */
  host: string;
  hostCount?: string;
  elemType?: string;
  /** Written by the kernel (copied back from the device). */
  output: boolean;
  /**
   * An output the kernel never reads and writes in full over a launch's rows: over XRT its host values are not
   * sent to the card first (what comes back is only what the kernel wrote).
   */
  writeOnly?: boolean;
  /** For pointers: let HLS widen the port to 512 bits (the design reads or writes it in consecutive runs). */
  wide?: boolean;
  /**
   * Part of the host's packed sparse operand (a channel's nonzero stream, or the step table): over XRT it stays
   * on the card between calls and moves only when it changes (dype_xrt.h keep_on_card).
   */
  packed?: { part: 'words'; channel: number } | { part: 'meta' };
}

export interface StreamDecl {
  name: string;
  type: string;
  depth: number;
  /** Functions (dataflow processes) writing and reading it. */
  producers: string[];
  consumers: string[];
}

export interface ArrayDecl {
  name: string;
  type: string;
  /** Extents; a string is a run-time size (which HLS cannot allocate). */
  dims: (number | string)[];
  /** Partitioned dimension (1-based), kind and factor (complete: the whole extent). */
  partitions: { dim: number; kind: 'complete' | 'cyclic' | 'block'; factor: number }[];
  /** Unroll factors of the loops that index each partitioned dimension, by dimension. */
  unrolledBy: { dim: number; factor: number }[];
  storage?: 'uram' | 'bram';
  /** Read latency pinned on the memory (cycles), where the design's timing depends on it. */
  latency?: number;
}

export interface LoopDecl {
  label: string;
  /** The trip count depends on data (a row length, a size read at run time). */
  dataDependent: boolean;
  tripcount?: { min: number; max: number; avg: number };
}

export interface FunctionDecl {
  name: string;
  calls: string[];
}

export interface KernelEstimates {
  design: FpgaDesignName;
  pes: number;
  ii: number;
  clockMHz: number;
  /** Cycles as a formula of the features (text) for documentation, and the function's inputs. */
  cycles: string;
  resources: FpgaResources;
}

export interface KernelVM {
  /** HLS top function (= the loop function's name, a C identifier). */
  name: string;
  kernel: string;
  op: string;
  design: FpgaDesignName;
  /** Template file under hls-templates/kernel/. */
  template: string;
  config: FpgaDesignConfig;
  args: KernelArg[];
  streams: StreamDecl[];
  arrays: ArrayDecl[];
  loops: LoopDecl[];
  functions: FunctionDecl[];
  /** Printed C++ fragments the template places (names documented per template). */
  code: Record<string, string | string[]>;
  /** Launch function: parameters (loop-IR buffers, sizes) and host-side packing statements. */
  launch: {
    params: string[];
    prepare: string[];
    call: string;
    /**
     * A packed sparse operand (sparse-rows designs): the lines that pack it (declaring `pk`), the line noting its
     * cycles, and its buffers' indices among the launch's (the versions that key it, dype_xrt.h card_of).
     */
    pack?: { lines: string[]; note: string[]; from: number[] };
  };
  /** The plain loop nest as a reference function for the testbench. */
  reference: { params: string[]; body: string[] };
  /** Testbench inputs: how to fill each loop-IR buffer and size; the checks of the whole run and of a run in two row ranges. */
  testbench: { decls: string[]; args: string[]; compare: string[]; split: string[] };
  estimates: KernelEstimates;
}

export interface Platform {
  name: string;
  /** The FPGA part of the platform's card (Vitis HLS set_part). */
  part: string;
  /** HBM pseudo-channels (banks) the platform exposes: HBM[0 .. hbmBanks-1]. */
  hbmBanks: number;
  /** The device's resources (the shell's share is counted against them, runtime/plan/fpga-designs.ts). */
  resources: FpgaResources;
}

/**
 * Alveo U280 (32 HBM pseudo-channels), the platform the defaults are sized
 * for: part xcu280-fsvh2892-2L-e and its resources as the AMD data sheet
 * gives them (the same figures as the systems/ presets' U280).
 */
export const DEFAULT_PLATFORM: Platform = {
  name: 'xilinx_u280_gen3x16_xdma_1_202211_1',
  part: 'xcu280-fsvh2892-2L-e',
  hbmBanks: 32,
  resources: { lut: 1_304_000, ff: 2_607_000, bram: 2016, uram: 960, dsp: 9024 },
};
