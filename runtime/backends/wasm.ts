/**
 * The wasm backend: the kernel compiled by `dype compile --targets wasm`
 * (out/wasm/<kernel>.wasm and its manifest), run by runtime/wasm's executor
 * on this machine's CPU, multi-threaded by rows.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../errors.js';
import { fsReason } from '../io/files.js';
import { createWasmExecutor, type WasmExecutor } from '../wasm/executor.js';
import type { WasmManifest } from '../wasm/manifest.js';
import type { Tensor } from '../tensor.js';
import type { Backend, KernelInputs } from './types.js';

export class WasmBackend implements Backend {
  readonly name = 'wasm' as const;
  readonly clock = 'measured' as const;
  readonly kinds = ['cpu'] as const;
  constructor(readonly executor: WasmExecutor) {}

  compute(inputs: KernelInputs): Map<string, Tensor> {
    return this.executor.run({ tensors: inputs.tensors, scalars: inputs.scalars }).outputs;
  }

  close(): void {
    this.executor.close();
  }
}

export async function wasmBackend(binary: Uint8Array, manifest: WasmManifest, opts: { threads?: number } = {}): Promise<WasmBackend> {
  return new WasmBackend(await createWasmExecutor(binary, manifest, opts));
}

/** Loads `<dir>/<kernel>.wasm` and `<dir>/<kernel>.manifest.json` (the wasm target's output). */
export async function wasmBackendFromDir(dir: string, kernel: string, opts: { threads?: number } = {}): Promise<WasmBackend> {
  const read = (f: string): Buffer => {
    try {
      return readFileSync(join(dir, f));
    } catch (e) {
      throw new InputError('DY3010', join(dir, f), undefined, `cannot read the compiled kernel: ${fsReason(e)} (build it with dype compile --targets wasm,runtime)`);
    }
  };
  const binary = read(`${kernel}.wasm`);
  const manifest = JSON.parse(read(`${kernel}.manifest.json`).toString('utf8')) as WasmManifest;
  return wasmBackend(new Uint8Array(binary), manifest, opts);
}
