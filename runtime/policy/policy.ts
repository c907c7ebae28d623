/**
 * The switching policy: switch to the partition the guards pick only when
 * the predicted gain per run times the runs expected to remain exceeds the
 * switching cost, and never within the minimum dwell after a switch. Runs
 * expected to remain are estimated from the input stream itself: the mean
 * length of the streaks of identical guard picks seen so far (capped by the
 * horizon), so an alternating stream expects one run and does not flap.
 */
export interface PolicyOptions {
  /** Most runs a switch may amortise over (default 50). */
  horizon?: number;
  /** Runs to stay on a partition after switching to it (default 2). */
  minDwell?: number;
  /** Runs expected before any streak has ended (default: the horizon). */
  initialExpectedRuns?: number;
}

export interface PolicyInput {
  /** Objective value per run of the running partition and of the guards' pick on this input (Infinity: cannot run). */
  current: number;
  candidate: number;
  /** Switch cost in the objective's units. */
  cost: number;
  /** The guards' pick differs from the running partition. */
  differs: boolean;
}

export interface PolicyDecision {
  switch: boolean;
  reason: string;
  gainPerRun: number;
  expectedRuns: number;
}

const f3 = (x: number): string => (Number.isFinite(x) ? Number(x.toPrecision(3)).toString() : String(x));

export class SwitchPolicy {
  readonly horizon: number;
  readonly minDwell: number;
  private readonly initial: number;
  private streaks = 0;
  private streakRuns = 0;
  private lastPick: string | undefined;
  private streak = 0;
  private sinceSwitch = Infinity;

  constructor(o: PolicyOptions = {}) {
    this.horizon = o.horizon ?? 50;
    this.minDwell = o.minDwell ?? 2;
    this.initial = o.initialExpectedRuns ?? this.horizon;
    if (!(this.horizon >= 1) || !(this.minDwell >= 0))
      throw new RangeError('policy: horizon must be >= 1 and minDwell >= 0');
  }

  /** A copy whose decisions do not touch this one (explain). */
  clone(): SwitchPolicy {
    return Object.assign(Object.create(SwitchPolicy.prototype) as SwitchPolicy, this);
  }

  /** Records the guards' pick for this input (before deciding): streak statistics. */
  observe(pick: string): void {
    if (pick === this.lastPick) this.streak++;
    else {
      if (this.lastPick !== undefined) {
        this.streaks++;
        this.streakRuns += this.streak;
      }
      this.lastPick = pick;
      this.streak = 1;
    }
  }

  /** Runs of the current kind expected from now on, this one included. */
  expectedRuns(): number {
    const mean = this.streaks > 0 ? this.streakRuns / this.streaks : this.initial;
    return Math.min(this.horizon, Math.max(1, mean - this.streak + 1));
  }

  decide(x: PolicyInput, units: string): PolicyDecision {
    const expectedRuns = this.expectedRuns();
    const gainPerRun = x.current - x.candidate;
    const no = (reason: string): PolicyDecision => ({ switch: false, reason, gainPerRun, expectedRuns });
    const yes = (reason: string): PolicyDecision => ({ switch: true, reason, gainPerRun, expectedRuns });
    if (!x.differs) return no('the guards pick the running partition');
    if (!Number.isFinite(x.current)) return yes('the running partition cannot run this input');
    if (!Number.isFinite(x.candidate)) return no('the guards\u2019 pick cannot run this input');
    if (this.sinceSwitch < this.minDwell)
      return no(`minimum dwell: ${this.sinceSwitch} of ${this.minDwell} runs since the last switch`);
    const total = gainPerRun * expectedRuns;
    if (total > x.cost)
      return yes(
        `gain ${f3(gainPerRun)} ${units}/run x ${f3(expectedRuns)} expected runs = ${f3(total)} ${units} > switch cost ${f3(x.cost)} ${units}`,
      );
    return no(
      `gain ${f3(gainPerRun)} ${units}/run x ${f3(expectedRuns)} expected runs = ${f3(total)} ${units} <= switch cost ${f3(x.cost)} ${units}`,
    );
  }

  /** Records that this run happened, on a partition switched to now or not. */
  ran(switched: boolean): void {
    this.sinceSwitch = switched ? 1 : this.sinceSwitch + 1;
  }
}
