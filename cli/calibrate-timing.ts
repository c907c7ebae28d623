/**
 * How `dype calibrate` times one kernel call (cli/calibrate.ts, cli/calibrate-dense.ts): repeated calls, the
 * fastest at one thread and the median at more, a multi-thread timing after a settle of untimed calls, and
 * taken again where the library says its worker ran on the caller's core. Imports the executor's placement type
 * and cli/workers.ts (the counts between two readings) only.
 */
import { performance } from 'node:perf_hooks';
import type { WorkerPlacement } from '../runtime/wasm/executor.js';
import { workersOver } from './workers.js';

const RUNS = 5;
const MAX_RUNS = 200;
const BUDGET_MS = 20;
/**
 * Untimed back-to-back calls before a multi-thread timing, ms. On the development machine (a 2-vCPU VM) a worker
 * woken after it parked mostly lands on the caller's vCPU, and back to back the kernel moves it off within
 * 0.2-25 ms (a plain C test: docs/PERFORMANCE.md, *Calibration at two threads*). A timing in that window reads
 * one thread's time: such runs pulled the fitted parallel efficiency down to 0.53-0.79, and the model then
 * priced every op that did get both cores as too slow. After the settle, the runs time ops as a program's
 * back-to-back ops run.
 */
export const SETTLE_MS = 50;
/**
 * A multi-thread timing is taken again, after a longer settle, where its workers did not have cores of their own
 * (`crowded`): more than this share of their joins ran on the core of the thread that launched the op
 * (WorkerPlacement.joinsOnCaller: the op's threads then ran one after the other), or they ran less than
 * MIN_HELP of their share of its chunks (their cores were busy with other work). The model is fitted to
 * back-to-back ops with each worker on a core of its own and does not price either.
 */
export const PACKED_SHARE = 0.25;
/** The least share of its chunks, as a fraction of the workers' even share ((T - 1) / T), a timing counts as helped. */
export const MIN_HELP = 0.5;
/**
 * The least share of its chunks (as MIN_HELP) below which a timing is taken again, though it counts as helped and
 * stays in the fit if every take falls below it. Runs whose two-thread timings had workers at 31-38% of the chunks
 * (62-76% of their share) through another load fitted an efficiency of 0.43 and priced the held-out runs, made
 * after the load had gone, 21% slow; leaving such timings out of the fit did worse (docs/PERFORMANCE.md,
 * *Calibration at two threads*), so they are timed again instead.
 */
export const RETAKE_HELP = 0.8;
/**
 * Timings taken again at most, per multi-thread timing, after settles of 3 and 9 x SETTLE_MS; the least crowded
 * counts.
 */
export const RETAKES = 2;

/** A timing: ms per call, and at more threads where its workers ran (null: not known, or no op was split). */
export interface Timing {
  ms: number;
  /** The share of the workers' joins on the caller's core. */
  onCaller: number | null;
  /** The share of the split ops' chunks the workers ran. */
  workerChunks: number | null;
  /** How many times it was taken again (0 at one thread and where placement is not known). */
  retakes: number;
}

/**
 * One call's time, `call` repeated. At one thread the smallest of many runs,
 * each the smaller of its wall time and the CPU time the process used (which
 * leaves out the time other work held the core; only where that clock is
 * fine-grained: cpuClockUsable). Short kernels get more calls (up to MAX_RUNS,
 * about BUDGET_MS in all), since a short run is the easiest to disturb. At
 * more threads the median instead: waking a sleeping worker takes a few to
 * tens of microseconds, and the fastest of many runs is the one wake-up that
 * came at once, not what an op pays (with the fastest, the fitted dispatch
 * cost was half the typical one and the model put a second thread on ops it
 * slowed down: bench/cpu-threads.ts). A multi-thread timing starts after
 * SETTLE_MS of untimed calls, so that it times the op as back-to-back ops run
 * it, with the worker on a core of its own; where `placement` tells where the
 * workers ran and they did not have cores of their own (`crowding`: their
 * joins on the caller's core, or too few of the chunks run by them), it is
 * taken again (RETAKES at most, each after a longer settle).
 */
export function timeRuns(
  call: () => void,
  threads: number,
  useCpu: boolean,
  placement?: () => WorkerPlacement | undefined,
): Timing {
  const run = (): number => {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    call();
    const wall = performance.now() - t0;
    if (threads > 1 || !useCpu) return wall;
    const cpu = process.cpuUsage(cpu0);
    return Math.min(wall, (cpu.user + cpu.system) / 1e3);
  };
  // The first run is untimed: it sizes the count.
  if (threads <= 1) {
    let best = Infinity;
    for (let i = 0, n = runsFor(run()); i < n; i++) best = Math.min(best, run());
    return { ms: best, onCaller: null, workerChunks: null, retakes: 0 };
  }
  let kept: Timing | undefined;
  let keptCrowding = Infinity;
  let take = 0;
  for (; ; take++) {
    // A longer settle each retake: a packed worker that 50 ms of back-to-back calls left in place stayed so
    // through two more (docs/PERFORMANCE.md, *Where the workers ran*).
    const settle = SETTLE_MS * 3 ** take;
    for (const t0 = performance.now(); performance.now() - t0 < settle;) call();
    const before = placement?.();
    const all = Array.from({ length: runsFor(run()) }, run).sort((a, b) => a - b);
    const t = { ms: all[all.length >> 1]!, ...placementBetween(before, placement?.()), retakes: 0 };
    const crowded = crowding(t, threads, RETAKE_HELP);
    if (kept === undefined || crowded < keptCrowding) [kept, keptCrowding] = [t, crowded];
    if (crowded === 0 || take === RETAKES) break;
  }
  return { ...kept!, retakes: take };
}

/**
 * How far a timing on `threads` threads was from its workers having cores of their own: 0 where it was not
 * crowded (or nothing is known), else the larger of its share of joins on the caller's core and what its workers
 * fell short of their even share of chunks. `minHelp` is the share of the chunks below which it counts as crowded:
 * MIN_HELP for leaving it out of the fit, RETAKE_HELP for timing it again.
 */
export function crowding(
  t: Pick<Timing, 'onCaller' | 'workerChunks'>,
  threads: number,
  minHelp: number = MIN_HELP,
): number {
  const onCaller = t.onCaller ?? 0;
  const help = t.workerChunks === null ? 1 : Math.min(1, t.workerChunks / ((threads - 1) / threads));
  return onCaller > PACKED_SHARE || help < minHelp ? Math.max(onCaller, 1 - help) : 0;
}

/** Where the workers ran between two counts (null where not known, or no op was split or joined). */
export function placementBetween(
  before: WorkerPlacement | undefined,
  after: WorkerPlacement | undefined,
): Pick<Timing, 'onCaller' | 'workerChunks'> {
  const d = workersOver(before, after);
  if (!d) return { onCaller: null, workerChunks: null };
  return {
    onCaller: d.joins > 0 && d.joinsOnCaller !== null ? d.joinsOnCaller / d.joins : null,
    workerChunks: d.chunks > 0 ? d.workerChunks / d.chunks : null,
  };
}

/** Timed calls of the probe per reading (after one untimed); the fastest counts. */
const PROBE_RUNS = 5;

/**
 * The machine's speed through a run: a fixed small kernel (the probe) read
 * before and after each timing. On a shared VM one run of a minute passed
 * through spells 20-40% slower or faster than others, over many timings in a
 * row (docs/PERFORMANCE.md, *The machine's speed through a run*), which no
 * repeat within one timing can see, and the fit then prices one spell's
 * kernels against another's. The readings say how steady the machine was, so
 * that a run through such spells is known as one; the times are not scaled
 * by them (scaling by a one-thread probe made the two-thread fit worse on a
 * steady machine: the same page).
 */
export class SpeedProbe {
  private readonly readings: number[] = [];
  /** The median of `readings`, until the next reading (calibrate asks it once per row). */
  private typical: number | undefined;

  constructor(private readonly call: () => void) {}

  /** One reading: the fastest of PROBE_RUNS calls, ms. */
  read(): number {
    this.call();
    let best = Infinity;
    for (let i = 0; i < PROBE_RUNS; i++) {
      const t0 = performance.now();
      this.call();
      best = Math.min(best, performance.now() - t0);
    }
    this.readings.push(best);
    this.typical = undefined;
    return best;
  }

  /** `timing` between two readings, with the faster of them (a reading is only ever slowed by what disturbs it). */
  around<T>(timing: () => T): T & { probeMs: number } {
    const before = this.read();
    const t = timing();
    return { ...t, probeMs: Math.min(before, this.read()) };
  }

  /** The median reading so far, ms: the machine's typical speed in the run. */
  median(): number {
    if (this.typical === undefined) {
      const s = [...this.readings].sort((a, b) => a - b);
      this.typical = s.length === 0 ? NaN : s[s.length >> 1]!;
    }
    return this.typical;
  }

  /** A reading's speed relative to the median (above 1: faster than typical). */
  speed(probeMs: number): number {
    return this.median() / probeMs;
  }
}

/** Speeds outside this range of the run's median count as an unsteady spell (SpeedProbe). */
export const STEADY = { from: 0.8, to: 1.25 } as const;

/** Calls to time after a first run of `firstMs`. */
function runsFor(firstMs: number): number {
  return Math.max(RUNS, Math.min(MAX_RUNS, Math.ceil(BUDGET_MS / Math.max(firstMs, 1e-3))));
}

/**
 * The fit's timings to leave out: those still crowded after their retakes (`crowding`) measure the scheduler and
 * the other work on the machine, which the model does not price; none where every multi-thread timing was,
 * which would leave the fit nothing to price threads by.
 */
export function crowdedLeftOut<R extends { threads: number; workersOnCaller?: number; workerChunks?: number }>(
  rows: readonly R[],
): Set<R> {
  const crowded = rows.filter((r) => r.threads > 1 && crowdingOf(r) > 0);
  return crowded.length < rows.filter((r) => r.threads > 1).length ? new Set(crowded) : new Set();
}

/** crowding of a row's recorded figures. */
export const crowdingOf = (r: { threads: number; workersOnCaller?: number; workerChunks?: number }): number =>
  crowding({ onCaller: r.workersOnCaller ?? null, workerChunks: r.workerChunks ?? null }, r.threads);

/**
 * Whether process CPU time is fine-grained enough to bound a run's time:
 * where the kernel accounts it in scheduler ticks, a 0.3 ms busy loop reads
 * 0 or a whole tick (several ms), and only wall time is used.
 */
export function cpuClockUsable(): boolean {
  for (let i = 0; i < 5; i++) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    while (performance.now() - t0 < 0.3);
    const wall = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const ms = (cpu.user + cpu.system) / 1e3;
    // Preemption may shrink the CPU share of the spin, never to 0, and never beyond the wall time.
    if (!(ms > 0 && ms <= 1.5 * wall + 0.05)) return false;
  }
  return true;
}

/**
 * What the multi-thread timings said of their workers' placement (undefined where the backend cannot tell): how
 * many there were, how many were taken again, how many kept a crowded timing (cli/calibrate-timing.ts
 * `crowding`), and how many of those the fit left out.
 */
export function placementSummary(
  rows: readonly { threads: number; workersOnCaller?: number; workerChunks?: number; retakes?: number }[],
  leftOutOfFit: number,
): { timings: number; retaken: number; crowdedKept: number; leftOutOfFit: number } | undefined {
  const known = rows.filter((r) => r.retakes !== undefined);
  if (known.length === 0) return undefined;
  return {
    timings: known.length,
    retaken: known.filter((r) => r.retakes! > 0).length,
    crowdedKept: known.filter((r) => crowdingOf(r) > 0).length,
    leftOutOfFit,
  };
}

/** The timings' speeds (SpeedProbe): the slowest and fastest, and how many lay outside STEADY. */
export function speedSummary(rows: readonly { speed?: number }[]): {
  timings: number;
  slowest: number;
  fastest: number;
  unsteady: number;
} {
  const speeds = rows.map((r) => r.speed!);
  return {
    timings: speeds.length,
    slowest: Math.min(...speeds),
    fastest: Math.max(...speeds),
    unsteady: speeds.filter((x) => x < STEADY.from || x > STEADY.to).length,
  };
}
