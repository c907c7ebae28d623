/**
 * `dype eval --quick -o DIR --json` end to end, and its report.html opened in
 * headless Chromium: the SVG plots are laid out with content and nothing
 * reports an error. A probe script is added to a copy of the page (the
 * report itself has no scripts); chromium's console log is checked too.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { problemFor } from '../../eval/binding.js';
import { generatedInputs } from '../../eval/inputs.js';
import { renderProgramReport } from '../../eval/report/program.js';
import { GOALS } from '../../eval/cases.js';
import { online } from '../../eval/strategies.js';
import { SETTINGS, systemFor } from '../../eval/systems.js';
import { workloads } from '../../eval/workloads.js';
import { runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'dype-eval-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const chromium = ['chromium', 'chromium-browser'].find((c) => spawnSync('sh', ['-c', `command -v ${c}`]).status === 0);

const PROBE = `<script>
window.__errors = [];
window.addEventListener('error', (e) => window.__errors.push(String(e.message || e.type)), true);
window.addEventListener('load', () => {
  const svgs = [...document.querySelectorAll('svg.plot')].map((s) => {
    const b = s.getBoundingClientRect();
    const box = s.getBBox();
    return { w: b.width, h: b.height, bw: box.width, bh: box.height, shapes: s.querySelectorAll('circle,rect,polyline,line').length, program: !!s.closest('#program') };
  });
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify({ errors: window.__errors, svgs });
  document.body.appendChild(pre);
});
</script>`;

function probe(htmlPath: string): {
  errors: string[];
  svgs: { w: number; h: number; bw: number; bh: number; shapes: number; program: boolean }[];
  log: string;
} {
  const html = readFileSync(htmlPath, 'utf8');
  const probed = join(dir, `probe-${Math.random().toString(36).slice(2)}.html`);
  writeFileSync(probed, html.replace('<head>', `<head>${PROBE}`));
  const r = spawnSync(
    chromium!,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--enable-logging=stderr',
      '--v=0',
      '--dump-dom',
      `file://${probed}`,
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
  const m = /<pre id="probe">([^<]*)<\/pre>/.exec(r.stdout);
  if (!m) throw new Error(`no probe output from chromium (status ${r.status}): ${r.stderr.slice(-2000)}`);
  const text = m[1]!
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
  return { ...JSON.parse(text), log: r.stderr };
}

/** Console messages chromium logged at error level, and failed loads (dbus noise of a headless box aside). */
const consoleErrors = (log: string): string[] =>
  log.split('\n').filter((l) => /CONSOLE|Failed to load|net::ERR/.test(l) && !/dbus/.test(l));

describe('dype eval --quick', () => {
  const r = runCli(['eval', '--quick', '-o', dir, '--json'], { timeoutMs: 120_000 });

  it('prints the --json object of docs/CLI.md and writes CSV, JSON and the report', () => {
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const j = JSON.parse(r.stdout);
    // Nothing of the suite runs on a device: the JSON says so, as the table does.
    expect(j.clock).toBe('modelled');
    expect(typeof j.cases).toBe('number');
    expect(j.cases).toBeGreaterThan(40);
    for (const s of ['dype', 'static', 'gpu-only', 'heft']) {
      expect(Number.isInteger(j.summary[s].optimal)).toBe(true);
      expect(j.summary[s]).toHaveProperty('mean_loss_pct');
    }
    for (const k of ['throughput_vs_static', 'throughput_vs_gpu_only']) expect(j[k]).toBeGreaterThan(0);
    // Energy efficiency both ways: the devices used, and the whole system.
    for (const k of ['energy_eff_vs_static', 'energy_eff_vs_gpu_only'])
      for (const scope of ['device', 'system']) expect(j[k][scope]).toBeGreaterThan(0);
    expect(Object.keys(j.per_objective).sort()).toEqual(['energy-device', 'energy-system', 'throughput']);
    // The headline figures per preset: the paper boxes and the H200 with its host.
    expect(Object.keys(j.per_preset)).toEqual(['h200-cpu', 'paper-1g1f', 'paper-2g2f']);
    for (const p of Object.values(j.per_preset) as { cases: number; summary: { dype: { optimal: number } } }[])
      expect(p.summary.dype.optimal).toBeLessThanOrEqual(p.cases);
    const csv = readFileSync(join(dir, 'cases.csv'), 'utf8').trim().split('\n');
    expect(csv.length).toBe(j.cases + 1);
    expect(JSON.parse(readFileSync(join(dir, 'eval.json'), 'utf8')).case_results.length).toBe(j.cases);
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    expect(html).not.toMatch(/<script|(src|href)="?https?:/i);
    // Each oracle timeline simulates the stream the suite scores, so its period is the table's for that case.
    const header = csv[0]!.split(',');
    const periodAt = header.indexOf('oracle_period_ms');
    const period = new Map(csv.slice(1).map((l) => [l.split(',')[0]!, Number(l.split(',')[periodAt])]));
    const timelines = [...html.matchAll(/oracle for ([^:]+): (\d+) inputs, modelled: period ([\d.e+-]+) ms/g)];
    expect(timelines.length).toBeGreaterThanOrEqual(3);
    for (const [, id, , ms] of timelines) {
      const want = period.get(id!);
      expect(want, id).toBeDefined();
      expect(Math.abs(Number(ms) - want!) / want!, id).toBeLessThan(1e-3);
    }
  });

  it.skipIf(!chromium)(
    'report.html and a renderProgramReport page (for dype compile) render their plots in headless Chromium without errors',
    () => {
      const w = workloads().find((x) => x.name === 'gcn')!;
      const sys = systemFor(SETTINGS.find((s) => s.name === '2g2f')!);
      const p = problemFor(w, generatedInputs().find((x) => x.name === 'rmat-128k-d16')!.features);
      const program = renderProgramReport({
        title: 'gcn',
        sys,
        objective: 'throughput',
        profiles: [{ name: 'rmat-128k-d16', problem: p, mappings: [online(sys, p, GOALS[0]!)!] }],
      });
      // One browser start for both pages (it is the slow part): the program page's body follows the suite report's.
      const suite = readFileSync(join(dir, 'report.html'), 'utf8');
      const body = (html: string): string => html.slice(html.indexOf('<body>') + 6, html.lastIndexOf('</body>'));
      const both = join(dir, 'both.html');
      writeFileSync(both, suite.replace('</body>', `<div id="program">${body(program)}</div></body>`));
      const pr = probe(both);
      expect(pr.errors).toEqual([]);
      expect(consoleErrors(pr.log)).toEqual([]);
      // Suite: 6 Pareto fronts, 6 decision maps, at least 3 timelines; program: a front and a timeline.
      expect(pr.svgs.length).toBeGreaterThanOrEqual(17);
      expect(pr.svgs.filter((s) => s.program).length).toBe(2);
      for (const s of pr.svgs) {
        expect(s.w).toBeGreaterThan(100);
        expect(s.bw).toBeGreaterThan(50);
        expect(s.bh).toBeGreaterThan(50);
        expect(s.shapes).toBeGreaterThan(2);
      }
    },
  );
});

describe('dype eval usage errors', () => {
  it('-o naming a file is DY3017 before any work, and writes nothing', () => {
    const file = join(dir, 'not-a-dir');
    writeFileSync(file, 'x');
    const r = runCli(['eval', '--quick', '-o', file]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^-o .*not-a-dir: error DY3017: expected a directory, found a file/);
    expect(r.stdout).toBe('');
    expect(readFileSync(file, 'utf8')).toBe('x');
  });
  it('a folder where -o would write eval.json is DY3017 naming it, and writes nothing', () => {
    const out = join(dir, 'taken');
    mkdirSync(join(out, 'eval.json'), { recursive: true });
    const r = runCli(['eval', '--quick', '-o', out]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /taken\/eval\.json: error DY3017: cannot write the evaluation results: expected a file here, found a directory/,
    );
    expect(readdirSync(out)).toEqual(['eval.json']);
  });
});

if (!chromium)
  console.warn(
    "report.test.ts: chromium is not on PATH; the rendering checks are skipped (.ci/run installs Debian's chromium)",
  );
