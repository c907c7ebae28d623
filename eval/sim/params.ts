/**
 * The simulation's own parameters: what a real box adds on top of the
 * devices' kernel times and that the planner's formulas leave out. Each has
 * its entry in SIM_SOURCES below (the estimates with their reasoning), which
 * docs/COST-MODEL.md's table "Every model parameter" repeats.
 *
 * Facts the planner models too live where the planner reads them, and the
 * simulation reads them there: the root complex's bandwidth in the system
 * file (the host CPU's `rootComplexGBs`), a split's synchronisation cost in
 * runtime/plan/model.ts (`MODEL.splitSyncUs`), the power figures in the
 * system file. The stream length is the simulation's, and `dype eval` plans
 * for it.
 */
import type { ParameterTable } from '../../runtime/plan/parameters.js';

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

/** Where each SIM constant comes from (docs/COST-MODEL.md "Every model parameter"; test/eval/parameters.test.ts). */
export const SIM_SOURCES: ParameterTable = {
  'SIM.streamLength': {
    unit: 'inputs',
    kind: 'experiment',
    source:
      "the experiment's stream: 12 inputs go through each mapping, fill and drain included in the period; every strategy plans for it",
    measuredOn: 'none (a choice of the experiment)',
  },
  'SIM.stageBuffers': {
    unit: 'buffers per stage',
    kind: 'design',
    source: 'double buffering: the next input may be copied in while one computes, as the runtime does',
    measuredOn: 'design',
  },
  'SIM.stageDispatchUs': {
    unit: 'us',
    kind: 'estimate',
    source:
      'estimate: host-side work to hand one input to one stage (stream and event synchronisation, queueing the copies), a few driver calls of a few us each',
    measuredOn: 'none',
  },
  'SIM.dmaPowerFraction': {
    unit: 'of (active - waiting)',
    kind: 'estimate',
    source:
      'estimate: a device whose DMA engines move data draws a tenth of its active increment above its waiting draw',
    measuredOn: 'none',
    max: 1,
  },
};
