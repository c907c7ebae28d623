/**
 * Measured op runs, kept per machine (as StarPU's history-based models do):
 * each run of an op on a device instance, with what the cost models know of
 * it (implementation, dtype, work counts, the sparse operand's features) and
 * the wall time it took. `dype calibrate --history` turns a history into
 * `DeviceSpec.history` entries the planner prefers to its formulas where it
 * has enough samples.
 */
import type { Dtype, SparseFeatures } from '../plan/types.js';
import type { DeviceKind } from '../system/types.js';

/** 2: records carry the op's loops and columns (runtime/plan/types.ts), which the CPU model's dense form reads. */
export const HISTORY_VERSION = 2;

export interface HistoryRecord {
  v: typeof HISTORY_VERSION;
  /** ISO time of the run. */
  at: string;
  /** The system file's name and the device (id in it) and instance the op ran on. */
  system: string;
  device: string;
  instance: string;
  kind: DeviceKind;
  /** The backend that ran it (wasm, cuda, cuda-emu, ...): emulated runs are kept apart by it. */
  backend: string;
  kernel: string;
  op: string;
  opKind: string;
  impl: string;
  dtype: Dtype;
  /**
   * The first run of the op in its process (no warm-up before it): its time holds first-call setup (compiling the
   * kernel, the first copies), so the fit leaves it out. Absent: a warm run (histories written before it was recorded).
   */
  cold?: boolean;
  /** Instances the op was split over (1: whole). */
  split: number;
  /** CPU threads the backend ran it with (absent for devices). */
  threads?: number;
  trips: number;
  items: number;
  flops: number;
  bytes: number;
  gathers: number;
  loops: number;
  columns: number;
  sparse?: SparseFeatures;
  /** Measured wall time of the op, all trips, ms. */
  ms: number;
  /** Ran while other stages ran at the same time (a pipelined stream): not used for fitting. */
  concurrent: boolean;
}

/**
 * What the planner uses of a history: per (op kind, implementation, dtype),
 * buckets of work (bytes, by powers of two), row-length imbalance and (CPU)
 * threads, each
 * with its measured time per byte (the median of its runs) and how many runs
 * it rests on.
 */
export interface HistoryEntry {
  opKind: string;
  impl: string;
  dtype: Dtype;
  backend: string;
  buckets: HistoryBucket[];
}

export interface HistoryBucket {
  /** floor(log2(bytes)) of the runs in it. */
  log2Bytes: number;
  /** Imbalance class: 0 (max/mean row length < 4), 1 (< 32), 2 (more), -1 (no sparse operand). */
  imbalance: number;
  /** CPU threads the runs ran on (absent for devices, and for runs that did not record it). */
  threads?: number;
  runs: number;
  /** Median of (ms per trip, less the device's launch overhead) / bytes, ms per byte. */
  msPerByte: number;
}
