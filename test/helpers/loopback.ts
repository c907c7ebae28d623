/**
 * A test double for GPU and FPGA stages where the test is about the
 * runtime's decisions, not about device code: a wasm backend (its own
 * WebAssembly.Memory, so values really move between "devices") that serves
 * a device kind and accepts the implementation names of that kind, running
 * the CPU kernel. It reports itself as `wasm`, so nothing in a result
 * pretends a GPU or FPGA ran. The native libraries have their own tests
 * (test/native).
 */
import { IMPLEMENTATIONS } from '../../runtime/catalogue/index.js';
import { DeviceCallError, WasmStageBackend, type StageBackend, type StageBackends } from '../../runtime/exec/index.js';
import type { DeviceKind } from '../../runtime/system/types.js';
import type { WasmManifest } from '../../runtime/wasm/manifest.js';

export async function loopback(
  kind: DeviceKind,
  binary: Uint8Array,
  manifest: WasmManifest,
  devices = 1,
): Promise<StageBackend> {
  const inner = await Promise.all(Array.from({ length: devices }, () => WasmStageBackend.create(binary, manifest)));
  const names = IMPLEMENTATIONS[kind] as readonly string[];
  const of = (dev: number): WasmStageBackend => {
    const b = inner[dev];
    if (!b) throw new DeviceCallError('wasm', 'device', -4, `no device ${dev}`);
    return b;
  };
  // Buffers remember their device; each device is its own wasm backend.
  return {
    name: 'wasm',
    kind,
    deviceCount: devices,
    queues: false,
    deviceName: (dev) => `loopback ${kind} ${dev} (wasm)`,
    alloc: (dev, bytes) => Object.assign(of(dev).alloc(0, bytes), { dev }),
    free: (buf) => of(buf.dev).free(buf),
    upload: (dst, off, src) => of(dst.dev).upload(dst, off, src),
    download: (src, off, dst) => of(src.dev).download(src, off, dst),
    async copy(dst, dstOff, src, srcOff, bytes) {
      const tmp = new Uint8Array(bytes);
      await of(src.dev).download(src, srcOff, tmp);
      await of(dst.dev).upload(dst, dstOff, tmp);
    },
    lookup(kernel, op, impl) {
      if (!names.includes(impl))
        throw new DeviceCallError('wasm', 'lookup', -3, `${impl} is no ${kind} implementation`);
      const i = manifest.ops.findIndex((o) => o.op === op);
      if (kernel !== manifest.kernel || i < 0) throw new DeviceCallError('wasm', 'lookup', -3, `no op ${kernel}.${op}`);
      return i;
    },
    implementations: () => [...names],
    launch: (dev, handle, bufs, sizes, lo, hi) => of(dev).launch(0, handle, bufs, sizes, lo, hi),
    sync: async () => {},
    close: () => inner.forEach((b) => b.close()),
  };
}

/** The backends of a machine with every kind, for tests about decisions: the wasm CPU backend, and a loopback GPU and FPGA. */
export async function wasmAndLoopbacks(
  binary: Uint8Array,
  manifest: WasmManifest,
): Promise<StageBackends & { cpu: WasmStageBackend }> {
  return {
    cpu: await WasmStageBackend.create(binary, manifest),
    gpu: await loopback('gpu', binary, manifest),
    fpga: await loopback('fpga', binary, manifest),
  };
}
