/**
 * The cuda and xrt backends: on a host with the hardware they load the
 * generated native libraries (`out/cuda/lib<prog>_cuda.so` with its
 * extern "C" launch stubs; the XRT host glue of `out/hls/` with the
 * xclbin) and run each stage there. This build has no native loader (Node
 * needs an addon to call them) and this host has neither a GPU nor an FPGA,
 * so using one throws DY3040 naming what is missing; the interface is what a
 * native build implements.
 */
import { InputError } from '../errors.js';
import type { DeviceKind } from '../system/types.js';
import type { Tensor } from '../tensor.js';
import type { Backend, KernelInputs } from './types.js';

export interface NativeBackendOptions {
  /** The generated library: lib<prog>_cuda.so, or the xclbin plus host glue library. */
  library: string;
  /** Device ordinals to use (cudaSetDevice / xrt::device index). */
  devices?: number[];
}

class NativeBackend implements Backend {
  readonly clock = 'measured' as const;
  constructor(
    readonly name: 'cuda' | 'xrt',
    readonly kinds: readonly DeviceKind[],
    readonly options: NativeBackendOptions,
  ) {}

  compute(_inputs: KernelInputs): Map<string, Tensor> {
    void _inputs;
    const what = this.name === 'cuda' ? 'an NVIDIA GPU with the CUDA driver' : 'an FPGA card with XRT';
    throw new InputError('DY3040', `backend ${this.name}`, undefined, `not available on this host: it needs ${what} and a native loader for ${this.options.library}; use the sim backend for ${this.kinds.join('/')} stages here`);
  }

  close(): void {}
}

export function cudaBackend(o: NativeBackendOptions): Backend {
  return new NativeBackend('cuda', ['gpu'], o);
}

export function xrtBackend(o: NativeBackendOptions): Backend {
  return new NativeBackend('xrt', ['fpga'], o);
}
