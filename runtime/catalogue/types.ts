/** What the catalogue knows of one implementation. */
import type { DeviceSpec } from '../system/types.js';
import type { FpgaDesignName, FpgaResources } from '../plan/fpga-designs.js';
import type { PlanOp } from '../plan/types.js';

export interface ImplEntry {
  /** One line for reports and docs. */
  summary: string;
  /**
   * One run of `op` on one instance of `d`, launch overhead excluded, ms (Infinity: cannot run it). `threads`
   * (CPU): on exactly that many, as a calibration run measured it; absent, on the count the model picks.
   */
  ms(op: PlanOp, d: DeviceSpec, threads?: number): number;
}

export interface FpgaImplEntry extends ImplEntry {
  /** The HLS design behind it; its resources are the design's estimates (runtime/plan/fpga-designs.ts). */
  design: FpgaDesignName;
  resources(): FpgaResources;
}
