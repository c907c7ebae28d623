/**
 * One kernel to a loaded-ready native CPU library: its manifest (the wasm
 * emitter's, codegen/wasm/emit.ts `wasmManifest`, which the executor runs),
 * the library's C source (./library.ts) and the built library (./build.ts,
 * through the cache).
 */
import { createHash } from 'node:crypto';
import type { Kernel } from '../../ir/module.js';
import type { WasmManifest } from '../../runtime/wasm/manifest.js';
import { wasmManifest } from '../wasm/emit.js';
import { buildCpuLibrary, cCompiler, type CpuLibraryBuild } from './build.js';
import { CPU_EMITTER_VERSION, cpuLibrarySource } from './library.js';

export interface CompiledCpuKernel {
  build: CpuLibraryBuild;
  manifest: WasmManifest;
  program: string;
  /** What the library's program_hash() returns: sha256 of the emitter version, loop IR and manifest. */
  hash: string;
}

/** Compiles kernel k (after lower-kernels) of program `program` (a C identifier) into a library under `root` (null: no cache). */
export function compileCpuKernel(
  program: string,
  k: Kernel,
  root: string | null,
  cc: string = cCompiler(),
  file?: string,
): CompiledCpuKernel {
  if (!k.loops) throw new Error(`native cpu emitter: kernel ${k.name} has no loop IR; run lower-kernels first`);
  const manifest = wasmManifest(k, [], true);
  const hash = createHash('sha256')
    .update(JSON.stringify({ emitter: CPU_EMITTER_VERSION, kernel: k.name, loops: k.loops, manifest }))
    .digest('hex');
  const source = cpuLibrarySource(program, hash, [{ kernel: k, manifest }], file);
  return { build: buildCpuLibrary(source, root, cc), manifest, program, hash };
}
