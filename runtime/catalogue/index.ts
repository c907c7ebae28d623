/**
 * The catalogue of implementations: per device kind, every implementation an
 * op can run as, with its cost and (FPGA) resources. The planner costs an op
 * only in the implementations its program emitted (PlanOp.impls, recorded by
 * codegen/implementations.ts); plan.json names them; the native libraries
 * and the wasm executor map the same names to entry points.
 */
import type { PlanOp } from '../plan/types.js';
import type { DeviceKind, DeviceSpec } from '../system/types.js';
import { historyMs } from '../history/fit.js';
import { CPU_CATALOGUE, cpuThreadsFor } from './cpu.js';
import { FPGA_CATALOGUE } from './fpga.js';
import { GPU_CATALOGUE, gpuModelled } from './gpu.js';
import { IMPLEMENTATIONS, type FpgaImpl, type ImplByKind } from './names.js';
import type { FpgaImplEntry, ImplEntry } from './types.js';

export * from './names.js';
export { cpuImplOf, cpuThreadsFor, MIN_SPLIT_ROWS } from './cpu.js';
export type { FpgaImplEntry, ImplEntry } from './types.js';

export const CATALOGUE: { readonly [K in DeviceKind]: Readonly<Record<ImplByKind[K], ImplEntry>> } = {
  cpu: CPU_CATALOGUE,
  gpu: GPU_CATALOGUE,
  fpga: FPGA_CATALOGUE,
};

/** The implementations a compiled program has of one op, per device kind (empty: the op cannot run there). */
export type OpImpls = { readonly [K in DeviceKind]: readonly ImplByKind[K][] };

export interface ImplTime {
  impl: string;
  ms: number;
}

/**
 * What one call of `op` on one instance of `d` costs whatever its work,
 * us: the launch, or for a sparse-driven op on a GPU with a gpuModel the
 * floor of a sparse kernel call (launch included). Paid per instance and
 * per trip, never divided by a split.
 */
export function callOverheadUs(op: PlanOp, d: DeviceSpec): number {
  return gpuModelled(op, d) ? d.gpuModel!.sparseFloorUs : d.launchOverheadUs;
}

/**
 * The time of each implementation of `op` that its program has for the kind of `d` (per-call overhead excluded).
 * `threads` (CPU): every op on exactly that many (a calibration run); absent, the model's pick (ImplEntry.ms).
 */
export function implTimes(op: PlanOp, d: DeviceSpec, threads?: number): ImplTime[] {
  return (op.impls[d.kind] as readonly string[]).map((impl) => ({ impl, ms: implMs(op, d, impl, threads) }));
}

/** One of implTimes' entries: the time of implementation `impl` (one of op.impls for d's kind). */
export function implMs(op: PlanOp, d: DeviceSpec, impl: string, threads?: number): number {
  const table = CATALOGUE[d.kind] as Readonly<Record<string, ImplEntry>>;
  // Measured runs of this kind, size and imbalance, where there are enough of them (runtime/history); the formula otherwise.
  return (
    (threads === undefined ? historyMs(op, impl, d, () => pricedThreads(op, d)) : undefined) ??
    table[impl]!.ms(op, d, threads)
  );
}

/**
 * The threads the planner prices `op` on, where the device has threads (the CPU: the model's pick, which the
 * executors run it on, so that its runs' history bucket is the one looked up); undefined for devices.
 */
function pricedThreads(op: PlanOp, d: DeviceSpec): number | undefined {
  switch (d.kind) {
    case 'cpu':
      return cpuThreadsFor(op, d);
    case 'gpu':
    case 'fpga':
      return undefined;
  }
}

export function fpgaEntry(impl: FpgaImpl): FpgaImplEntry {
  return FPGA_CATALOGUE[impl];
}

/**
 * Checks data (plan.json, a PlanSpec from elsewhere) against the catalogue:
 * every kind present, every name known. Returns the problem, if any.
 */
export function checkOpImpls(x: unknown, where: string): string | undefined {
  if (typeof x !== 'object' || x === null) return `${where}: expected an object of implementations per device kind`;
  for (const kind of Object.keys(IMPLEMENTATIONS) as DeviceKind[]) {
    const list = (x as Record<string, unknown>)[kind];
    if (!Array.isArray(list)) return `${where}.${kind}: expected a list of implementation names`;
    for (const n of list)
      if (typeof n !== 'string' || !(IMPLEMENTATIONS[kind] as readonly string[]).includes(n))
        return `${where}.${kind}: unknown implementation ${JSON.stringify(n)} (known: ${IMPLEMENTATIONS[kind].join(', ')})`;
  }
  return undefined;
}
