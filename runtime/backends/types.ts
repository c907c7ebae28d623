/**
 * Backends of the generated runtime. A backend serves the stages a
 * partition maps to some device kinds: `wasm` runs them for real on this
 * machine's CPU; `sim` stands in for an absent GPU or FPGA (numbers from the
 * CPU kernels, time from the cost model); `cuda` and `xrt` call the
 * generated native libraries on hosts that have the hardware.
 */
import type { DeviceKind } from '../system/types.js';
import type { Tensor } from '../tensor.js';

export interface KernelInputs {
  tensors: ReadonlyMap<string, Tensor>;
  scalars: ReadonlyMap<string, number>;
}

export interface Backend {
  readonly name: 'wasm' | 'sim' | 'cuda' | 'xrt';
  /** Where the stage times come from: measured on the device, or the cost model. */
  readonly clock: 'measured' | 'model';
  /** Device kinds this backend executes stages on. */
  readonly kinds: readonly DeviceKind[];
  /** The kernel's results for one input; throws DY3040 where the hardware is absent. */
  compute(inputs: KernelInputs): Map<string, Tensor>;
  close(): void;
}

/** Which backend serves each device kind a partition may use. */
export type BackendSet = Partial<Record<DeviceKind, Backend>>;
