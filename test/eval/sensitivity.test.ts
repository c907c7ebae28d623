/**
 * `dype eval --sensitivity` on a tiny case list and two parameters: each end
 * is applied where the suite reads it and restored after, the figures and
 * the ranking have their shape, the report draws the tornado charts; every
 * estimate and measured range of the suite's presets is either moved or
 * listed with why not. No timing.
 */
import { describe, expect, it } from 'vitest';
import { runSuite } from '../../eval/evaluate.js';
import { presetFields, suiteScope } from '../../eval/parameters.js';
import { renderSuiteReport } from '../../eval/report/suite.js';
import { figures, runSensitivity, sensitivityParameters, sensitivityTable } from '../../eval/sensitivity.js';
import { summarise } from '../../eval/summary.js';
import { SETTINGS, systemFor } from '../../eval/systems.js';
import { MODEL } from '../../runtime/plan/model.js';
import { runCli } from '../helpers/cli.js';

const sel = { workloads: ['spmv-chain'], inputs: ['karate', 'ca-GrQc'] };
const ONLY = ['MODEL.splitSyncUs', 'gpu.activePowerW (measured range)'];
const paper = SETTINGS.find((s) => s.preset === 'paper-1g1f')!;
const h200 = SETTINGS.find((s) => s.preset === 'h200-cpu')!;

describe('sensitivity', () => {
  it('moves a constant and a preset field to each end where the suite reads them, and restores them', () => {
    const { moved } = sensitivityParameters();
    const sync = moved.find((p) => p.id === 'MODEL.splitSyncUs')!;
    expect(sync.values).toEqual({ base: '10', low: '5', high: '20' });
    expect(sync.at('high', () => MODEL.splitSyncUs)).toBe(20);
    expect(MODEL.splitSyncUs).toBe(10);
    const power = moved.find((p) => p.id === 'gpu.activePowerW (measured range)')!;
    expect(power.kind).toBe('measured range');
    expect(power.at('low', () => systemFor(paper).devices[1]!.activePowerW)).toBe(144);
    // The H200's figure is a datasheet one without a range: not moved.
    expect(power.at('low', () => systemFor(h200).devices[1]!.activePowerW)).toBe(700);
    expect(systemFor(paper).devices[1]!.activePowerW).toBe(235);
    // A power figure stays within its neighbours: the host's idle at x2 would pass its waiting draw.
    const idle = moved.find((p) => p.id === 'cpu.idlePowerW')!;
    expect(idle.unchanged.high).toBe(true);
  });

  it("every estimate and measured range of the suite's presets is moved or listed with why not", () => {
    const scope = suiteScope();
    const { moved, notMoved } = sensitivityParameters(scope);
    const ids = new Set([...moved.map((p) => p.id), ...notMoved.map((n) => n.parameter)]);
    for (const preset of scope.presets)
      for (const f of presetFields(preset)) {
        if (f.range) expect(ids.has(`${f.owner}.${f.field} (measured range)`), `${preset} ${f.path}`).toBe(true);
        else if (f.kind === 'estimate') expect(ids.has(`${f.owner}.${f.field}`), `${preset} ${f.path}`).toBe(true);
      }
    for (const n of notMoved) expect(n.why.length).toBeGreaterThan(10);
  });

  it('runs the suite at each end and ranks the parameters; the report draws the tornado charts', () => {
    const base = runSuite(sel);
    const s = runSensitivity({ suite: 'tiny', ...sel, only: ONLY, baseline: base });
    expect(s.cases).toBe(base.length);
    expect(s.baseline).toEqual(figures(summarise(base)));
    expect(s.parameters.map((p) => p.parameter).sort()).toEqual([...ONLY].sort());
    for (const p of s.parameters) {
      for (const end of [p.low, p.high]) {
        expect(end.static_optimal).toBeGreaterThanOrEqual(0);
        expect(end.static_optimal).toBeLessThanOrEqual(1);
        expect(end.throughput_vs_static).toBeGreaterThan(0);
      }
      expect(p.effect).toBeGreaterThanOrEqual(0);
    }
    expect(s.parameters[0]!.effect).toBeGreaterThanOrEqual(s.parameters[1]!.effect);
    // Restored: the suite gives the baseline's figures again.
    expect(MODEL.splitSyncUs).toBe(10);
    expect(figures(summarise(runSuite(sel)))).toEqual(s.baseline);
    expect(sensitivityTable(s)).toMatch(/MODEL\.splitSyncUs \(estimate\)/);
    const html = renderSuiteReport(base, summarise(base), 'test', s);
    expect(
      html.match(/<svg class="plot"[^>]*aria-label="(dype vs static|dype vs GPU-only|static optimal|dype optimal)/g),
    ).toHaveLength(4);
    expect(html).toContain('gpu.activePowerW (measured range)');
  });

  it('--sensitivity takes quick or full', () => {
    const r = runCli(['eval', '--quick', '--sensitivity', 'bogus']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--sensitivity expects quick or full/);
  });
});
