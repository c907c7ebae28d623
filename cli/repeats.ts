/**
 * How `dype run` reports the repeat regions a run went through: trips, and
 * for a convergence loop whether its test stopped it or it hit the maximum.
 */
import type { RepeatTrips } from '../runtime/converge.js';

/** Why a region stopped: its test held, it hit its maximum without converging, or it is a plain `repeat N`. */
export type RepeatStop = 'converged' | 'max_trips' | 'count';

export function repeatStop(r: RepeatTrips): RepeatStop {
  if (!r.until) return 'count';
  return r.converged === r.runs ? 'converged' : 'max_trips';
}

export function untilText(r: RepeatTrips): string | null {
  if (!r.until) return null;
  return r.until.within === undefined ? `${r.until.value} stable` : `${r.until.value} within ${r.until.within}`;
}

/** The `repeats` array of `--json` (snake_case keys). */
export function repeatsJson(rs: readonly RepeatTrips[], estimates?: ReadonlyMap<string, number>): object[] {
  return rs.map((r) => ({
    id: r.id,
    until: untilText(r),
    max_trips: r.max,
    runs: r.runs,
    trips: r.trips,
    converged: r.until ? r.converged === r.runs : null,
    stop: repeatStop(r),
    // The planner's prior before this run; the partition reported is costed at the trips observed.
    ...(estimates?.has(r.id) ? { estimated_trips: estimates.get(r.id) } : {}),
  }));
}

export function repeatText(r: RepeatTrips): string {
  const u = untilText(r);
  const runs = r.runs === 1 ? '' : ` over ${r.runs} runs`;
  if (!u) return `repeat ${r.id}: ${r.trips} trip(s)${runs} (fixed count ${r.max})`;
  const how =
    repeatStop(r) === 'converged'
      ? 'converged'
      : `did not converge: hit the maximum of ${r.max} trips in ${r.runs - r.converged} run(s)`;
  return `repeat ${r.id} until ${u}: ${r.trips} trip(s)${runs}, ${how}`;
}
