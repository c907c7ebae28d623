/**
 * The paper's table from case results: per strategy, cases where it is
 * optimal (within OPTIMAL_TOLERANCE of the oracle) and its mean loss where
 * it is not; DyPe's throughput and energy-efficiency ratios over static and
 * GPU-only (geometric means; throughput over the throughput cases, energy
 * efficiency in each scope over the energy cases of that scope, each over
 * the cases where both strategies have a feasible mapping). Also the CSV
 * rows (every strategy's device and system energy) and the `dype eval
 * --json` object (docs/CLI.md, `dype eval`).
 */
import { ENERGY_SCOPES, type EnergyScope } from '../runtime/plan/figures.js';
import { simEnergyJ, type CaseResult } from './evaluate.js';
import { STRATEGIES, type Strategy } from './strategies.js';

/** A ratio per energy scope: device (the devices used) and system (the whole box). */
export type PerScope = Record<EnergyScope, number | null>;

export interface StrategySummary {
  optimal: number;
  mean_loss_pct: number | null;
  /** Cases without a feasible mapping from this strategy. */
  infeasible: number;
  /** Cases where it beat the oracle (a placement the pipeline enumeration does not contain: HEFT). */
  beats_oracle: number;
  max_loss_pct: number | null;
}

export interface Ratios {
  throughput_vs_static: number | null;
  throughput_vs_gpu_only: number | null;
  /** Energy efficiency (inputs per joule) over static, per scope, over the energy cases of that scope. */
  energy_eff_vs_static: PerScope;
  energy_eff_vs_gpu_only: PerScope;
}

/** The headline figures of one system preset's cases (every setting of that preset). */
export interface PresetSummary extends Ratios {
  cases: number;
  summary: Record<Strategy, StrategySummary>;
}

export interface Summary extends Ratios {
  cases: number;
  summary: Record<Strategy, StrategySummary>;
  /** The same figures per system preset (paper-1g1f, paper-2g2f, h200-cpu). */
  per_preset: Record<string, PresetSummary>;
  /** The same ratios for dype-online (a plan per input). */
  online: Ratios;
  /** Cases where the input fell outside the guards' ranges and dype re-planned. */
  dype_replanned: number;
  /** Cases per goal (throughput, energy-device, energy-system). */
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
const splits = (r: CaseResult): string =>
  r.strategies['dype-online'].scored?.mapping.stages.some((s) => s.count > 1)
    ? 'online plan splits a stage'
    : 'online plan has no split stage';

const geomean = (xs: number[]): number | null =>
  xs.length === 0 ? null : Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);

/** Throughput over the throughput cases, or energy efficiency in a scope over the energy cases of that scope. */
function ratio(
  rs: readonly CaseResult[],
  who: Strategy,
  base: Strategy,
  what: 'throughput' | EnergyScope,
): number | null {
  const xs: number[] = [];
  for (const r of rs) {
    const g = r.case.goal;
    if (what === 'throughput' ? g.objective !== 'throughput' : g.objective !== 'energy' || g.energyScope !== what)
      continue;
    const a = r.strategies[who].scored?.sim;
    const b = r.strategies[base].scored?.sim;
    if (!a || !b) continue;
    // Throughput ratio = base period / our period; energy efficiency (inputs per joule) ratio = base energy / ours.
    xs.push(what === 'throughput' ? b.periodMs / a.periodMs : simEnergyJ(b, what) / simEnergyJ(a, what));
  }
  return geomean(xs);
}

function ratios(rs: readonly CaseResult[], who: Strategy): Ratios {
  const perScope = (base: Strategy): PerScope =>
    Object.fromEntries(ENERGY_SCOPES.map((sc) => [sc, ratio(rs, who, base, sc)])) as PerScope;
  return {
    throughput_vs_static: ratio(rs, who, 'static', 'throughput'),
    throughput_vs_gpu_only: ratio(rs, who, 'gpu-only', 'throughput'),
    energy_eff_vs_static: perScope('static'),
    energy_eff_vs_gpu_only: perScope('gpu-only'),
  };
}

function strategySummaries(rs: readonly CaseResult[]): Record<Strategy, StrategySummary> {
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
  return summary;
}

function perPreset(rs: readonly CaseResult[]): Record<string, PresetSummary> {
  const out: Record<string, PresetSummary> = {};
  for (const preset of [...new Set(rs.map((r) => r.case.setting.preset))].sort()) {
    const sub = rs.filter((r) => r.case.setting.preset === preset);
    out[preset] = { cases: sub.length, summary: strategySummaries(sub), ...ratios(sub, 'dype') };
  }
  return out;
}

export function summarise(rs: readonly CaseResult[]): Summary {
  const summary = strategySummaries(rs);
  const per: Record<string, number> = {};
  for (const r of rs) per[r.case.goal.name] = (per[r.case.goal.name] ?? 0) + 1;
  return {
    cases: rs.length,
    summary,
    per_preset: perPreset(rs),
    ...ratios(rs, 'dype'),
    online: ratios(rs, 'dype-online'),
    dype_replanned: rs.filter((r) => r.strategies.dype.note.startsWith('re-planned')).length,
    per_objective: per,
    breakdown: {
      setting: groups(rs, (r) => r.case.setting.name),
      workload: groups(rs, (r) => r.case.workload.name),
      family: groups(rs, (r) => r.case.input.family),
      objective: groups(rs, (r) => r.case.goal.name),
      online_split: groups(rs, splits),
    },
  };
}

const x = (v: number | null): string => (v === null ? '-' : `${v.toFixed(2)}x`);
const pct = (v: number | null): string => (v === null ? '-' : `${v.toFixed(2)}%`);

/** The table printed on stdout. */
export function summaryTable(s: Summary): string {
  const lines: string[] = [];
  lines.push(
    `dype eval: ${s.cases} cases (${Object.entries(s.per_objective)
      .map(([k, v]) => `${v} ${k}`)
      .join(', ')}); oracle = best enumerated mapping by the event simulation`,
  );
  lines.push(
    'Every figure is modelled (the cost model and the event simulation of the systems the presets describe); nothing ran on a device.',
  );
  lines.push('');
  lines.push('strategy         optimal          mean loss (not optimal)  max loss   infeasible  beats oracle');
  for (const k of STRATEGIES) {
    const r = s.summary[k];
    const share = s.cases ? ((100 * r.optimal) / s.cases).toFixed(1) : '0';
    lines.push(
      `${k.padEnd(15)}  ${`${r.optimal}/${s.cases} (${share}%)`.padEnd(15)}  ${pct(r.mean_loss_pct).padStart(23)}  ${pct(r.max_loss_pct).padStart(9)}  ${String(r.infeasible).padStart(10)}  ${String(r.beats_oracle).padStart(12)}`,
    );
  }
  lines.push('');
  lines.push('                                   energy efficiency');
  lines.push('                       throughput   device    system   (geometric means)');
  const line = (name: string, t: number | null, e: PerScope): string =>
    `${name.padEnd(23)}${x(t).padStart(10)}  ${x(e.device).padStart(7)}   ${x(e.system).padStart(7)}`;
  lines.push(line('dype vs static', s.throughput_vs_static, s.energy_eff_vs_static));
  lines.push(line('dype vs gpu-only', s.throughput_vs_gpu_only, s.energy_eff_vs_gpu_only));
  lines.push(line('dype-online vs static', s.online.throughput_vs_static, s.online.energy_eff_vs_static));
  lines.push(line('dype-online vs gpu-only', s.online.throughput_vs_gpu_only, s.online.energy_eff_vs_gpu_only));
  const head = [
    'per preset',
    'cases',
    'static optimal',
    'dype optimal',
    'dype mean / max loss',
    'throughput vs static / gpu-only',
    'energy eff. vs gpu-only device / system',
  ];
  const rows = Object.entries(s.per_preset).map(([name, p]) => [
    name,
    String(p.cases),
    `${p.summary.static.optimal}/${p.cases}`,
    `${p.summary.dype.optimal}/${p.cases}`,
    `${pct(p.summary.dype.mean_loss_pct)} / ${pct(p.summary.dype.max_loss_pct)}`,
    `${x(p.throughput_vs_static)} / ${x(p.throughput_vs_gpu_only)}`,
    `${x(p.energy_eff_vs_gpu_only.device)} / ${x(p.energy_eff_vs_gpu_only.system)}`,
  ]);
  const w = head.map((h, j) => Math.max(h.length, ...rows.map((r) => r[j]!.length)));
  lines.push('');
  for (const r of [head, ...rows])
    lines.push(r.map((c, j) => (j === 0 ? c.padEnd(w[j]!) : c.padStart(w[j]!))).join('  '));
  lines.push(
    'Energy: device = the devices a mapping uses (active while computing, powered-up waiting otherwise), as NVML / xbutil measure; system = device + every other device idle, host included.',
  );
  lines.push(`dype re-planned ${s.dype_replanned} inputs outside its guards' ranges.`);
  lines.push(
    'Paper (DyPe, Bai et al. 2025): static optimal in 13 of 86, DyPe in 77 with 3.95% mean loss otherwise; 1.53x / 1.09x over static, 1.44x / 1.66x over GPU-only (energy scope not stated; most likely device).',
  );
  return lines.join('\n') + '\n';
}

const csvCell = (v: unknown): string => {
  const t = v === undefined || v === null ? '' : typeof v === 'number' ? String(Number(v.toPrecision(6))) : String(v);
  return /[",\n]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t;
};

export function casesCsv(rs: readonly CaseResult[]): string {
  const head = [
    'case',
    'workload',
    'input',
    'family',
    'rows',
    'nnz',
    'row_len_cv',
    'setting',
    'objective',
    'oracle_period_ms',
    'oracle_device_energy_mj',
    'oracle_system_energy_mj',
    'oracle_mapping',
  ];
  for (const s of STRATEGIES)
    head.push(
      `${s}_period_ms`,
      `${s}_device_energy_mj`,
      `${s}_system_energy_mj`,
      `${s}_loss_pct`,
      `${s}_optimal`,
      `${s}_mapping`,
      `${s}_note`,
    );
  const lines = [head.join(',')];
  for (const r of rs) {
    const f = r.case.input.features;
    const row: unknown[] = [
      r.case.id,
      r.case.workload.name,
      r.case.input.name,
      r.case.input.family,
      f.rows,
      f.nnz,
      f.rowLenCv,
      r.case.setting.name,
      r.case.goal.name,
      r.oracle.sim.periodMs,
      r.oracle.sim.deviceEnergyJ * 1e3,
      r.oracle.sim.systemEnergyJ * 1e3,
      r.oracle.label,
    ];
    for (const s of STRATEGIES) {
      const x = r.strategies[s];
      row.push(
        x.scored?.sim.periodMs,
        x.scored ? x.scored.sim.deviceEnergyJ * 1e3 : undefined,
        x.scored ? x.scored.sim.systemEnergyJ * 1e3 : undefined,
        x.lossPct,
        x.optimal ? 1 : 0,
        x.scored?.label ?? '',
        x.infeasible ?? x.note,
      );
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
    objective: r.case.goal.objective,
    energy_scope: r.case.goal.energyScope,
    stream_length: r.case.goal.streamLength,
    oracle: {
      mapping: r.oracle.label,
      period_ms: r.oracle.sim.periodMs,
      device_energy_j: r.oracle.sim.deviceEnergyJ,
      system_energy_j: r.oracle.sim.systemEnergyJ,
    },
    strategies: Object.fromEntries(
      STRATEGIES.map((s) => {
        const x = r.strategies[s];
        return [
          s,
          {
            mapping: x.scored?.label ?? null,
            period_ms: x.scored?.sim.periodMs ?? null,
            device_energy_j: x.scored?.sim.deviceEnergyJ ?? null,
            system_energy_j: x.scored?.sim.systemEnergyJ ?? null,
            loss_pct: x.lossPct ?? null,
            optimal: x.optimal,
            note: x.infeasible ?? x.note,
          },
        ];
      }),
    ),
  };
}
