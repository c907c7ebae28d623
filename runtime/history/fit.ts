/**
 * From measured runs to the planner's history entries, and the planner's
 * use of them. A run counts only when it ran alone (not in an overlapping
 * stream, whose wall times include waiting for the other stages), whole (not
 * one slice of a split op), on the device and backend the entry is for. Runs
 * are grouped by (op kind, implementation, dtype, backend) and bucketed by
 * work (bytes, powers of two), row-length imbalance and, on a CPU, the
 * threads the op ran on (a run at 1 thread says nothing of the same op at 8);
 * a bucket's figure is the median time per byte of its runs. The planner
 * takes a bucket's figure only when it rests on at least MIN_RUNS runs at
 * the threads it prices the op on, and the formula otherwise.
 */
import type { PlanOp } from '../plan/types.js';
import type { DeviceSpec } from '../system/types.js';
import type { HistoryBucket, HistoryEntry, HistoryRecord } from './types.js';

/** Runs a bucket needs before the planner prefers it to the formula. */
export const MIN_RUNS = 3;

export function imbalanceClass(f: { rowLenMax: number; rowLenMean: number } | undefined): number {
  if (!f) return -1;
  const r = f.rowLenMean > 0 ? f.rowLenMax / f.rowLenMean : 1;
  return r < 4 ? 0 : r < 32 ? 1 : 2;
}

const log2Bytes = (bytes: number): number => Math.floor(Math.log2(Math.max(1, bytes)));

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * A run whose time is its op's alone: not overlapping other stages in a stream, not one slice of a split op, and
 * not cold (a process's first run, first-call setup in it).
 */
export function measuredAlone(r: HistoryRecord): boolean {
  return !r.concurrent && r.cold !== true && r.split === 1;
}

/** A recorded run as the op the planner prices (one trip; the work counts and features it recorded). */
export function recordOp(r: HistoryRecord): PlanOp {
  return {
    id: r.op,
    kind: r.opKind,
    result: '',
    dtype: r.dtype,
    reads: [],
    items: r.items,
    flops: r.flops,
    bytes: r.bytes,
    gathers: r.gathers,
    loops: r.loops,
    columns: r.columns,
    resultBytes: 0,
    trips: 1,
    impls: { cpu: [], gpu: [], fpga: [], [r.kind]: [r.impl] } as PlanOp['impls'],
    ...(r.sparse ? { sparse: r.sparse } : {}),
  };
}

/**
 * The history entries of one device (id) and backend from a set of runs. `callUs`: the per-call cost the planner
 * adds to an entry's time for a run's op (runtime/catalogue callOverheadUs: the launch, or a GPU's sparse-call floor),
 * taken off each run so that the planner does not count it twice. Runs marked cold (a process's first, its
 * first-call setup included) are left out.
 */
export function fitHistory(
  records: readonly HistoryRecord[],
  device: DeviceSpec,
  backend: string,
  callUs: (r: HistoryRecord) => number,
): HistoryEntry[] {
  const groups = new Map<
    string,
    {
      e: Omit<HistoryEntry, 'buckets'>;
      runs: Map<string, { b: Omit<HistoryBucket, 'runs' | 'msPerByte'>; x: number[] }>;
    }
  >();
  for (const r of records) {
    if (r.device !== device.id || r.backend !== backend || !measuredAlone(r) || r.bytes <= 0 || r.trips <= 0) continue;
    const key = `${r.opKind}\0${r.impl}\0${r.dtype}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { e: { opKind: r.opKind, impl: r.impl, dtype: r.dtype, backend }, runs: new Map() }));
    const b = {
      log2Bytes: log2Bytes(r.bytes),
      imbalance: imbalanceClass(r.sparse),
      ...(r.threads !== undefined ? { threads: r.threads } : {}),
    };
    const bk = `${b.log2Bytes}:${b.imbalance}:${b.threads ?? ''}`;
    let bucket = g.runs.get(bk);
    if (!bucket) g.runs.set(bk, (bucket = { b, x: [] }));
    const perTrip = Math.max(0, r.ms / r.trips - callUs(r) / 1e3);
    bucket.x.push(perTrip / r.bytes);
  }
  return [...groups.values()]
    .map(({ e, runs }) => ({
      ...e,
      buckets: [...runs.values()]
        .map(({ b, x }) => ({ ...b, runs: x.length, msPerByte: median(x) }))
        .sort((p, q) => p.log2Bytes - q.log2Bytes || p.imbalance - q.imbalance || (p.threads ?? 0) - (q.threads ?? 0)),
    }))
    .sort((a, b) => `${a.opKind}${a.impl}${a.dtype}`.localeCompare(`${b.opKind}${b.impl}${b.dtype}`));
}

/**
 * One run of `op` in `impl` on one instance of `d` from its history (launch
 * overhead excluded, as the catalogue's formulas), or undefined where the
 * history has fewer than MIN_RUNS runs of that kind, size, imbalance and
 * threads. `threads`: what the op runs on, for a CPU (asked only where an
 * entry matches: the count is priced by the model); undefined for devices.
 */
export function historyMs(
  op: PlanOp,
  impl: string,
  d: DeviceSpec,
  threads: () => number | undefined,
): number | undefined {
  const entry = d.history?.find((h) => h.opKind === op.kind && h.impl === impl && h.dtype === op.dtype);
  if (!entry) return undefined;
  const t = threads();
  const b = entry.buckets.find(
    (x) => x.log2Bytes === log2Bytes(op.bytes) && x.imbalance === imbalanceClass(op.sparse) && x.threads === t,
  );
  return b && b.runs >= MIN_RUNS ? b.msPerByte * op.bytes : undefined;
}
