/**
 * The stop test of a convergence loop (`repeat N until v stable` or
 * `until v within TOL`), shared by every executor that runs one in this
 * process: the reference interpreter, the loop executor, the wasm executor
 * and the stage engine. Generated CUDA and HLS hosts state the same test in
 * C++ (codegen/cuda/host.ts, hls-templates/host/dype_host.h).
 *
 * `stable`: every element equal to its value before the trip (NaN equals
 * NaN, so a NaN that stays NaN does not keep the loop going). `within TOL`:
 * the L1 norm of the change, sum_i |new_i - old_i|, is at most TOL (the
 * stop test of the usual PageRank power iteration), elements that kept
 * their value (an infinity, a NaN) adding nothing; any other change to or
 * from an infinity or NaN makes the norm infinite or NaN, which never passes.
 */

/** The test as plain data: absent `within` means `stable`. */
export interface UntilTest {
  value: string;
  within?: number;
}

/** Has `cur` stopped changing relative to `prev` (same length)? */
export function converged(prev: ArrayLike<number>, cur: ArrayLike<number>, within: number | undefined): boolean {
  const n = cur.length;
  if (within === undefined) {
    for (let i = 0; i < n; i++) {
      const a = prev[i]!;
      const b = cur[i]!;
      if (a !== b && !(a !== a && b !== b)) return false;
    }
    return true;
  }
  let l1 = 0;
  for (let i = 0; i < n; i++) {
    const a = prev[i]!;
    const b = cur[i]!;
    // Equal infinities differ by NaN under subtraction; they, like a NaN that stays NaN, have not changed.
    if (a !== b && !(a !== a && b !== b)) {
      l1 += Math.abs(b - a);
      // Adding terms of at least 0 never lowers a sum (round to nearest is monotone), so a partial sum past
      // TOL decides the test: a trip far from converging reads a few elements, not all (PageRank on a road
      // graph of 115k rows spent 0.22 ms a trip in the whole sum, nearly its SpMV's time).
      if (l1 > within) return false;
    }
  }
  return l1 <= within;
}

/** What one repeat region did in a run: trips summed over its runs (a nested region runs once per outer trip). */
export interface RepeatTrips {
  id: string;
  /** The maximum trips per run (the count). */
  max: number;
  /** The watched value and tolerance; absent for a plain `repeat N`. */
  until?: UntilTest;
  /** Times the region was entered. */
  runs: number;
  /** Trips over all runs. */
  trips: number;
  /** Runs that stopped on their test before or at the maximum (0 for a plain repeat). */
  converged: number;
}

/** Records one run of a region into `log` (keyed by region id, in first-run order). */
export function recordTrips(
  log: Map<string, RepeatTrips>,
  id: string,
  max: number,
  until: UntilTest | undefined,
  trips: number,
  stopped: boolean,
): void {
  let r = log.get(id);
  if (!r) log.set(id, (r = { id, max, ...(until ? { until } : {}), runs: 0, trips: 0, converged: 0 }));
  r.runs++;
  r.trips += trips;
  if (stopped) r.converged++;
}
