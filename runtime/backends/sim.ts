/**
 * The sim backend: stands in for a GPU or FPGA this machine lacks. The
 * numbers come from the CPU kernels (another backend, normally wasm); the
 * runtime takes the stage times from the cost model and, given a
 * TraceRecorder, draws them on a Chrome trace-event timeline.
 */
import type { DeviceKind } from '../system/types.js';
import type { Tensor } from '../tensor.js';
import type { Backend, KernelInputs } from './types.js';

export class SimBackend implements Backend {
  readonly name = 'sim' as const;
  readonly clock = 'model' as const;
  constructor(
    private readonly numbers: Backend,
    readonly kinds: readonly DeviceKind[] = ['gpu', 'fpga'],
  ) {
    if (numbers.name === 'sim') throw new Error('sim backend: the numbers must come from a backend that computes them (wasm)');
  }

  compute(inputs: KernelInputs): Map<string, Tensor> {
    return this.numbers.compute(inputs);
  }

  close(): void {
    // The numbers backend is shared with the CPU stages; its owner closes it.
  }
}

export function simBackend(numbers: Backend, kinds?: readonly DeviceKind[]): SimBackend {
  return new SimBackend(numbers, kinds);
}
