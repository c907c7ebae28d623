/**
 * Where worker threads ran between two readings of an executor's counts
 * (`workersOver`: dype calibrate judges its timings by them) and what `dype
 * run` says of them over its timed runs: the ops split over them, the share
 * of those ops' chunks the workers ran, and (the native library) their joins
 * on the core of the thread that launched the op. Workers on the caller's core, or running few of the chunks, mean the
 * runs' times read as fewer threads than asked (docs/PERFORMANCE.md, *Where
 * the workers ran*). Imports the executor's placement type only.
 */
import type { WorkerPlacement } from '../runtime/wasm/executor.js';

/** The counts between two readings, undefined where the backend has no workers. */
export function workersOver(
  before: WorkerPlacement | undefined,
  after: WorkerPlacement | undefined,
): WorkerPlacement | undefined {
  if (!before || !after) return undefined;
  return {
    splitOps: after.splitOps - before.splitOps,
    joins: after.joins - before.joins,
    joinsOnCaller:
      before.joinsOnCaller === null || after.joinsOnCaller === null ? null : after.joinsOnCaller - before.joinsOnCaller,
    chunks: after.chunks - before.chunks,
    workerChunks: after.workerChunks - before.workerChunks,
  };
}

/** One line for the report. */
export function workersText(w: WorkerPlacement): string {
  const share = w.chunks > 0 ? `${((100 * w.workerChunks) / w.chunks).toFixed(0)}%` : '-';
  const onCaller =
    w.joinsOnCaller === null
      ? 'the backend cannot tell their cores'
      : `${w.joinsOnCaller} of their ${w.joins} joins on the launching thread's core`;
  return `workers: ${w.splitOps} op run${w.splitOps === 1 ? '' : 's'} split over them, ${share} of the chunks run by them, ${onCaller}`;
}
