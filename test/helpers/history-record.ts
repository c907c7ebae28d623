/** A history record with every field a reader requires (test/history): `over` replaces any of them. */
import { HISTORY_VERSION, type HistoryRecord } from '../../runtime/history/types.js';

export function historyRecord(over: Partial<HistoryRecord>): HistoryRecord {
  return {
    v: HISTORY_VERSION,
    at: '2026-12-03T00:00:00Z',
    system: 'this-machine',
    device: 'cpu',
    instance: 'cpu0',
    kind: 'cpu',
    backend: 'wasm',
    kernel: 'spmv',
    op: 'op0',
    opKind: 'spmv',
    impl: 'nnz-split',
    dtype: 'f32',
    split: 1,
    // A CPU run records its threads (runtime/history/record.ts); a device's does not.
    ...(over.kind === undefined || over.kind === 'cpu' ? { threads: 1 } : {}),
    trips: 1,
    items: 100,
    flops: 2000,
    bytes: 10_000,
    gathers: 1000,
    // An SpMV's: its entry loop, no column loop.
    loops: 1000,
    columns: 1,
    sparse: {
      rows: 100,
      cols: 100,
      nnz: 1000,
      rowLenMean: 10,
      rowLenMax: 12,
      rowLenCv: 0.1,
      emptyRowFraction: 0,
      top1PctNnzShare: 0.01,
    },
    ms: 0.05,
    concurrent: false,
    ...over,
  };
}
