/**
 * The system model as plain data: devices, the links between them and the
 * constraints a mapping must meet. Loaded from JSON (see ./load.ts, which
 * validates it); used by the planner and by the runtime's switching policy.
 * Units are in the field names: GB/s, GFLOP/s, us, ms, W, GB, MHz.
 */

import type { HistoryEntry } from '../history/types.js';

export type DeviceKind = 'cpu' | 'gpu' | 'fpga';

export interface FpgaSpec {
  clockMHz: number;
  hbmChannels: number;
  channelBandwidthGBs: number;
  resources: { lut: number; ff: number; bram: number; uram: number; dsp: number };
  bitstreamLoadMs: number;
}

/**
 * The CPU's fitted sparse-kernel model (`dype calibrate` writes it; see
 * docs/COST-MODEL.md). Without it a CPU uses the roofline of peakGflops and
 * memBandwidthGBs. Times are for one thread; `threads` divide them by the
 * speedup 1 + (threads - 1) x parallelEfficiency.
 */
export interface CpuModelSpec {
  /** ns per stored entry of the sparse operand driving the op. */
  nsPerNnz: number;
  /** ns per dense-operand element read through an index (nnz for SpMV, nnz x K for SpMM). */
  nsPerGather: number;
  /** ns per row of the sparse operand. */
  nsPerRow: number;
  /** ns per output element. */
  nsPerItem: number;
  /** ns per 64-byte line of a gathered dense-operand row that misses the cache. */
  nsPerMiss: number;
  /** ns per byte streamed beyond the cache (the inverse of the effective memory bandwidth). */
  nsPerByte: number;
  /** Cache the dense operand and the op's bytes are measured against, MB. */
  cacheMB: number;
  /**
   * ns per row whose loop exit the branch predictor misses, with the history it learns across repeated runs of one
   * pattern (runtime/plan/model.ts cpuTerms): with exactly one of branchHistoryChangeBits, branchHistoryBits,
   * branchHistoryTrips and branchHistoryRows, or none (no such term).
   */
  nsPerBranchMiss?: number;
  /** ns per stored entry of an op whose entries each update a block of dense columns (SpMM, SDDMM; absent: 0). */
  nsPerBlockEntry?: number;
  /**
   * ns per gathered element an entry adds into one sum in order (SDDMM's dot product; runtime/plan/model.ts
   * cpuTerms), on top of nsPerGather. Absent (a fit made before the term): 0, SDDMM priced as an SpMM.
   */
  nsPerDotElement?: number;
  /**
   * ns per element of the row-side operand an in-order dot op reads once per row (SDDMM: rows x d; cpuTerms
   * dotRowElements). Absent (a fit made before the term): 0.
   */
  nsPerDotRowElement?: number;
  /**
   * The predictor's history in bits of row-length information in one thread's rows, weighed by how often a row's
   * length changes (rows x log2(1 + min(row-length standard deviation, mean row length)) x sqrt(share of rows whose
   * length differs from the row before); model.ts rowChangeBits): what `dype calibrate` fits.
   */
  branchHistoryChangeBits?: number;
  /**
   * The same history in bits unweighed (rows x log2(1 + min(sd, mean)); model.ts rowLengthBits): the form of fits
   * made before branchHistoryChangeBits (still read, so that their files keep their meaning).
   */
  branchHistoryBits?: number;
  /**
   * The same history in uncertain loop trips of one thread's rows (rows x min(sd, mean); model.ts uncertainTrips):
   * the form of fits made before branchHistoryBits (still read, so that their files keep their meaning).
   */
  branchHistoryTrips?: number;
  /**
   * The same history counted in rows of the whole op, whatever their lengths or the threads: the form of fits made
   * before branchHistoryTrips (still read, so that their files keep their meaning).
   */
  branchHistoryRows?: number;
  /** Speedup on T threads is 1 + (T - 1) x this (default 1: linear). */
  parallelEfficiency?: number;
  /** Per-op cost of handing work to the worker threads, us per extra thread (default 0). */
  dispatchUsPerThread?: number;
  /**
   * Dense ops (GEMM, elementwise, dense reductions): ns per flop and per byte of the op's counts, fitted by
   * `dype calibrate` on GEMM and a map; both or neither. Without them dense ops keep the roofline.
   */
  nsPerDenseFlop?: number;
  nsPerDenseByte?: number;
  /**
   * A dense op's loop trips beside its flops and bytes: ns per trip of its innermost loop, where a trip runs a block
   * of `denseBlockBytes` of its columns at once (runtime/catalogue/cpu.ts `denseTrips`): a narrow block does less
   * work a trip. Both or neither, with the two above; fitted by `dype calibrate`, the block being the calibrated
   * backend's (codegen/cpu/lanes.ts, codegen/wasm/simd.ts).
   */
  nsPerDenseTrip?: number;
  denseBlockBytes?: number;
}

/** The CPU backends a fit can be of: the generated native library (codegen/cpu) and the wasm kernels. */
export const CPU_BACKENDS = ['native', 'wasm'] as const;
export type CpuBackendName = (typeof CPU_BACKENDS)[number];

/** One CPU backend's fit: what `cpuModel` and `launchOverheadUs` are for the backend `cpuModelBackend` names. */
export interface CpuBackendFit {
  launchOverheadUs: number;
  cpuModel: CpuModelSpec;
}

/**
 * A GPU's sparse-kernel model (docs/COST-MODEL.md, "GPU sparse kernels"):
 * a sparse-driven op costs `sparseFloorUs` per call plus its DRAM bytes over
 * `effectiveBandwidthGBs`, scaled by what its schedule loses to row-length
 * imbalance. Without it a GPU uses the roofline of peakGflops and
 * memBandwidthGBs with fixed efficiencies (the model before issue 13).
 */
export interface GpuModelSpec {
  /** DRAM bandwidth a streaming kernel sustains (copy / triad), GB/s; at most memBandwidthGBs. */
  effectiveBandwidthGBs: number;
  /** What one call of a sparse-driven kernel costs at the least, us, launch included (so >= launchOverheadUs). */
  sparseFloorUs: number;
  /**
   * What each further launch or memset a schedule queues behind its first costs, us (runtime/catalogue/gpu.ts,
   * QUEUED_AFTER_FIRST): less than a call's floor, the stream having no host round trip between them.
   */
  queuedLaunchUs: number;
  /**
   * One step of one lane's walk, ns: a load the lane's next step follows, as a lone thread or warp on a long row
   * pays it (runtime/catalogue/gpu.ts laneSteps). A schedule takes at least its longest walk's steps x this.
   */
  laneStepNs: number;
  /** Warps the GPU holds at once (streaming multiprocessors x resident warps each): a round of rows (gpu.ts roundsMs). */
  residentWarps: number;
  /**
   * A row's dependent chain under a full GPU, ns: its row pointers, then its entries, then the gathers they index,
   * and the store, as each round of resident warps pays it (runtime/catalogue/gpu.ts roundsMs).
   */
  rowChainNs: number;
  /**
   * One step of a binary search over a matrix's row pointers under a full GPU, ns: a load at an address the last
   * one chose (merge-path's global search; runtime/catalogue/gpu.ts roundsMs).
   */
  searchStepNs: number;
  /** Last-level (L2) cache: gathers from a dense operand that fits it cost no DRAM traffic, MB. */
  l2CacheMB: number;
}

/**
 * An FPGA card's measured memory figure for the design models
 * (runtime/plan/fpga-designs.ts). Without it the designs' HBM streams run at
 * the datasheet channel bandwidth (fpga.channelBandwidthGBs).
 */
export interface FpgaModelSpec {
  /** HBM bandwidth the card sustains over all its channels, GB/s; at most memBandwidthGBs. */
  effectiveBandwidthGBs: number;
}

/** One kind of device; `count` identical instances, named by instanceName (gpu0, gpu1). */
export interface DeviceSpec {
  id: string;
  kind: DeviceKind;
  name: string;
  count: number;
  /** Peak arithmetic throughput of one instance per dtype, GFLOP/s (GOP/s for integers). */
  peakGflops: { f32: number; f64: number; i32: number; i64: number };
  /** Sustainable memory bandwidth of one instance, GB/s. */
  memBandwidthGBs: number;
  /** Fixed cost of starting one kernel (launch, or FPGA kernel start), us. */
  launchOverheadUs: number;
  /**
   * Power of one instance, W (docs/COST-MODEL.md, "Energy"): `idlePowerW` is
   * the draw of an instance no stage uses (deep idle: a GPU without a
   * context drops to P8); `waitingPowerW` the draw of an instance a mapping
   * uses while it waits inside the pipeline for its next input (powered up:
   * a GPU holding a context stays in P0, an FPGA keeps its bitstream
   * clocked); `activePowerW` the draw while its kernels run.
   * idle <= waiting <= active.
   */
  idlePowerW: number;
  waitingPowerW: number;
  activePowerW: number;
  memoryGB: number;
  /** Link between this device and host memory (absent for the host CPU itself). */
  hostLink?: { bandwidthGBs: number; latencyUs: number };
  /** CPUs: worker threads the executor uses. */
  threads?: number;
  /**
   * The host CPU only: aggregate bandwidth of its PCIe root complex, GB/s,
   * which every host<->device and peer-to-peer transfer crosses. Absent: the
   * root complex is not a shared limit (only each device's hostLink is).
   */
  rootComplexGBs?: number;
  /** CPUs: the fitted sparse-kernel model (absent: the roofline), of the backend `cpuModelBackend` names. */
  cpuModel?: CpuModelSpec;
  /**
   * CPUs: the backend whose runs `cpuModel` and `launchOverheadUs` were fitted on (`dype calibrate` writes it;
   * absent: not said, and the one model serves every CPU backend).
   */
  cpuModelBackend?: CpuBackendName;
  /**
   * CPUs: the fits of the other CPU backends (never of `cpuModelBackend`'s): the wasm pool wakes a thread and
   * runs a row at other costs than the native library, so each backend picks threads by its own figures
   * (./cpu-backend.ts).
   */
  cpuBackendModels?: Partial<Record<CpuBackendName, CpuBackendFit>>;
  /** Measured op times on this device (`dype calibrate --history`), preferred to the formulas where they rest on enough runs. */
  history?: HistoryEntry[];
  /** GPUs: the sparse-kernel model (absent: the roofline). */
  gpuModel?: GpuModelSpec;
  fpga?: FpgaSpec;
  /** FPGAs: measured card figures for the design models (absent: datasheet channel bandwidth). */
  fpgaModel?: FpgaModelSpec;
}

/** A peer-to-peer path between two device kinds (all their instances), e.g. GPU <-> FPGA over PCIe. */
export interface PeerLink {
  a: string;
  b: string;
  bandwidthGBs: number;
  latencyUs: number;
}

export interface Constraints {
  powerCapW?: number;
  latencyBoundMs?: number;
}

export interface SystemSpec {
  name: string;
  description: string;
  devices: DeviceSpec[];
  /** Direct paths; a pair of devices without one stages transfers through host memory. */
  peerLinks: PeerLink[];
  constraints: Constraints;
  /** Where each number came from (free text per field path), carried into reports. */
  sources?: Record<string, string>;
  /** What a measured figure was measured on (field path -> hardware), for docs/COST-MODEL.md's parameter table. */
  measuredOn?: Record<string, string>;
  /** The measured spread of a figure where its sources give one; `dype eval --sensitivity` moves it over this range. */
  ranges?: Record<string, { low: number; high: number; basis: string }>;
}

/** One concrete device instance of a system. */
export interface DeviceInstance {
  name: string;
  spec: DeviceSpec;
}

/**
 * The name of instance `index` of device `id`: `gpu0`, or `gpu1.0` for an id
 * that ends in a digit. Ids are letters, digits, `_` and `-` (no dot), so two
 * devices never share an instance name: without the dot device `gpu` x 11
 * and device `gpu1` would both have a `gpu10`.
 */
export function instanceName(id: string, index: number): string {
  return /[0-9]$/.test(id) ? `${id}.${index}` : `${id}${index}`;
}

export function instances(s: SystemSpec): DeviceInstance[] {
  return s.devices.flatMap((d) =>
    Array.from({ length: d.count }, (_, i) => ({ name: instanceName(d.id, i), spec: d })),
  );
}

/** Instance name -> its device, for every instance of the system. */
export function instanceSpecs(s: SystemSpec): Map<string, DeviceSpec> {
  return new Map(instances(s).map((x) => [x.name, x.spec]));
}
