/**
 * What a kernel template is filled from, and what the legality checks read:
 * the design chosen for one loop function, its kernel arguments with HBM
 * bundles and banks, the streams, on-chip arrays, loops and functions the
 * emitted code has, and the C++ fragments (expressions, statements) already
 * printed. Templates only substitute these; no decisions are made there.
 */
import type { FpgaDesignConfig, FpgaDesignName } from '../../runtime/plan/fpga-designs.js';

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
  resources: { lut: number; ff: number; bram: number; uram: number; dsp: number };
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
  launch: { params: string[]; prepare: string[]; call: string };
  /** The plain loop nest as a reference function for the testbench. */
  reference: { params: string[]; body: string[] };
  /** Testbench inputs: how to fill each loop-IR buffer and size; the checks of the whole run and of a run in two row ranges. */
  testbench: { decls: string[]; args: string[]; compare: string[]; split: string[] };
  estimates: KernelEstimates;
}

export interface Platform {
  name: string;
  /** HBM pseudo-channels (banks) the platform exposes: HBM[0 .. hbmBanks-1]. */
  hbmBanks: number;
  clockMHz: number;
}

/** Alveo U280 (32 HBM pseudo-channels), the platform the defaults are sized for. */
export const DEFAULT_PLATFORM: Platform = { name: 'xilinx_u280_gen3x16_xdma_1_202211_1', hbmBanks: 32, clockMHz: 300 };
