/**
 * Not a bench: a CSR matrix in the raw format the C harnesses read
 * (bench/cpu-kernels/kernels.c, cpu-pages/spmv.c, cpu-spmm-widths/spmm.c):
 * int32 rows, cols, nnz; int32 rowPtr[rows + 1]; int32 colIdx[nnz]; then,
 * with `values`, float64 values[nnz].
 */
import { writeFileSync } from 'node:fs';
import type { CsrMatrix } from '../runtime/tensor.js';

export function writeCsrBin(path: string, m: CsrMatrix, values = true): void {
  const parts = [
    Buffer.from(Int32Array.of(m.rows, m.cols, m.values.length).buffer),
    Buffer.from(m.rowPtr.buffer, m.rowPtr.byteOffset, m.rowPtr.byteLength),
    Buffer.from(m.colIdx.buffer, m.colIdx.byteOffset, m.colIdx.byteLength),
  ];
  if (values) {
    const v = m.values instanceof Float64Array ? m.values : Float64Array.from(m.values);
    parts.push(Buffer.from(v.buffer, v.byteOffset, v.byteLength));
  }
  writeFileSync(path, Buffer.concat(parts));
}
