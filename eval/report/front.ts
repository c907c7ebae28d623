/**
 * The simulated figures of a program's mappings: which of them no other
 * beats on both period and energy (the front the plot joins), and each
 * objective's best. The planner ranks by its own cost model; the event
 * simulation can reorder that, so the page's "best" is chosen here, on the
 * figures it plots, and always lies on the simulated front.
 */

export interface SimFigures {
  periodMs: number;
  energyJ: number;
  latencyMs: number;
}

/** Whether a is at least as good as b on period and energy and better on one of them. */
export const dominates = (a: SimFigures, b: SimFigures): boolean =>
  a.periodMs <= b.periodMs && a.energyJ <= b.energyJ && (a.periodMs < b.periodMs || a.energyJ < b.energyJ);

/** For each point, whether no other point dominates it. */
export function onFront(pts: readonly SimFigures[]): boolean[] {
  return pts.map((p) => !pts.some((q) => dominates(q, p)));
}

const lexMin = (pts: readonly SimFigures[], keys: readonly (keyof SimFigures)[]): number => {
  let best = 0;
  for (let i = 1; i < pts.length; i++) {
    for (const k of keys) {
      if (pts[i]![k] < pts[best]![k]) {
        best = i;
        break;
      }
      if (pts[i]![k] > pts[best]![k]) break;
    }
  }
  return best;
};

/**
 * Each objective's best point, by index. Ties on the objective's own figure
 * go to the other axis, so the throughput and energy picks are never
 * dominated; the latency pick is on the front only when latency agrees.
 */
export function bestPerObjective(pts: readonly SimFigures[]): { throughput: number; energy: number; latency: number } {
  if (pts.length === 0) throw new Error('bestPerObjective: no points');
  return {
    throughput: lexMin(pts, ['periodMs', 'energyJ']),
    energy: lexMin(pts, ['energyJ', 'periodMs']),
    latency: lexMin(pts, ['latencyMs', 'periodMs', 'energyJ']),
  };
}
