/**
 * The simulation's own parameters: what a real box adds on top of the
 * devices' kernel times and that the planner's formulas leave out. Each is
 * an estimate with its reasoning (docs/EVALUATION.md repeats them).
 *
 * Facts the planner models too live where the planner reads them, and the
 * simulation reads them there: the root complex's bandwidth in the system
 * file (the host CPU's `rootComplexGBs`), a split's synchronisation cost in
 * runtime/plan/model.ts (`MODEL.splitSyncUs`), the power figures in the
 * system file. The stream length is the simulation's, and `dype eval` plans
 * for it.
 */
export const SIM = {
  /** Inputs streamed through the mapping; fill and drain are part of the measured period. */
  streamLength: 12,
  /** Input buffers per stage: the next input may be copied in while one computes (double buffering). */
  stageBuffers: 2,
  /** Host-side work to hand one input to one stage (stream/event synchronisation, queueing the copies), us. */
  stageDispatchUs: 15,
  /** A device moving data over DMA draws this fraction of (active - waiting) power above its waiting draw. */
  dmaPowerFraction: 0.1,
} as const;
