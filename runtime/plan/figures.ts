/**
 * What a mapping's figures mean and how they are put together from its
 * stages (docs/COST-MODEL.md, "Stream, period and energy"):
 *
 * - period: the steady state's time between inputs, the longest of the
 *   stages' periods and of the root complex's time for one period's host
 *   traffic (every stage's copies share the host's root complex);
 * - time per input over a finite stream of N inputs: the first input takes
 *   the latency, each further one a period, so (latency + (N - 1) period) / N;
 * - device energy per input (what NVML / xbutil measure while kernels run):
 *   each instance the mapping uses draws its active power while its kernels
 *   run and its waiting (powered-up) power for the rest of the time per input;
 * - system energy per input: device energy plus the idle power of every
 *   instance the mapping leaves unused, the host included, over the same time.
 *
 * Every function here is monotone in the partial figures it is given, which
 * is what keeps the DP's pruning exact (runtime/plan/dp.ts).
 */
import type { SystemSpec } from '../system/types.js';
import type { Objective } from './types.js';

export const ENERGY_SCOPES = ['device', 'system'] as const;
/** Which devices a mapping's energy counts: those it uses (`device`) or the whole box (`system`). */
export type EnergyScope = (typeof ENERGY_SCOPES)[number];

/** How many inputs the figures are for: a count, or `unbounded` (the steady state alone). */
export type StreamLength = number | 'unbounded';

/**
 * The defaults of `dype plan`, `dype run`, `dype ir`, `dype compile` and the
 * generated runtime when nothing is said (docs/CLI.md): energy of the whole
 * box, as the planner counted it before the scope existed, and the steady
 * state of a long stream. `dype eval` plans for the simulation's stream
 * instead (eval/sim/params.ts).
 */
export const DEFAULT_ENERGY_SCOPE: EnergyScope = 'system';
export const DEFAULT_STREAM_LENGTH: StreamLength = 'unbounded';

/** How figures are counted: the energy scope and the stream length. */
export interface Accounting {
  energyScope: EnergyScope;
  streamLength: StreamLength;
}

/** What the planner optimises, and how it counts the figures. */
export interface PlanGoal extends Accounting {
  objective: Objective;
}

/** A stream length is a positive integer or `unbounded`; anything else is a programming error here (the CLI checks user input). */
export function checkStreamLength(n: StreamLength): void {
  if (n !== 'unbounded' && !(Number.isSafeInteger(n) && n >= 1))
    throw new Error(`stream length must be a positive integer or 'unbounded', got ${String(n)}`);
}

/** Time per input over a stream of `n` inputs: fill (one latency), then one period per further input. */
export function perInputMs(periodMs: number, latencyMs: number, n: StreamLength): number {
  return n === 'unbounded' ? periodMs : (latencyMs + (n - 1) * periodMs) / n;
}

/** Time the host's root complex needs for `bytes` (0 when the system does not model it). */
export function rootComplexMs(sys: SystemSpec, bytes: number): number {
  const gbs = sys.devices.find((d) => d.kind === 'cpu')?.rootComplexGBs;
  return gbs === undefined || bytes <= 0 ? 0 : (bytes / (gbs * 1e9)) * 1e3;
}

/** Draw of the instances a mapping uses (`used[s]` of device s) while they wait inside the pipeline, W. */
export function waitingDrawW(sys: SystemSpec, used: readonly number[]): number {
  return sys.devices.reduce((a, d, s) => a + used[s]! * d.waitingPowerW, 0);
}

/** Draw of the instances a mapping leaves unused, the host included when no stage runs there, W. */
export function unusedIdleW(sys: SystemSpec, used: readonly number[]): number {
  return sys.devices.reduce((a, d, s) => a + (d.count - used[s]!) * d.idlePowerW, 0);
}

/** A mapping's figures as its stages add up (the DP's label). */
export interface PartialFigures {
  /** The longest stage's period. */
  stagePeriodMs: number;
  /** Root-complex time of every stage's host traffic, summed. */
  rootMs: number;
  latencyMs: number;
  /** Sum over stages of instances x kernel time x (active - waiting power), J: the energy above the waiting draw. */
  activeJ: number;
}

/** A whole mapping's figures (types.ts's Mapping adds its stages and peak power). */
export interface Figures {
  /** Steady-state time between inputs: the longest stage period, or rootComplexMs when longer. */
  periodMs: number;
  /** One period's host traffic (every stage's) over the root complex's bandwidth; 0 when the system does not model it. */
  rootComplexMs: number;
  latencyMs: number;
  /** The stream the per-input figures are for. */
  streamLength: StreamLength;
  /** Time per input over the stream: (latency + (N - 1) x period) / N; the period when unbounded. The throughput objective. */
  perInputMs: number;
  /** The scope energyJ is counted in (the energy objective's). */
  energyScope: EnergyScope;
  /** Energy per input over the stream in energyScope: deviceEnergyJ or systemEnergyJ. */
  energyJ: number;
  /** The instances the mapping uses: active power while their kernels run, waiting power otherwise. */
  deviceEnergyJ: number;
  /** deviceEnergyJ plus the idle power of every other instance, the host included. */
  systemEnergyJ: number;
}

/**
 * The figures of a whole mapping using `used[s]` instances of each device.
 * Each is a sum, max or non-negative multiple of the partial figures, so a
 * partial mapping no worse in all four stays no worse in all of these.
 */
export function figures(sys: SystemSpec, used: readonly number[], l: PartialFigures, acct: Accounting): Figures {
  const periodMs = Math.max(l.stagePeriodMs, l.rootMs);
  const per = perInputMs(periodMs, l.latencyMs, acct.streamLength);
  const deviceEnergyJ = l.activeJ + (per / 1e3) * waitingDrawW(sys, used);
  const systemEnergyJ = deviceEnergyJ + (per / 1e3) * unusedIdleW(sys, used);
  return {
    periodMs,
    rootComplexMs: l.rootMs,
    latencyMs: l.latencyMs,
    streamLength: acct.streamLength,
    perInputMs: per,
    energyScope: acct.energyScope,
    energyJ: energyIn(acct.energyScope, deviceEnergyJ, systemEnergyJ),
    deviceEnergyJ,
    systemEnergyJ,
  };
}

/** The figure of a scope; every scope is handled (a new one fails to compile here). */
export function energyIn(scope: EnergyScope, device: number, system: number): number {
  switch (scope) {
    case 'device':
      return device;
    case 'system':
      return system;
    default: {
      const never: never = scope;
      throw new Error(`unknown energy scope ${String(never)}`);
    }
  }
}
