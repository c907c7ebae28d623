/**
 * `dype eval --sensitivity`: how much the suite's headline figures depend
 * on each parameter without a measurement behind it, and on each measured
 * one whose sources give a spread. Every such parameter (eval/parameters.ts)
 * is moved to the low and then the high end of its range (an estimate:
 * x0.5 and x2, capped where the quantity is a share; a measurement: the
 * measured spread), everything else as written, and the suite re-run:
 * planner, guards, static training, oracle and simulation all see the
 * moved value. Reported per parameter: the static-optimal and dype-optimal
 * shares and dype's throughput gains over static and over GPU-only at each
 * end, ranked by effect (the largest change of a share, or of the
 * logarithm of a gain, over both ends).
 */
import { rangeOf, setLeaf, type ParameterRange } from '../runtime/plan/parameters.js';
import type { SystemSpec } from '../runtime/system/types.js';
import type { CaseResult } from './evaluate.js';
import { runSuite } from './evaluate.js';
import type { SuiteSelection } from './cases.js';
import {
  constantEntries,
  fmtValue,
  loadPreset,
  presetFields,
  presetNotInEval,
  suiteScope,
  type PresetField,
  type SuiteScope,
} from './parameters.js';
import { summarise, type Summary } from './summary.js';
import { withSystemVariant } from './systems.js';

export type End = 'low' | 'high';

/** One parameter the analysis moves: a constant (or a group of design constants), or a preset field in every preset of the suite that gives it. */
export interface SensitivityParameter {
  /** `MODEL.splitSyncUs`, or `gpu.waitingPowerW` (a device kind's field; `peer.latencyUs` for the peer links). */
  id: string;
  kind: 'estimate' | 'measured range';
  basis: string;
  /** The values moved, as written and at each end (several presets: each one's). */
  values: Record<'base' | End, string>;
  /** Whether an end leaves every value as written (a share already at its cap, a power figure clamped): the baseline stands for it. */
  unchanged: Record<End, boolean>;
  /** Runs `body` with the parameter at one end, then restores it. */
  at<T>(end: End, body: () => T): T;
}

export interface SensitivityFigures {
  /** Shares of the cases (0-1). */
  static_optimal: number;
  dype_optimal: number;
  dype_mean_loss_pct: number | null;
  throughput_vs_static: number | null;
  throughput_vs_gpu_only: number | null;
  energy_eff_vs_gpu_only_device: number | null;
  energy_eff_vs_gpu_only_system: number | null;
}

export interface SensitivityResult {
  parameter: string;
  kind: SensitivityParameter['kind'];
  basis: string;
  values: SensitivityParameter['values'];
  low: SensitivityFigures;
  high: SensitivityFigures;
  /** max over both ends of |change of a share| and |ln(gain / baseline gain)| (static and dype optimal, throughput vs static and vs GPU-only). */
  effect: number;
}

export interface Sensitivity {
  suite: string;
  cases: number;
  baseline: SensitivityFigures;
  /** Ranked, largest effect first. */
  parameters: SensitivityResult[];
  /** Estimates and ranged figures the suite never reads, with why. */
  not_moved: { parameter: string; why: string }[];
  seconds: number;
}

export function figures(s: Summary): SensitivityFigures {
  const share = (n: number): number => (s.cases ? n / s.cases : 0);
  return {
    static_optimal: share(s.summary.static.optimal),
    dype_optimal: share(s.summary.dype.optimal),
    dype_mean_loss_pct: s.summary.dype.mean_loss_pct,
    throughput_vs_static: s.throughput_vs_static,
    throughput_vs_gpu_only: s.throughput_vs_gpu_only,
    energy_eff_vs_gpu_only_device: s.energy_eff_vs_gpu_only.device,
    energy_eff_vs_gpu_only_system: s.energy_eff_vs_gpu_only.system,
  };
}

const logRatio = (a: number | null, b: number | null): number => (a && b ? Math.abs(Math.log(a / b)) : 0);

export function effect(base: SensitivityFigures, x: SensitivityFigures): number {
  return Math.max(
    Math.abs(x.static_optimal - base.static_optimal),
    Math.abs(x.dype_optimal - base.dype_optimal),
    logRatio(x.throughput_vs_static, base.throughput_vs_static),
    logRatio(x.throughput_vs_gpu_only, base.throughput_vs_gpu_only),
  );
}

// ---------------------------------------------------------------------------
// The parameters

/** The constants' estimates (and ranged measurements): every leaf an entry covers moves together. */
function constantParameters(notMoved: Sensitivity['not_moved']): SensitivityParameter[] {
  const out: SensitivityParameter[] = [];
  for (const c of constantEntries()) {
    const nums = c.leaves.filter((l): l is { path: string; value: number } => typeof l.value === 'number');
    if (nums.length === 0) continue;
    const r0 = rangeOf(c.entry, nums[0]!.value);
    if (!r0) continue;
    if (c.entry.notInEval) {
      notMoved.push({ parameter: c.key, why: c.entry.notInEval });
      continue;
    }
    if (c.entry.range && nums.length > 1) throw new Error(`${c.key}: a stated range must cover one value`);
    const ends = nums.map((l) => ({ path: l.path, base: l.value, range: rangeOf(c.entry, l.value)! }));
    // Several different values moved by one factor: the factor.
    const several = new Set(ends.map((e) => e.base)).size > 1;
    const text = (f: (e: (typeof ends)[number]) => number, factor: string): string =>
      several ? factor : fmtValue(f(ends[0]!));
    out.push({
      id: c.key,
      kind: c.entry.kind === 'estimate' ? 'estimate' : 'measured range',
      basis: r0.basis,
      values: {
        base: text((e) => e.base, 'as written'),
        low: text((e) => e.range.low, 'x0.5'),
        high: text((e) => e.range.high, 'x2'),
      },
      unchanged: { low: ends.every((e) => e.range.low === e.base), high: ends.every((e) => e.range.high === e.base) },
      at(end, body) {
        const old = ends.map((e) => setLeaf(c.group.root, e.path, e.range[end]));
        try {
          return body();
        } finally {
          ends.forEach((e, i) => setLeaf(c.group.root, e.path, old[i]!));
        }
      },
    });
  }
  return out;
}

/** `devices[1].hostLink.latencyUs` -> ['devices', 1, 'hostLink', 'latencyUs']. */
const pathParts = (p: string): (string | number)[] =>
  p
    .split(/\.|\[|\]/)
    .filter((x) => x !== '')
    .map((x) => (/^\d+$/.test(x) ? Number(x) : x));

function setPath(s: SystemSpec, path: string, v: number): void {
  const parts = pathParts(path);
  let o = s as unknown as Record<string | number, unknown>;
  for (const k of parts.slice(0, -1)) o = o[k] as Record<string | number, unknown>;
  o[parts[parts.length - 1]!] = v;
}

function getPath(s: SystemSpec, path: string): number {
  let o: unknown = s;
  for (const k of pathParts(path)) o = (o as Record<string | number, unknown>)[k];
  return o as number;
}

/** A power figure moved alone stays within its neighbours: idle <= waiting <= active. */
function clampPower(s: SystemSpec, path: string): void {
  const m = /^devices\[(\d+)\]\.(idle|waiting|active)PowerW$/.exec(path);
  if (!m) return;
  const d = s.devices[Number(m[1])]!;
  if (m[2] === 'idle') d.idlePowerW = Math.min(d.idlePowerW, d.waitingPowerW);
  else if (m[2] === 'waiting') d.waitingPowerW = Math.min(Math.max(d.waitingPowerW, d.idlePowerW), d.activePowerW);
  else d.activePowerW = Math.max(d.activePowerW, d.waitingPowerW);
}

/** Applies the moves of one preset to a copy of its system. */
function moved(s: SystemSpec, moves: readonly { path: string; value: number }[]): SystemSpec {
  const copy = structuredClone(s);
  for (const m of moves) {
    setPath(copy, m.path, m.value);
    clampPower(copy, m.path);
  }
  return copy;
}

/**
 * The presets' estimates and ranged measurements, grouped by device kind and
 * field across the suite's presets (an estimate and a measured range of the
 * same field are two parameters).
 */
function presetParameters(scope: SuiteScope, notMoved: Sensitivity['not_moved']): SensitivityParameter[] {
  const groups = new Map<
    string,
    { kind: SensitivityParameter['kind']; fields: (PresetField & { r: ParameterRange })[] }
  >();
  for (const preset of [...scope.presets].sort())
    for (const f of presetFields(preset)) {
      const r =
        f.range ??
        (f.kind === 'estimate'
          ? rangeOf({ unit: '', kind: 'estimate', source: '', measuredOn: '' }, f.value)
          : undefined);
      if (!r) continue;
      const kind = f.range ? 'measured range' : 'estimate';
      const id = `${f.owner}.${f.field}${kind === 'estimate' ? '' : ' (measured range)'}`;
      const why = presetNotInEval(f, scope);
      if (why) {
        if (!notMoved.some((n) => n.parameter === id)) notMoved.push({ parameter: id, why });
        continue;
      }
      const g = groups.get(id) ?? { kind, fields: [] };
      g.fields.push({ ...f, r });
      groups.set(id, g);
    }
  const base = new Map([...scope.presets].map((p) => [p, loadPreset(p)]));
  return [...groups].map(([id, g]) => {
    const movesAt = (end: End): Map<string, { path: string; value: number }[]> => {
      const m = new Map<string, { path: string; value: number }[]>();
      for (const f of g.fields) m.set(f.preset, [...(m.get(f.preset) ?? []), { path: f.path, value: f.r[end] }]);
      return m;
    };
    // What each preset's field is at each end, after clamping; presets that agree share one figure.
    const valuesAt = (end: End | 'base'): string[] =>
      g.fields.map((f) =>
        fmtValue(end === 'base' ? f.value : getPath(moved(base.get(f.preset)!, movesAt(end).get(f.preset)!), f.path)),
      );
    const text = (vals: string[]): string => {
      const by = new Map<string, string[]>();
      vals.forEach((v, i) => by.set(v, [...(by.get(v) ?? []), g.fields[i]!.preset]));
      return by.size === 1 ? vals[0]! : [...by].map(([v, ps]) => `${v} (${ps.join(', ')})`).join(', ');
    };
    const vals = { base: valuesAt('base'), low: valuesAt('low'), high: valuesAt('high') };
    const basis = [...new Set(g.fields.map((f) => f.r.basis))].join('; ');
    return {
      id,
      kind: g.kind,
      basis,
      values: { base: text(vals.base), low: text(vals.low), high: text(vals.high) },
      unchanged: {
        low: vals.low.every((v, i) => v === vals.base[i]),
        high: vals.high.every((v, i) => v === vals.base[i]),
      },
      at<T>(end: End, body: () => T): T {
        const moves = movesAt(end);
        return withSystemVariant((preset, s) => (moves.has(preset) ? moved(s, moves.get(preset)!) : s), body);
      },
    };
  });
}

/** Every parameter the analysis moves, and those it leaves with why. */
export function sensitivityParameters(scope: SuiteScope = suiteScope()): {
  moved: SensitivityParameter[];
  notMoved: Sensitivity['not_moved'];
} {
  const notMoved: Sensitivity['not_moved'] = [];
  const moved = [...constantParameters(notMoved), ...presetParameters(scope, notMoved)];
  return { moved, notMoved };
}

export interface SensitivityOptions extends SuiteSelection {
  /** Only these parameters (by id; tests). */
  only?: readonly string[];
  /** The suite's name in the output (`quick`, `full`). */
  suite: string;
  /** The baseline's results when the caller has them for the same selection. */
  baseline?: readonly CaseResult[];
  onProgress?: (done: number, total: number, what: string) => void;
}

export function runSensitivity(o: SensitivityOptions): Sensitivity {
  const t0 = Date.now();
  const sel: SuiteSelection = {
    ...(o.quick !== undefined ? { quick: o.quick } : {}),
    ...(o.workloads ? { workloads: o.workloads } : {}),
    ...(o.settings ? { settings: o.settings } : {}),
    ...(o.inputs ? { inputs: o.inputs } : {}),
  };
  const all = sensitivityParameters();
  const params = o.only ? all.moved.filter((p) => o.only!.includes(p.id)) : all.moved;
  if (o.only)
    for (const id of o.only)
      if (!params.some((p) => p.id === id))
        throw new Error(`--sensitivity: no parameter ${id} (known: ${all.moved.map((p) => p.id).join(', ')})`);
  const total = 1 + params.reduce((a, p) => a + (p.unchanged.low ? 0 : 1) + (p.unchanged.high ? 0 : 1), 0);
  let done = 0;
  const tick = (what: string): void => o.onProgress?.(++done, total, what);
  const baseRuns = o.baseline ?? runSuite(sel);
  const base = summarise(baseRuns);
  tick('baseline');
  const baseline = figures(base);
  const results: SensitivityResult[] = params.map((p) => {
    const run = (end: End): SensitivityFigures => {
      if (p.unchanged[end]) return baseline;
      const f = p.at(end, () => figures(summarise(runSuite(sel))));
      tick(`${p.id} ${end}`);
      return f;
    };
    const low = run('low');
    const high = run('high');
    return {
      parameter: p.id,
      kind: p.kind,
      basis: p.basis,
      values: p.values,
      low,
      high,
      effect: Math.max(effect(baseline, low), effect(baseline, high)),
    };
  });
  results.sort((a, b) => b.effect - a.effect || a.parameter.localeCompare(b.parameter));
  return {
    suite: o.suite,
    cases: base.cases,
    baseline,
    parameters: results,
    not_moved: all.notMoved,
    seconds: (Date.now() - t0) / 1e3,
  };
}

const pct = (v: number): string => `${(100 * v).toFixed(1)}%`;
const x = (v: number | null): string => (v === null ? '-' : `${v.toFixed(2)}x`);

/** The table printed after the suite's own. */
export function sensitivityTable(s: Sensitivity): string {
  const lines: string[] = [];
  lines.push(
    `Sensitivity (${s.suite} suite, ${s.cases} cases; each parameter at the low / high end of its range, everything else as written; ${s.seconds.toFixed(0)} s):`,
  );
  lines.push(
    `baseline: static optimal ${pct(s.baseline.static_optimal)}, dype optimal ${pct(s.baseline.dype_optimal)}, dype vs static ${x(s.baseline.throughput_vs_static)}, vs gpu-only ${x(s.baseline.throughput_vs_gpu_only)}`,
  );
  lines.push('');
  const head = [
    'rank',
    'parameter',
    'static optimal',
    'dype optimal',
    'dype vs static',
    'dype vs gpu-only',
    'effect',
    'low / as written / high',
  ];
  const rows = s.parameters.map((r, i) => [
    String(i + 1),
    `${r.parameter}${r.kind === 'estimate' ? ' (estimate)' : ''}`,
    `${pct(r.low.static_optimal)} / ${pct(r.high.static_optimal)}`,
    `${pct(r.low.dype_optimal)} / ${pct(r.high.dype_optimal)}`,
    `${x(r.low.throughput_vs_static)} / ${x(r.high.throughput_vs_static)}`,
    `${x(r.low.throughput_vs_gpu_only)} / ${x(r.high.throughput_vs_gpu_only)}`,
    r.effect.toFixed(3),
    `${r.values.low} / ${r.values.base} / ${r.values.high}`,
  ]);
  const w = head.map((h, j) => Math.max(h.length, ...rows.map((r) => r[j]!.length)));
  const fmt = (r: string[]): string =>
    r.map((c, j) => (j === r.length - 1 ? c : j === 0 || j >= 2 ? c.padStart(w[j]!) : c.padEnd(w[j]!))).join('  ');
  lines.push(fmt(head));
  for (const r of rows) lines.push(fmt(r));
  lines.push('(low end / high end; effect = the largest change of a share or of ln(gain) at either end)');
  if (s.not_moved.length)
    lines.push(`Not moved (the suite never reads them): ${s.not_moved.map((n) => n.parameter).join(', ')}.`);
  return lines.join('\n') + '\n';
}
