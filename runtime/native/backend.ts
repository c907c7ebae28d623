/**
 * A stage backend over a generated native library (./library.ts): device
 * memory, copies and op launches through the native ABI. Calls are direct
 * (about 1-2 us) unless the engine asks for them off the main thread
 * (`offThread`: pipelined stages), where koffi runs them on its own threads.
 * Every failing call becomes a DeviceCallError with the library's text.
 */
import {
  DeviceCallError,
  type BuiltFrom,
  type CallOptions,
  type DeviceBuffer,
  type StageBackend,
} from '../exec/backend.js';
import type { DeviceKind } from '../system/types.js';
import { ABI_ERRORS, FAMILY_KIND, type AbiFunction, type NativeFamily } from './abi.js';
import type { NativeLibrary, NativePtr } from './library.js';

interface NativeBuf extends DeviceBuffer {
  readonly ptr: NativePtr;
  freed: boolean;
}

/** cudaErrorMemoryAllocation: the device runtime's own out-of-memory code. */
const CUDA_OUT_OF_MEMORY = 2;

export class NativeStageBackend implements StageBackend {
  readonly kind: DeviceKind;
  readonly deviceCount: number;
  readonly builtFrom: BuiltFrom;
  private readonly handles = new Map<string, number>();

  constructor(
    readonly lib: NativeLibrary,
    family: NativeFamily,
  ) {
    this.kind = FAMILY_KIND[family];
    this.deviceCount = lib.call('device_count') as number;
    this.builtFrom = { program: lib.program, programHash: lib.programHash, where: lib.path };
  }

  get name() {
    return this.lib.backend;
  }

  /** Real CUDA queues launches on streams; the emulation and the FPGA host library run them at the call. */
  get queues(): boolean {
    return this.lib.backend === 'cuda';
  }

  deviceName(dev: number): string {
    return (this.lib.call('device_name', dev) as string | null) ?? `${this.name} device ${dev}`;
  }

  private check(call: string, rc: unknown): void {
    const code = rc as number;
    if (code !== 0)
      throw new DeviceCallError(
        this.name,
        call,
        code,
        this.lib.errorText(code),
        call === 'alloc' && (code === ABI_ERRORS.ALLOC || code === CUDA_OUT_OF_MEMORY),
      );
  }

  private async run(name: AbiFunction, o: CallOptions | undefined, ...args: unknown[]): Promise<void> {
    this.check(name, o?.offThread ? await this.lib.callAsync(name, ...args) : this.lib.call(name, ...args));
  }

  alloc(dev: number, bytes: number): DeviceBuffer {
    const out: NativePtr[] = [null];
    this.check('alloc', this.lib.call('alloc', dev, Math.max(1, bytes), out));
    const b: NativeBuf = { dev, bytes, ptr: out[0]!, freed: false };
    return b;
  }

  free(buf: DeviceBuffer): void {
    const b = buf as NativeBuf;
    if (b.freed) return;
    b.freed = true;
    this.check('free', this.lib.call('free', b.dev, b.ptr));
  }

  private live(b: DeviceBuffer, call: string): NativeBuf {
    const n = b as NativeBuf;
    if (n.freed) throw new DeviceCallError(this.name, call, ABI_ERRORS.RANGE, 'the buffer was freed');
    return n;
  }

  upload(dst: DeviceBuffer, offset: number, src: ArrayBufferView, o?: CallOptions): Promise<void> {
    const d = this.live(dst, 'upload');
    return this.run('upload', o, d.dev, d.ptr, offset, src, src.byteLength, null);
  }

  download(src: DeviceBuffer, offset: number, dst: ArrayBufferView, o?: CallOptions): Promise<void> {
    const s = this.live(src, 'download');
    return this.run('download', o, s.dev, dst, s.ptr, offset, dst.byteLength, null);
  }

  copy(
    dst: DeviceBuffer,
    dstOffset: number,
    src: DeviceBuffer,
    srcOffset: number,
    bytes: number,
    o?: CallOptions,
  ): Promise<void> {
    const d = this.live(dst, 'copy');
    const s = this.live(src, 'copy');
    return this.run('copy', o, d.dev, d.ptr, dstOffset, s.dev, s.ptr, srcOffset, bytes, null);
  }

  lookup(kernel: string, op: string, impl: string): number {
    const key = `${kernel}\0${op}\0${impl}`;
    let h = this.handles.get(key);
    if (h === undefined) {
      h = this.lib.call('op_lookup', kernel, op, impl) as number;
      if (h < 0)
        throw new DeviceCallError(
          this.name,
          'op_lookup',
          h,
          `${this.lib.path} has no op ${kernel}.${op} in implementation ${impl} (it has: ${this.implementations(kernel, op).join(', ') || 'none'})`,
        );
      this.handles.set(key, h);
    }
    return h;
  }

  implementations(kernel: string, op: string): string[] {
    const list = this.lib.call('op_impls', kernel, op) as string | null;
    return list ? list.split(',').filter((x) => x !== '') : [];
  }

  launch(
    dev: number,
    handle: number,
    buffers: readonly DeviceBuffer[],
    sizes: readonly number[],
    lo: number,
    hi: number,
    o?: CallOptions,
  ): Promise<void> {
    // Typed arrays pass as pointers to their memory (no conversion): a direct call reuses two scratch
    // arrays (0.4 us a launch against 2-3 us for arrays built per call); a call on another thread
    // gets its own, which must stay untouched until it returns.
    const fresh = o?.offThread === true;
    const ptrs =
      fresh || this.ptrScratch.length < buffers.length
        ? new BigUint64Array(Math.max(buffers.length, 1))
        : this.ptrScratch;
    const dims =
      fresh || this.sizeScratch.length < sizes.length ? new BigInt64Array(Math.max(sizes.length, 1)) : this.sizeScratch;
    if (!fresh) {
      this.ptrScratch = ptrs;
      this.sizeScratch = dims;
    }
    for (let i = 0; i < buffers.length; i++) ptrs[i] = BigInt(this.live(buffers[i]!, 'launch').ptr ?? 0);
    for (let i = 0; i < sizes.length; i++) dims[i] = BigInt(sizes[i]!);
    return this.run('launch', o, dev, handle, ptrs, dims, lo, hi, null);
  }

  private ptrScratch = new BigUint64Array(16);
  private sizeScratch = new BigInt64Array(16);

  sync(dev: number, o?: CallOptions): Promise<void> {
    return this.run('sync', o, dev, null);
  }

  close(): void {
    // The library stays loaded for the process (unloading code koffi still references is unsafe).
  }
}
