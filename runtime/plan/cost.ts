/**
 * Predicted time of one op on `count` instances of a device: the fastest of
 * the implementations its program emitted for the device's kind (costed by
 * runtime/catalogue), plus the per-call overhead (launch, or a GPU's sparse
 * call floor), split by rows across instances, times the op's trips. Constants and formulas:
 * docs/COST-MODEL.md (runtime/plan/model.ts).
 */
import { callOverheadUs, implMs, implTimes } from '../catalogue/index.js';
import type { DeviceSpec } from '../system/types.js';
import { MODEL } from './model.js';
import type { PlanOp } from './types.js';

export { MODEL, DTYPE_SIZE, cpuModelled, cpuTerms, cpuWorkNs, cpuThreadShare, type CpuTerms } from './model.js';

export interface VariantTime {
  variant: string;
  ms: number;
}

/** Every emitted implementation's time for one run of `op` on one instance (per-call overhead included). */
export function variantTimes(op: PlanOp, d: DeviceSpec, threads?: number): VariantTime[] {
  const call = callOverheadUs(op, d) / 1e3;
  return implTimes(op, d, threads).map((v) => ({ variant: v.impl, ms: v.ms + call }));
}

/**
 * The fastest implementation of `op` on `count` instances splitting its rows
 * by nnz, all trips included; Infinity (variant '') when its program has no
 * implementation of it for this device kind.
 */
export function bestOpTime(op: PlanOp, d: DeviceSpec, count: number, threads?: number): VariantTime {
  return onInstances(op, d, fastestVariant(op, d, threads), count);
}

/** The fastest implementation of one run of `op` on one instance (per-call overhead included); undefined when there is none. */
export function fastestVariant(op: PlanOp, d: DeviceSpec, threads?: number): VariantTime | undefined {
  // variantTimes' figures one at a time, the first of the lowest kept: a runtime prices every op of a new pattern
  // on every device, and the two arrays variantTimes builds were a tenth of a new pattern's garbage.
  const call = callOverheadUs(op, d) / 1e3;
  let bestImpl: string | undefined;
  let bestMs = 0;
  for (const impl of op.impls[d.kind] as readonly string[]) {
    const ms = implMs(op, d, impl, threads) + call;
    if (bestImpl === undefined || ms < bestMs) {
      bestImpl = impl;
      bestMs = ms;
    }
  }
  return bestImpl === undefined ? undefined : { variant: bestImpl, ms: bestMs };
}

/**
 * An implementation's time for one run on one instance (fastestVariant) as `count` instances splitting the op's
 * rows by nnz take it, all trips included: the implementations' times do not depend on the count, so a planner
 * weighing one op on 1 and 2 instances of a device costs them once.
 */
export function onInstances(op: PlanOp, d: DeviceSpec, best: VariantTime | undefined, count: number): VariantTime {
  if (!best) return { variant: '', ms: Infinity };
  // Each instance pays the per-call overhead in full; only the work is split.
  const launch = callOverheadUs(op, d) / 1e3;
  const work = best.ms - launch;
  const split = count === 1 ? work : (work / count) * (1 + MODEL.splitOverhead * (count - 1));
  return { variant: best.variant, ms: op.trips * (split + launch) };
}
