/**
 * Every parameter of the models, in one list: the constants of the cost
 * model (`MODEL`), of dype's FPGA designs and their resource costs, of the
 * simulation (`SIM`), each with the entry its ParameterTable gives it, and
 * every number of every system preset with its `sources`, `measuredOn` and
 * `ranges` entries. docs/COST-MODEL.md's table "Every model parameter" is
 * `parameterTableMarkdown()` (test/eval/parameters.test.ts fails when the
 * page is out of date, and DYPE_UPDATE_GOLDENS=1 rewrites it); `dype eval
 * --sensitivity` moves the estimates and measured ranges listed here.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { FPGA_DESIGN_DEFAULTS, FPGA_DESIGN_SOURCES, FPGA_UNIT_COSTS } from '../runtime/plan/fpga-designs.js';
import { MODEL, MODEL_SOURCES } from '../runtime/plan/model.js';
import {
  entryFor,
  leaves,
  rangeOf,
  type Leaf,
  type ParameterKind,
  type ParameterRange,
  type ParameterSource,
  type ParameterTable,
} from '../runtime/plan/parameters.js';
import { loadSystemFile } from '../runtime/system/load.js';
import type { CpuModelSpec, SystemSpec } from '../runtime/system/types.js';
import { repoRoot } from './paths.js';
import { SIM, SIM_SOURCES } from './sim/params.js';
import { SETTINGS } from './systems.js';
import { workloads } from './workloads.js';

/** A constants object, its name (the first segment of its paths), the table of its sources, and the file that holds both. */
export interface ConstantGroup {
  name: string;
  root: object;
  table: ParameterTable;
  file: string;
}

export const CONSTANT_GROUPS: readonly ConstantGroup[] = [
  { name: 'MODEL', root: MODEL, table: MODEL_SOURCES, file: 'runtime/plan/model.ts' },
  {
    name: 'FPGA_DESIGN_DEFAULTS',
    root: FPGA_DESIGN_DEFAULTS,
    table: FPGA_DESIGN_SOURCES,
    file: 'runtime/plan/fpga-designs.ts',
  },
  { name: 'FPGA_UNIT_COSTS', root: FPGA_UNIT_COSTS, table: FPGA_DESIGN_SOURCES, file: 'runtime/plan/fpga-designs.ts' },
  { name: 'SIM', root: SIM, table: SIM_SOURCES, file: 'eval/sim/params.ts' },
];

/** A table entry and the leaves of its group it is the most specific entry for. */
export interface ConstantEntry {
  group: ConstantGroup;
  key: string;
  entry: ParameterSource;
  leaves: { path: string; value: Leaf }[];
}

/** Per group, every entry with the leaves it covers (entries of a shared table that cover nothing of this group are left out). */
export function constantEntries(): ConstantEntry[] {
  const out: ConstantEntry[] = [];
  for (const g of CONSTANT_GROUPS) {
    const all = leaves(g.root, g.name);
    for (const [key, entry] of Object.entries(g.table)) {
      if (key.split('.')[0] !== g.name) continue;
      out.push({ group: g, key, entry, leaves: all.filter((l) => entryFor(g.table, l.path)?.key === key) });
    }
  }
  return out;
}

/** Leaves of the constants without an entry (a test keeps this empty). */
export function uncoveredConstants(): string[] {
  return CONSTANT_GROUPS.flatMap((g) =>
    leaves(g.root, g.name)
      .filter((l) => !entryFor(g.table, l.path))
      .map((l) => l.path),
  );
}

// ---------------------------------------------------------------------------
// System presets

/** Every preset in systems/, by name. */
export function presetNames(): string[] {
  return readdirSync(join(repoRoot(), 'systems'))
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
}

export function loadPreset(name: string): SystemSpec {
  return loadSystemFile(join(repoRoot(), 'systems', `${name}.json`));
}

/** A number of a preset: its path (`devices[1].memBandwidthGBs`), the device it belongs to, and everything the file says about it. */
export interface PresetField {
  preset: string;
  path: string;
  value: number;
  /** `cpu`, `gpu`, `fpga` (the device's kind), or `peer` for a peer link. */
  owner: string;
  /** The path below the device or link: `memBandwidthGBs`, `hostLink.latencyUs`. */
  field: string;
  source: string;
  kind: ParameterKind | undefined;
  measuredOn: string | undefined;
  range: ParameterRange | undefined;
}

/** Whether a sources (or measuredOn) key covers a field path: equal, or a prefix ending at `.` or `[`. */
export const sourceCovers = (key: string, path: string): boolean =>
  path === key || path.startsWith(`${key}.`) || path.startsWith(`${key}[`);

function lookup<T>(map: Record<string, T> | undefined, path: string): T | undefined {
  let best: string | undefined;
  for (const k of Object.keys(map ?? {}))
    if (sourceCovers(k, path) && (best === undefined || k.length > best.length)) best = k;
  return best === undefined ? undefined : map![best];
}

/**
 * The kind of figure a source is, from how its text begins (docs/COST-MODEL.md's
 * conventions); a source that begins otherwise is a measurement when the file
 * says what it was measured on (`measuredOn`), and unknown else (a test fails).
 */
export function sourceKind(text: string, measuredOn: string | undefined): ParameterKind | undefined {
  if (/^estimate/i.test(text)) return 'estimate';
  if (/^computed/i.test(text)) return 'computed';
  if (/^measured here|^measured by dype calibrate/i.test(text)) return 'measured here';
  if (/^measured/i.test(text)) return 'measured';
  if (/^published fit/i.test(text)) return 'published fit';
  if (/^configuration/i.test(text)) return 'configuration';
  if (measuredOn !== undefined) return 'measured';
  if (/datasheet|data sheet|whitepaper|product page/i.test(text)) return 'datasheet';
  return undefined;
}

const DEFAULT_MEASURED_ON: Partial<Record<ParameterKind, string>> = {
  estimate: 'none',
  computed: 'computed from the figures cited',
  datasheet: 'vendor datasheet',
  configuration: 'none (a choice)',
  'measured here': 'the development machine (systems/this-machine.json)',
};

/** Every number under a preset's devices and peer links (device counts aside), with its source. */
export function presetFields(name: string, s: SystemSpec = loadPreset(name)): PresetField[] {
  const out: PresetField[] = [];
  const walk = (v: unknown, path: string, owner: string, field: string): void => {
    if (typeof v === 'number') {
      let source = lookup(s.sources, path) ?? '';
      // "(see `devices[2].fpga.resources`)": the source of the field named.
      const see = /^\(see `([^`]+)`\)$/.exec(source);
      if (see) source = s.sources?.[see[1]!] ?? source;
      const measuredOn = lookup(s.measuredOn, path);
      const kind = sourceKind(source, measuredOn);
      out.push({
        preset: name,
        path,
        value: v,
        owner,
        field,
        source,
        kind,
        measuredOn: measuredOn ?? (kind ? DEFAULT_MEASURED_ON[kind] : undefined),
        range: s.ranges?.[path],
      });
    } else if (v !== null && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) walk(x, `${path}.${k}`, owner, field === '' ? k : `${field}.${k}`);
  };
  s.devices.forEach((d, i) => {
    for (const [k, x] of Object.entries(d)) if (k !== 'count') walk(x, `devices[${i}].${k}`, d.kind, k);
  });
  s.peerLinks.forEach((l, i) => {
    for (const [k, x] of Object.entries(l)) walk(x, `peerLinks[${i}].${k}`, 'peer', k);
  });
  return out;
}

/** Every cpuModel field's unit: a new field is a type error here until it has one. */
const CPU_MODEL_UNITS: Record<keyof CpuModelSpec, string> = {
  nsPerNnz: 'ns',
  nsPerGather: 'ns',
  nsPerRow: 'ns',
  nsPerItem: 'ns',
  nsPerMiss: 'ns',
  nsPerByte: 'ns',
  cacheMB: 'MB',
  nsPerBranchMiss: 'ns',
  branchHistoryChangeBits: 'bits',
  branchHistoryBits: 'bits',
  branchHistoryTrips: 'trips',
  branchHistoryRows: 'rows',
  nsPerBlockEntry: 'ns',
  nsPerDotElement: 'ns',
  nsPerDotRowElement: 'ns',
  parallelEfficiency: 'fraction',
  dispatchUsPerThread: 'us per thread',
  nsPerDenseFlop: 'ns',
  nsPerDenseByte: 'ns',
  nsPerDenseTrip: 'ns',
  denseBlockBytes: 'bytes',
};

/** The unit of a preset field, from its name. */
export function presetUnit(field: string): string {
  const last = field.split('.').pop()!;
  if (field.startsWith('peakGflops.')) return last.startsWith('i') ? 'GOP/s' : 'GFLOP/s';
  if (field.startsWith('fpga.resources.'))
    return (
      { lut: 'LUTs', ff: 'flip-flops', bram: 'BRAM36 blocks', uram: 'UltraRAM blocks', dsp: 'DSP slices' }[last] ?? '-'
    );
  // A CPU backend's own fit (cpuBackendModels.<backend>.cpuModel.*) has the top-level model's units.
  if (/^(cpuBackendModels\.[a-z]+\.)?cpuModel\./.test(field)) {
    const unit = CPU_MODEL_UNITS[last as keyof CpuModelSpec];
    if (unit === undefined) throw new Error(`presetUnit: no unit for cpuModel field '${last}'`);
    return unit;
  }
  if (last === 'threads') return 'threads';
  if (last === 'hbmChannels') return 'channels';
  const suffix: [RegExp, string][] = [
    [/GBs$/, 'GB/s'],
    [/Us$/, 'us'],
    [/Ms$/, 'ms'],
    [/W$/, 'W'],
    [/GB$/, 'GB'],
    [/MB$/, 'MB'],
    [/MHz$/, 'MHz'],
  ];
  for (const [re, u] of suffix) if (re.test(last)) return u;
  return '-';
}

// ---------------------------------------------------------------------------
// The table

export interface ParameterRow {
  parameter: string;
  value: string;
  unit: string;
  kind: ParameterKind | 'unknown';
  source: string;
  measuredOn: string;
  range: string;
}

/** Numbers as written: integers as they are, others to 6 significant digits. */
export const fmtValue = (v: Leaf): string =>
  typeof v === 'boolean' ? String(v) : Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(6)));

function rangeText(r: ParameterRange | undefined, notInEval: string | undefined): string {
  if (notInEval) return `not moved: ${notInEval}`;
  if (!r) return '-';
  return `${fmtValue(r.low)} to ${fmtValue(r.high)} (${r.basis})`;
}

function constantRow(c: ConstantEntry): ParameterRow {
  const values = [...new Set(c.leaves.map((l) => fmtValue(l.value)))];
  let value: string;
  if (c.leaves.length === 1 && c.leaves[0]!.path === c.key) value = values[0]!;
  // `FPGA_DESIGN_DEFAULTS.*.x`: one value for every design, or each design's.
  else if (c.key.includes('*'))
    value =
      values.length === 1
        ? `${values[0]} (${c.leaves.map((l) => l.path.split('.')[1]).join(', ')})`
        : c.leaves.map((l) => `${l.path.split('.')[1]} ${fmtValue(l.value)}`).join(', ');
  else value = c.leaves.map((l) => `${l.path.slice(c.key.length + 1)} ${fmtValue(l.value)}`).join(', ');
  // One value: its range; an estimate over several values moves each by the same factor.
  const first = c.leaves.find((l) => typeof l.value === 'number');
  const r = first ? rangeOf(c.entry, first.value as number) : undefined;
  const range =
    c.entry.notInEval || !r || c.leaves.length === 1
      ? rangeText(r, c.entry.notInEval)
      : `each value ${r.basis.replace(/^estimate: /, '')}`;
  return {
    parameter: `\`${c.key}\``,
    value,
    unit: c.entry.unit,
    kind: c.entry.kind,
    source: c.entry.source,
    measuredOn: c.entry.measuredOn,
    range,
  };
}

/** What the suite runs: the presets of its settings and the dtypes of its workloads' ops. */
export interface SuiteScope {
  presets: ReadonlySet<string>;
  dtypes: ReadonlySet<string>;
}

export function suiteScope(): SuiteScope {
  const dtypes = new Set(workloads().flatMap((w) => w.spec.ops.map((o) => (o.dtype === 'bool' ? 'i32' : o.dtype))));
  return { presets: new Set(SETTINGS.map((s) => s.preset)), dtypes };
}

/** Why `dype eval` cannot be sensitive to a preset field (it never reads it), or undefined. */
export function presetNotInEval(
  f: Pick<PresetField, 'preset' | 'owner' | 'field'>,
  scope: SuiteScope,
): string | undefined {
  if (!scope.presets.has(f.preset)) return 'not a preset of the suite';
  if (f.field === 'fpga.bitstreamLoadMs') return "read only by the runtime's switching policy (runtime/policy/cost.ts)";
  if (f.field.startsWith('fpga.resources.'))
    return "the card's totals (datasheet); the designs' unit costs (FPGA_UNIT_COSTS) are moved instead";
  if (f.owner === 'fpga' && f.field.startsWith('peakGflops.'))
    return 'not read: the FPGA designs are timed from their clock, PEs and channels, not from a peak';
  const dt = /^peakGflops\.(\w+)$/.exec(f.field)?.[1];
  if (dt && !scope.dtypes.has(dt))
    return `no op of the suite computes in ${dt} (all are ${[...scope.dtypes].join(', ')})`;
  return undefined;
}

/** The preset fields grouped where several presets give the same number with the same source. */
function presetRows(scope: SuiteScope): ParameterRow[] {
  const byKey = new Map<string, { presets: string[]; f: PresetField }>();
  for (const name of presetNames())
    for (const f of presetFields(name)) {
      const k = JSON.stringify([f.path, f.value, f.source, f.measuredOn, f.range]);
      const cur = byKey.get(k);
      if (cur) cur.presets.push(name);
      else byKey.set(k, { presets: [name], f });
    }
  return [...byKey.values()].map(({ presets, f }) => {
    const r =
      f.range ??
      (f.kind === 'estimate'
        ? rangeOf({ unit: '', kind: 'estimate', source: '', measuredOn: '' }, f.value)
        : undefined);
    return {
      parameter: `${presets.map((p) => `\`${p}\``).join(', ')}: \`${f.path}\` (${f.owner})`,
      value: fmtValue(f.value),
      unit: presetUnit(f.field),
      kind: f.kind ?? 'unknown',
      source: f.source,
      measuredOn: f.measuredOn ?? 'unknown',
      range: r ? rangeText(r, presetNotInEval(f, scope)) : '-',
    };
  });
}

export function parameterRows(scope: SuiteScope = suiteScope()): ParameterRow[] {
  return [
    ...constantEntries()
      .filter((c) => c.leaves.length > 0)
      .map(constantRow),
    ...presetRows(scope),
  ];
}

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The table of docs/COST-MODEL.md, "Every model parameter". */
export function parameterTableMarkdown(scope: SuiteScope = suiteScope()): string {
  const lines = [
    '| parameter | value | unit | kind | source | measured on | sensitivity range |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const r of parameterRows(scope))
    lines.push(
      `| ${[r.parameter, r.value, r.unit, r.kind === 'estimate' ? '**estimate**' : r.kind, r.source, r.measuredOn, r.range].map(cell).join(' | ')} |`,
    );
  return lines.join('\n') + '\n';
}
