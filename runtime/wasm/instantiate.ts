/**
 * Instantiating a compiled kernel: its shared memory, the host math
 * functions it imports, the instance, and with threads > 1 the worker pool
 * running the same module on the same memory. Shared by the whole-kernel
 * executor and the stage engine's wasm backend.
 */
import type { WasmManifest } from './manifest.js';
import { WasmThreadPool } from './threads.js';

const HOST: Record<string, (...a: number[]) => number> = {
  exp: Math.exp,
  log: Math.log,
  tanh: Math.tanh,
  pow: Math.pow,
};

export interface KernelInstance {
  memory: WebAssembly.Memory;
  instance: WebAssembly.Instance;
  pool: WasmThreadPool | undefined;
}

export async function instantiateKernel(
  binary: Uint8Array,
  manifest: WasmManifest,
  threads: number,
  who: string,
): Promise<KernelInstance> {
  if (!Number.isSafeInteger(threads) || threads < 1)
    throw new Error(`${who}: threads must be an integer >= 1, got ${threads}`);
  if (threads > 1 && !manifest.sharedMemory)
    throw new Error(`${who}: threads need a module compiled with shared memory`);
  if (manifest.format !== 'dype-wasm-manifest' || manifest.version !== 1)
    throw new Error(`${who}: not a dype wasm manifest (version 1)`);
  const memory = new WebAssembly.Memory({
    initial: 1,
    maximum: manifest.maxPages,
    shared: manifest.sharedMemory,
  } as WebAssembly.MemoryDescriptor);
  const math: Record<string, (...a: number[]) => number> = {};
  for (const n of manifest.imports) {
    const f = HOST[n];
    if (!f) throw new Error(`${who}: the module imports an unknown host function math.${n}`);
    math[n] = f;
  }
  const module = await WebAssembly.compile(binary as Uint8Array<ArrayBuffer>);
  const instance = await WebAssembly.instantiate(module, { env: { memory }, math });
  const pool =
    threads > 1
      ? await WasmThreadPool.create(
          module,
          memory,
          manifest.ops.flatMap((o) => (o.spread ? [o.export, o.spread.export] : [o.export])),
          threads,
        )
      : undefined;
  return { memory, instance, pool };
}
