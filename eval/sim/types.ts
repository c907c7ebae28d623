/** The simulation's input (a placement of ops on device instances) and its output. */
import type { DeviceSpec } from '../../runtime/system/types.js';

/** A group of consecutive-or-not ops on named instances of one device kind. */
export interface SimStage {
  /** Indices into the problem's ops, in program order. */
  ops: number[];
  device: DeviceSpec;
  /** Instance names (gpu0, fpga1); the same instance may appear in several stages (HEFT). */
  instances: string[];
}

export interface TraceEvent {
  /** Resource row: an instance (gpu0) or a link (gpu0 up, root). */
  row: string;
  kind: 'compute' | 'transfer';
  input: number;
  label: string;
  startMs: number;
  endMs: number;
}

export interface SimResult {
  /** Makespan of the stream over its length: the period a user measures, fill and drain included. */
  periodMs: number;
  /** Inputs per second (1000 / periodMs). */
  throughput: number;
  /** Mean time from an input's first transfer to its last result's arrival. */
  latencyMs: number;
  /**
   * Energy per input, J, of the instances the placement uses: active power
   * while their kernels run, the DMA share while they move data, their
   * waiting (powered-up) power the rest of the makespan.
   */
  deviceEnergyJ: number;
  /** deviceEnergyJ plus every unused instance's idle power (the host's too) over the makespan. */
  systemEnergyJ: number;
  makespanMs: number;
  /** Highest instantaneous draw observed, W. */
  peakPowerW: number;
  trace?: TraceEvent[];
}
