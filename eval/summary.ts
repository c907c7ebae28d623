/**
 * The paper's table from case results: per strategy, cases where it is
 * optimal (within OPTIMAL_TOLERANCE of the oracle) and its mean loss where
 * it is not; DyPe's throughput and energy-efficiency ratios over static and
 * GPU-only (geometric means; throughput over the throughput-objective
 * cases, energy efficiency over the energy-objective cases, each over the
 * cases where both strategies have a feasible mapping). Also the CSV rows
 * and the `dype eval --json` object (DESIGN.md section 4).
 */
import type { CaseResult } from './evaluate.js';
import { STRATEGIES, type Strategy } from './strategies.js';

export interface StrategySummary {
  optimal: number;
  mean_loss_pct: number | null;
  /** Cases without a feasible mapping from this strategy. */
  infeasible: number;
  /** Cases where it beat the oracle (a placement the pipeline enumeration does not contain: HEFT). */
  beats_oracle: number;
  max_loss_pct: number | null;
}

export interface Summary {
  cases: number;
  summary: Record<Strategy, StrategySummary>;
  throughput_vs_static: number | null;
  throughput_vs_gpu_only: number | null;
  energy_eff_vs_static: number | null;
  energy_eff_vs_gpu_only: number | null;
  /** The same ratios for dype-online (a plan per input). */
  online: { throughput_vs_static: number | null; throughput_vs_gpu_only: number | null; energy_eff_vs_static: number | null; energy_eff_vs_gpu_only: number | null };
  /** Cases where the input fell outside the guards' ranges and dype re-planned. */
  dype_replanned: number;
  per_objective: Record<string, number>;
  /** DyPe and dype-online per group of cases: where the losses come from. */
  breakdown: Record<'setting' | 'workload' | 'family' | 'objective' | 'online_split', Record<string, GroupSummary>>;
}

export interface GroupSummary {
  cases: number;
  dype_optimal: number;
  dype_mean_loss_pct: number;
  online_optimal: number;
  online_mean_loss_pct: number;
}

function groups(rs: readonly CaseResult[], key: (r: CaseResult) => string): Record<string, GroupSummary> {
  const out: Record<string, GroupSummary> = {};
  const acc = new Map<string, CaseResult[]>();
  for (const r of rs) acc.set(key(r), [...(acc.get(key(r)) ?? []), r]);
  for (const [k, list] of acc) {
    const mean = (s: 'dype' | 'dype-online'): number => {
      const xs = list.map((r) => r.strategies[s].lossPct).filter((x): x is number => x !== undefined);
      return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
    };
    out[k] = {
      cases: list.length,
      dype_optimal: list.filter((r) => r.strategies.dype.optimal).length,
      dype_mean_loss_pct: mean('dype'),
      online_optimal: list.filter((r) => r.strategies['dype-online'].optimal).length,
      online_mean_loss_pct: mean('dype-online'),
    };
  }
  return out;
}

/** Whether a mapping splits some stage over several instances (the planner's weakest estimate). */
const splits = (r: CaseResult): string => (r.strategies['dype-online'].scored?.mapping.stages.some((s) => s.count > 1) ? 'online plan splits a stage' : 'online plan has no split stage');

const geomean = (xs: number[]): number | null => (xs.length === 0 ? null : Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length));

function ratio(rs: readonly CaseResult[], who: Strategy, base: Strategy, objective: 'throughput' | 'energy'): number | null {
  const xs: number[] = [];
  for (const r of rs) {
    if (r.case.objective !== objective) continue;
    const a = r.strategies[who].scored?.sim;
    const b = r.strategies[base].scored?.sim;
    if (!a || !b) continue;
    // Throughput ratio = base period / our period; energy efficiency (inputs per joule) ratio = base energy / ours.
    xs.push(objective === 'throughput' ? b.periodMs / a.periodMs : b.energyJ / a.energyJ);
  }
  return geomean(xs);
}

export function summarise(rs: readonly CaseResult[]): Summary {
  const summary = {} as Record<Strategy, StrategySummary>;
  for (const s of STRATEGIES) {
    const rows = rs.map((r) => r.strategies[s]);
    const losses = rows.filter((x) => !x.optimal && x.lossPct !== undefined && x.lossPct > 0).map((x) => x.lossPct!);
    summary[s] = {
      optimal: rows.filter((x) => x.optimal).length,
      mean_loss_pct: losses.length ? losses.reduce((a, b) => a + b, 0) / losses.length : null,
      infeasible: rows.filter((x) => x.infeasible !== undefined).length,
      beats_oracle: rows.filter((x) => x.lossPct !== undefined && x.lossPct < -0.1).length,
      max_loss_pct: losses.length ? Math.max(...losses) : null,
    };
  }
  const per: Record<string, number> = {};
  for (const r of rs) per[r.case.objective] = (per[r.case.objective] ?? 0) + 1;
  return {
    cases: rs.length,
    summary,
    throughput_vs_static: ratio(rs, 'dype', 'static', 'throughput'),
    throughput_vs_gpu_only: ratio(rs, 'dype', 'gpu-only', 'throughput'),
    energy_eff_vs_static: ratio(rs, 'dype', 'static', 'energy'),
    energy_eff_vs_gpu_only: ratio(rs, 'dype', 'gpu-only', 'energy'),
    online: {
      throughput_vs_static: ratio(rs, 'dype-online', 'static', 'throughput'),
      throughput_vs_gpu_only: ratio(rs, 'dype-online', 'gpu-only', 'throughput'),
      energy_eff_vs_static: ratio(rs, 'dype-online', 'static', 'energy'),
      energy_eff_vs_gpu_only: ratio(rs, 'dype-online', 'gpu-only', 'energy'),
    },
    dype_replanned: rs.filter((r) => r.strategies.dype.note.startsWith('re-planned')).length,
    per_objective: per,
    breakdown: {
      setting: groups(rs, (r) => r.case.setting.name),
      workload: groups(rs, (r) => r.case.workload.name),
      family: groups(rs, (r) => r.case.input.family),
      objective: groups(rs, (r) => r.case.objective),
      online_split: groups(rs, splits),
    },
  };
}

const x = (v: number | null): string => (v === null ? '-' : `${v.toFixed(2)}x`);
const pct = (v: number | null): string => (v === null ? '-' : `${v.toFixed(2)}%`);

/** The table printed on stdout. */
export function summaryTable(s: Summary): string {
  const lines: string[] = [];
  lines.push(`dype eval: ${s.cases} cases (${Object.entries(s.per_objective).map(([k, v]) => `${v} ${k}`).join(', ')}); oracle = best enumerated mapping by the event simulation`);
  lines.push('');
  lines.push('strategy         optimal          mean loss (not optimal)  max loss   infeasible  beats oracle');
  for (const k of STRATEGIES) {
    const r = s.summary[k];
    const share = s.cases ? ((100 * r.optimal) / s.cases).toFixed(1) : '0';
    lines.push(`${k.padEnd(15)}  ${`${r.optimal}/${s.cases} (${share}%)`.padEnd(15)}  ${pct(r.mean_loss_pct).padStart(23)}  ${pct(r.max_loss_pct).padStart(9)}  ${String(r.infeasible).padStart(10)}  ${String(r.beats_oracle).padStart(12)}`);
  }
  lines.push('');
  lines.push('                       throughput   energy efficiency   (geometric means)');
  lines.push(`dype vs static         ${x(s.throughput_vs_static).padStart(10)}   ${x(s.energy_eff_vs_static).padStart(17)}`);
  lines.push(`dype vs gpu-only       ${x(s.throughput_vs_gpu_only).padStart(10)}   ${x(s.energy_eff_vs_gpu_only).padStart(17)}`);
  lines.push(`dype-online vs static  ${x(s.online.throughput_vs_static).padStart(10)}   ${x(s.online.energy_eff_vs_static).padStart(17)}`);
  lines.push(`dype-online vs gpu-only${x(s.online.throughput_vs_gpu_only).padStart(10)}   ${x(s.online.energy_eff_vs_gpu_only).padStart(17)}`);
  lines.push(`dype re-planned ${s.dype_replanned} inputs outside its guards' ranges.`);
  lines.push('Paper (DyPe, Bai et al. 2025): static optimal in 13 of 86, DyPe in 77 with 3.95% mean loss otherwise; 1.53x / 1.09x over static, 1.44x / 1.66x over GPU-only.');
  return lines.join('\n') + '\n';
}

const csvCell = (v: unknown): string => {
  const t = v === undefined || v === null ? '' : typeof v === 'number' ? String(Number(v.toPrecision(6))) : String(v);
  return /[",\n]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t;
};

export function casesCsv(rs: readonly CaseResult[]): string {
  const head = ['case', 'workload', 'input', 'family', 'rows', 'nnz', 'row_len_cv', 'setting', 'objective', 'oracle_period_ms', 'oracle_energy_mj', 'oracle_mapping'];
  for (const s of STRATEGIES) head.push(`${s}_period_ms`, `${s}_energy_mj`, `${s}_loss_pct`, `${s}_optimal`, `${s}_mapping`, `${s}_note`);
  const lines = [head.join(',')];
  for (const r of rs) {
    const f = r.case.input.features;
    const row: unknown[] = [r.case.id, r.case.workload.name, r.case.input.name, r.case.input.family, f.rows, f.nnz, f.rowLenCv, r.case.setting.name, r.case.objective, r.oracle.sim.periodMs, r.oracle.sim.energyJ * 1e3, r.oracle.label];
    for (const s of STRATEGIES) {
      const x = r.strategies[s];
      row.push(x.scored?.sim.periodMs, x.scored ? x.scored.sim.energyJ * 1e3 : undefined, x.lossPct, x.optimal ? 1 : 0, x.scored?.label ?? '', x.infeasible ?? x.note);
    }
    lines.push(row.map(csvCell).join(','));
  }
  return lines.join('\n') + '\n';
}

/** One case as JSON (for eval.json). */
export function caseJson(r: CaseResult): unknown {
  return {
    id: r.case.id,
    workload: r.case.workload.name,
    input: r.case.input.name,
    family: r.case.input.family,
    setting: r.case.setting.name,
    objective: r.case.objective,
    oracle: { mapping: r.oracle.label, period_ms: r.oracle.sim.periodMs, energy_j: r.oracle.sim.energyJ },
    strategies: Object.fromEntries(
      STRATEGIES.map((s) => {
        const x = r.strategies[s];
        return [s, { mapping: x.scored?.label ?? null, period_ms: x.scored?.sim.periodMs ?? null, energy_j: x.scored?.sim.energyJ ?? null, loss_pct: x.lossPct ?? null, optimal: x.optimal, note: x.infeasible ?? x.note }];
      }),
    ),
  };
}
