/**
 * Every time a user sees says whether it was measured or modelled (the
 * outputs that need no run of the CLI; `dype run`, `plan` and `run
 * --project` are checked where they run: test/planning/plan-cli.test.ts,
 * test/cli/project.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { runTrace } from '../../cli/run-trace.js';
import { summarise, summaryTable } from '../../eval/summary.js';
import type { Mapping } from '../../runtime/plan/types.js';

interface TraceEvent {
  name: string;
  ph: string;
  pid: number;
  tid: number;
  args?: Record<string, unknown>;
}

describe('labelled clocks', () => {
  it('dype run --trace draws the measured runs on the measured track, not on a track named modelled', () => {
    const stage = { ops: ['op0'], devices: ['cpu0'], computeMs: 0.5, transferMs: 0.1, timeMs: 0.6, periodMs: 0.6 };
    const mapping = { stages: [stage] } as unknown as Mapping;
    const { traceEvents } = JSON.parse(runTrace(mapping, [1.5, 1.25], 'spmv on this-machine', 'native')) as {
      traceEvents: TraceEvent[];
    };
    const trackName = (e: TraceEvent): string =>
      traceEvents.find((m) => m.ph === 'M' && m.name === 'thread_name' && m.pid === e.pid && m.tid === e.tid)!.args!
        .name as string;
    const measured = traceEvents.filter((e) => e.ph === 'X' && e.args?.['clock'] === 'measured');
    expect(measured.map((e) => e.name)).toEqual(['run 1', 'run 2']);
    for (const e of measured) {
      expect(trackName(e)).toBe('measured');
      expect(e.args?.['backend']).toBe('native');
    }
    const modelled = traceEvents.filter((e) => e.ph === 'X' && e.args?.['clock'] !== 'measured');
    expect(modelled.length).toBeGreaterThan(0);
    for (const e of modelled) expect(trackName(e)).toMatch(/\(modelled\)$/);
  });

  it('dype eval says its figures are modelled', () => {
    expect(summaryTable(summarise([]))).toContain(
      'Every figure is modelled (the cost model and the event simulation of the systems the presets describe); nothing ran on a device.',
    );
  });
});
