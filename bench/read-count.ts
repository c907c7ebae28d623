/**
 * A CSR pattern whose row pointers count their reads (through a proxy: for
 * counting what a feature pass reads, never for timing it). Shared by
 * bench/features-sampled.ts and test/features/quick.test.ts.
 */
import type { CsrMatrix } from '../runtime/tensor.js';

/** `m` with its row pointers read through a proxy that counts the reads (index reads only). */
export function countReads(m: CsrMatrix): { m: CsrMatrix; reads: () => number } {
  let reads = 0;
  const rowPtr = new Proxy(m.rowPtr, {
    get: (t, k) => {
      if (typeof k === 'string' && /^[0-9]+$/.test(k)) reads++;
      const v = Reflect.get(t, k, t) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
  });
  return { m: { ...m, rowPtr }, reads: () => reads };
}
