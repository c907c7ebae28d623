/**
 * Not a bench: a digest of an executor's first output (dense data or sparse
 * values, as float64 bytes), for the benches that check two builds give the
 * same bits (cpu-pages.ts, cpu-sddmm-rows.ts, wasm-groups.ts). A hash, since
 * an SpMM result on the 1M-row matrix holds 32M elements.
 */
import { createHash } from 'node:crypto';
import type { WasmExecutor } from '../runtime/wasm/executor.js';

/** Equal digests: the same bits. */
export function outputDigest(ex: WasmExecutor): string {
  const out = [...ex.results().outputs.values()][0]!;
  const vals = out.format === 'dense' ? out.data : out.values;
  const f64 = vals instanceof Float64Array ? vals : Float64Array.from(vals);
  return createHash('sha256')
    .update(new Uint8Array(f64.buffer, f64.byteOffset, f64.byteLength))
    .digest('hex');
}
