/**
 * report.html of `dype compile --targets report` for the GCN with two
 * profiles (small graphs, so the guards build in a few seconds): the title
 * names the program once, every profile has its own named section, the
 * plotted "best" of each objective lies on the simulated front, the
 * timeline's period is the table's simulated figure, and the decision map
 * spans the guards' ranges instead of showing mostly re-plans.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bestPerObjective, dominates, onFront } from '../../eval/report/front.js';
import { cleanup, example, freshDir, REPO_ROOT, runCliAsync } from '../helpers/cli.js';

const M = join(REPO_ROOT, '..', 'shared', 'data', 'matrices');
const PROFILES = ['karate.mtx', 'jazz.mtx'];
const dir = freshDir('dype-report-');
afterAll(() => cleanup(dir));

const unesc = (s: string): string =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');

/** The first table after `from` in the page, as header and rows of cell texts. */
function tableAfter(html: string, from: number): { head: string[]; rows: string[][] } {
  const t = html.slice(html.indexOf('<table>', from), html.indexOf('</table>', from));
  const cells = (row: string, tag: string): string[] =>
    [...row.matchAll(new RegExp(`<${tag}[^>]*>([^<]*)</${tag}>`, 'g'))].map((m) => unesc(m[1]!));
  const trs = [...t.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => m[1]!);
  return { head: cells(trs[0]!, 'th'), rows: trs.slice(1).map((r) => cells(r, 'td')) };
}

describe('dype compile report.html', () => {
  let html = '';
  beforeAll(async () => {
    const args = ['compile', example('gcn.dy'), '-o', join(dir, 'out'), '--targets', 'report'];
    for (const p of PROFILES) args.push('--profile', `A=${join(M, p)}`);
    for (const d of ['f=16', 'h=16', 'c=7']) args.push('--profile', d);
    const r = await runCliAsync(args, { timeoutMs: 120_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    html = readFileSync(join(dir, 'out', 'report.html'), 'utf8');
  }, 120_000);

  it('names the program once in its title', () => {
    expect(/<title>([^<]*)<\/title>/.exec(html)![1]).toBe('dype report: gcn');
  });

  it('has a named section for every profile, each with its own table, front and timeline', () => {
    const headings = [...html.matchAll(/<h2>Profile ([^<]*)<\/h2>/g)].map((m) => unesc(m[1]!));
    expect(headings).toHaveLength(PROFILES.length);
    PROFILES.forEach((p, i) =>
      expect(headings[i]).toMatch(new RegExp(`^A=\\S*${p.replace('.', '\\.')} f=16 h=16 c=7$`)),
    );
    // Plot titles name the profile by its files' base names.
    for (const p of PROFILES) expect(html).toContain(`aria-label="gcn, A=${p} f=16 h=16 c=7 on paper-1g1f"`);
  });

  it("plots each objective's best on the simulated front, and the timeline's period is the table's", () => {
    for (const at of [...html.matchAll(/<h2>Profile /g)].map((m) => m.index!)) {
      const { head, rows } = tableAfter(html, at);
      const col = (name: string): number => head.indexOf(name);
      const period = col('period ms, modelled (event simulation)');
      const energy = col('energy mJ device / system, modelled (event simulation)');
      expect(period).toBeGreaterThan(0);
      // The front is plotted in the system scope (the gcn's default energy scope); the table gives device / system.
      expect(html.slice(at)).toMatch(/system energy per input/);
      const pts = rows.map((r) => ({ periodMs: +r[period]!, energyJ: +r[energy]!.split(' / ')[1]!, latencyMs: 0 }));
      const section = html.slice(at, html.indexOf('</section>', at));
      for (const o of ['throughput', 'energy']) {
        const i = rows.findIndex((r) => r[col('best for')]!.split(', ').includes(o));
        expect(i).toBeGreaterThanOrEqual(0);
        for (const q of pts) expect(dominates(q, pts[i]!)).toBe(false);
        expect(rows[i]![col('on the simulated front')]).toBe('yes');
        expect(unesc(section)).toContain(`<title>best ${o}: ${rows[i]![1]}</title>`);
      }
      const best = rows.find((r) => r[col('best for')]!.split(', ').includes('throughput'))!;
      const gantt = new RegExp(
        `best throughput \\(planner rank ${best[0]}\\): \\d+ inputs, modelled: period (\\S+) ms`,
      ).exec(unesc(section));
      expect(gantt?.[1]).toBe(best[period]);
    }
  });

  it("spans the decision map over the guards' ranges: few cells are re-plans", () => {
    const cells = html.match(/<rect class="cell"[^>]*>/g) ?? [];
    expect(cells.length).toBeGreaterThan(0);
    const outside = cells.filter((c) => c.includes('fill="#ddd"')).length;
    expect(outside / cells.length).toBeLessThan(0.1);
    // Each profile lies in some cell of the map.
    for (const p of PROFILES) expect(html).toMatch(new RegExp(`; profile A=\\S*${p.replace('.', '\\.')}`));
  });
});

describe("the front and each objective's best", () => {
  it('never picks a point another beats on both period and energy', () => {
    // The planner's first mapping can lose to another on both simulated figures.
    const pts = [
      { periodMs: 0.0264, energyJ: 12.9, latencyMs: 0.12 },
      { periodMs: 0.0243, energyJ: 10.8, latencyMs: 0.1 },
      { periodMs: 0.0222, energyJ: 9.6, latencyMs: 0.04 },
      { periodMs: 0.03, energyJ: 9.6, latencyMs: 0.01 },
    ];
    expect(onFront(pts)).toEqual([false, false, true, false]);
    expect(bestPerObjective(pts)).toEqual({ throughput: 2, energy: 2, latency: 3 });
  });
});
