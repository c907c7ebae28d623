/**
 * The simulation's own parameters: what a real box adds on top of the
 * devices' kernel times and that the planner's formulas leave out. Each is
 * an estimate with its reasoning (docs/EVALUATION.md repeats them).
 */
export const SIM = {
  /** Inputs streamed through the mapping; fill and drain are part of the measured period. */
  streamLength: 12,
  /** Input buffers per stage: the next input may be copied in while one computes (double buffering). */
  stageBuffers: 2,
  /**
   * Aggregate bandwidth of the host's PCIe root complex, GB/s, shared by every
   * host<->device and peer-to-peer transfer (estimate: the I/O die of a
   * PCIe 4.0 server moves tens of GB/s in aggregate before host memory and
   * the IOMMU throttle concurrent DMA; 48 GB/s taken).
   */
  rootComplexGBs: 48,
  /** Host-side work to hand one input to one stage (stream/event synchronisation, queueing the copies), us. */
  stageDispatchUs: 15,
  /** Synchronising the instances of a data-parallel stage after each op, us (a cross-device event wait). */
  splitSyncUs: 10,
  /** A device moving data over DMA draws this fraction of (active - idle) power above idle. */
  dmaPowerFraction: 0.1,
} as const;
