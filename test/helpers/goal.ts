/**
 * The planner's documented defaults (runtime/plan/figures.ts: system
 * energy, an unbounded stream) for tests that vary neither the energy scope
 * nor the stream length. On systems whose waiting power equals their idle
 * power and without a root complex these give the figures the planner gave
 * before the scope and the stream existed.
 */
import {
  DEFAULT_ENERGY_SCOPE,
  DEFAULT_STREAM_LENGTH,
  type Accounting,
  type PlanGoal,
} from '../../runtime/plan/figures.js';
import type { Objective } from '../../runtime/plan/types.js';

export const STEADY: Accounting = { energyScope: DEFAULT_ENERGY_SCOPE, streamLength: DEFAULT_STREAM_LENGTH };

export const goal = (objective: Objective): PlanGoal => ({ objective, ...STEADY });
