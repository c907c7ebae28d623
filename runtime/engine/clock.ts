/**
 * The runtime's model clock and its trace: each input's stages placed on
 * the devices they use with the cost model's times (a stage frees its
 * devices after its period, so pipelined inputs overlap), switches drawn as
 * the drain plus migration and bitstream time, and beside them the stages as
 * they really ran (measured wall time, named with their backend).
 */
import { placeStages, type TraceRecorder } from './trace.js';
import type { StageRun } from '../exec/index.js';
import type { Mapping } from '../plan/types.js';
import { stageInstances } from '../policy/cost.js';
import type { Part } from './choose.js';

export class ModelClock {
  private readonly free = new Map<string, number>();
  lastEnd = 0;

  constructor(private readonly trace: TraceRecorder | undefined) {}

  /** Places one input; returns when it entered and left the pipeline on the model clock. */
  place(
    p: Part,
    m: Mapping,
    switched: boolean,
    costMs: number,
    pipelined: boolean,
    name: string,
  ): { start: number; end: number } {
    const tr = this.trace;
    if (switched) {
      // The old pipeline drains, then data moves and bitstreams load.
      const at = this.lastEnd;
      tr?.instant('runtime', `switch to partition ${p.id}`, at, { label: p.label });
      tr?.slice('runtime', 'compute', 'switch cost', at, costMs);
      for (const k of [...this.free.keys()]) this.free.set(k, at + costMs);
      for (const i of stageInstances(p.choices).flat()) this.free.set(i, at + costMs);
    }
    const t = placeStages(tr, this.free, m.stages, pipelined ? 0 : this.lastEnd, name, { partition: p.id });
    this.lastEnd = Math.max(this.lastEnd, t.end);
    return t;
  }

  /** The stages as they ran, on the measured track of each instance. */
  measured(name: string, runs: readonly StageRun[]): void {
    for (const r of runs)
      for (const d of r.devices)
        this.trace?.slice(d, 'measured', `${name} ${r.ops.join('+')} [${r.backend}]`, r.startMs, r.ms, {
          backend: r.backend,
          bytesIn: r.bytesIn,
          bytesOut: r.bytesOut,
          clock: 'measured',
        });
  }
}
