/**
 * `dype run --trace FILE`: a Chrome trace-event timeline (Perfetto) of the
 * run. The predicted mapping's stages and transfers per device instance on
 * the cost model's clock, for as many inputs as were run, pipelined (what
 * the sim backend shows for devices this machine lacks), and on a separate
 * process the kernel runs measured on this host.
 */
import { placeStages, TraceRecorder } from '../runtime/engine/trace.js';
import type { Mapping } from '../runtime/plan/types.js';

export function runTrace(m: Mapping, measuredMs: readonly number[], label: string, backend: string): string {
  const tr = new TraceRecorder();
  const free = new Map<string, number>();
  measuredMs.forEach((_, i) =>
    placeStages(tr, free, m.stages, 0, `run ${i + 1}`, { clock: 'cost model', mapping: label }),
  );
  let t = 0;
  measuredMs.forEach((ms, i) => {
    // On the measured track: the compute track of every process is labelled as the cost model's.
    tr.slice(`this host (${backend}, measured)`, 'measured', `run ${i + 1}`, t, ms, { clock: 'measured', backend });
    t += ms;
  });
  return JSON.stringify(tr.toJSON());
}
