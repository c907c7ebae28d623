/**
 * The options every planning command takes for its goal: `--objective`,
 * `--energy-scope` and `--stream` (docs/CLI.md). Kept apart from
 * planning.ts so that commands parse them without loading the planner.
 */
import {
  DEFAULT_ENERGY_SCOPE,
  DEFAULT_STREAM_LENGTH,
  ENERGY_SCOPES,
  type EnergyScope,
  type PlanGoal,
  type StreamLength,
} from '../runtime/plan/figures.js';
import type { Objective } from '../runtime/plan/types.js';
import { usage } from './errors.js';

export function parseObjective(s: string | undefined): Objective {
  const o = s ?? 'throughput';
  if (o !== 'throughput' && o !== 'energy' && o !== 'latency')
    throw usage(`--objective expects throughput, energy or latency, got '${o}'`);
  return o;
}

/** `--energy-scope device|system`; absent: DEFAULT_ENERGY_SCOPE (docs/CLI.md). */
export function parseEnergyScope(s: string | undefined): EnergyScope {
  if (s === undefined) return DEFAULT_ENERGY_SCOPE;
  const scope = ENERGY_SCOPES.find((x) => x === s);
  if (scope === undefined) throw usage(`--energy-scope expects ${ENERGY_SCOPES.join(' or ')}, got '${s}'`);
  return scope;
}

/** `--stream N|unbounded`: the number of inputs the figures are for; absent: DEFAULT_STREAM_LENGTH (docs/CLI.md). */
export function parseStreamLength(s: string | undefined): StreamLength {
  if (s === undefined) return DEFAULT_STREAM_LENGTH;
  if (s === 'unbounded') return s;
  const n = /^\d+$/.test(s) ? Number(s) : NaN;
  if (!Number.isSafeInteger(n) || n < 1)
    throw usage(`--stream expects a positive whole number of inputs or 'unbounded', got '${s}'`);
  return n;
}

export interface GoalOptions {
  objective?: string;
  energyScope?: string;
  stream?: string;
}

export function parseGoal(o: GoalOptions): PlanGoal {
  return {
    objective: parseObjective(o.objective),
    energyScope: parseEnergyScope(o.energyScope),
    streamLength: parseStreamLength(o.stream),
  };
}
