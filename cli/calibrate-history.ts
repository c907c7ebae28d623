/**
 * `dype calibrate --history FILE [--system S] [-o OUT] [--json]`: refits a
 * system file's devices from a history of measured op runs (what a runtime
 * given a history, or `dype run --project --history`, appended): per device
 * and implementation, buckets of work and imbalance with their measured time
 * per byte (runtime/history/fit.ts), which the planner prefers to its
 * formulas where a bucket rests on at least MIN_RUNS runs. Runs on emulated
 * backends (cuda-emu, fpga-csim) are left out: their times are the
 * emulation's, not the device's. Reports, per device, how far the formulas
 * were from the measured runs, and how far the history is (on the same runs,
 * and with each run left out of its own bucket).
 */
import { BACKENDS_OF_KIND, NATIVE_BACKENDS } from '../runtime/native/abi.js';
import { fitHistory, historyMs, measuredAlone, MIN_RUNS, recordOp } from '../runtime/history/fit.js';
import { readHistory } from '../runtime/history/log.js';
import { InputError } from '../runtime/errors.js';
import type { HistoryRecord } from '../runtime/history/types.js';
import { writeFileAtomic } from '../runtime/io/mtx-write.js';
import { callOverheadUs, CATALOGUE, type ImplEntry } from '../runtime/catalogue/index.js';
import type { DeviceKind, DeviceSpec, SystemSpec } from '../runtime/system/types.js';
import { DEFAULT_HISTORY_SYSTEM } from './defaults.js';
import { snakeKeys } from './json-keys.js';
import { loadSystem } from './planning.js';

const EMULATED = new Set<string>(
  Object.values(NATIVE_BACKENDS).flatMap((b) => (b.emulated === null ? [] : [b.emulated])),
);

const relErr = (pred: number, meas: number): number => Math.abs(pred - meas) / Math.max(meas, 1e-9);
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[s.length >> 1]! : (s[(s.length >> 1) - 1]! + s[s.length >> 1]!) / 2;
};

export interface HistoryReport {
  device: string;
  backend: string;
  runs: number;
  entries: number;
  buckets: number;
  bucketsUsed: number;
  formulaMedianErrPct: number;
  historyMedianErrPct: number;
  leaveOneOutMedianErrPct: number;
}

export function calibrateFromHistory(
  o: { history: string; system?: string; output?: string; json?: boolean },
  out: (s: string) => void,
): void {
  const records = readHistory(o.history);
  const base = loadSystem(o.system !== undefined ? { system: o.system } : {}, DEFAULT_HISTORY_SYSTEM);
  refuseOtherSystems(o.history, records, base);
  const reports: HistoryReport[] = [];
  const devices: DeviceSpec[] = base.devices.map((d) => {
    const mine = records.filter(
      (r) => r.device === d.id && r.system === base.name && !EMULATED.has(r.backend) && measuredAlone(r),
    );
    const backends = [...new Set(mine.map((r) => r.backend))];
    if (backends.length === 0) return d;
    // One backend per device: the one with the most runs (a CPU measured by wasm and, later, native code keeps them apart).
    const backend = backends.sort(
      (a, b) => mine.filter((r) => r.backend === b).length - mine.filter((r) => r.backend === a).length,
    )[0]!;
    const runs = mine.filter((r) => r.backend === backend);
    // What the planner adds to an entry's time per call (a GPU's sparse kernels: their floor, not the launch).
    const callUs = (r: HistoryRecord): number => callOverheadUs(recordOp(r), d);
    const history = fitHistory(runs, d, backend, callUs);
    const fitted: DeviceSpec = { ...d, history };
    const table = CATALOGUE[d.kind] as Readonly<Record<string, ImplEntry | undefined>>;
    const formula = runs.flatMap((r) => {
      const f = table[r.impl];
      return f ? [relErr(f.ms(recordOp(r), d, r.threads) + callUs(r) / 1e3, r.ms)] : [];
    });
    const withHistory = runs.flatMap((r) => {
      const h = historyMs(recordOp(r), r.impl, fitted, () => r.threads);
      return h === undefined ? [] : [relErr(h + callUs(r) / 1e3, r.ms)];
    });
    // Each run predicted from the others of its bucket (the bucket refitted without it).
    const loo = runs.flatMap((r, i) => {
      const h = historyMs(
        recordOp(r),
        r.impl,
        {
          ...d,
          history: fitHistory(
            runs.filter((_, j) => j !== i),
            d,
            backend,
            callUs,
          ),
        },
        () => r.threads,
      );
      return h === undefined ? [] : [relErr(h + callUs(r) / 1e3, r.ms)];
    });
    const buckets = history.flatMap((e) => e.buckets);
    reports.push({
      device: d.id,
      backend,
      runs: runs.length,
      entries: history.length,
      buckets: buckets.length,
      bucketsUsed: buckets.filter((b) => b.runs >= MIN_RUNS).length,
      formulaMedianErrPct: median(formula) * 100,
      historyMedianErrPct: median(withHistory) * 100,
      leaveOneOutMedianErrPct: median(loo) * 100,
    });
    return fitted;
  });
  // Nothing refitted: the unchanged system file would read as success.
  if (reports.length === 0) {
    const cold = records.filter((r) => r.system === base.name && r.cold === true).length;
    throw new InputError(
      'DY3048',
      o.history,
      undefined,
      `no run of ${base.name} the fit can use: of ${records.length} runs, ${records.filter((r) => r.system === base.name && EMULATED.has(r.backend)).length} emulated, ${records.filter((r) => r.system === base.name && r.concurrent).length} overlapping in a stream, ${records.filter((r) => r.system === base.name && r.split !== 1).length} split, ${cold} cold (a process's first run)${cold > 0 ? ': record with dype run --project ... --repeat N --history FILE, whose warm runs are measurements' : ''}; nothing was written`,
    );
  }
  const date = new Date().toISOString().slice(0, 10);
  const sys: SystemSpec = {
    ...base,
    devices,
    sources: {
      ...(base.sources ?? {}),
      ...Object.fromEntries(
        devices.flatMap((d, i) =>
          d.history
            ? [
                [
                  `devices[${i}].history`,
                  `measured op runs of ${o.history} (dype calibrate --history, ${date}): median time per byte per bucket of work and imbalance; used where a bucket has at least ${MIN_RUNS} runs`,
                ],
              ]
            : [],
        ),
      ),
    },
  };
  const text = `${JSON.stringify(sys, null, 2)}\n`;
  if (o.output !== undefined) writeFileAtomic(o.output, text);
  if (o.json) {
    out(
      `${JSON.stringify({ history: o.history, records: records.length, system: base.name, devices: snakeKeys(reports), ...(o.output !== undefined ? { output: o.output } : {}) }, null, 2)}\n`,
    );
    return;
  }
  if (o.output === undefined) out(text);
  const lines = [`history ${o.history}: ${records.length} runs for ${base.name}`];
  for (const r of reports)
    lines.push(
      `  ${r.device} (${r.backend}): ${r.runs} runs, ${r.entries} op kinds, ${r.bucketsUsed} of ${r.buckets} buckets with >= ${MIN_RUNS} runs; median error: formulas ${pct(r.formulaMedianErrPct)}, history ${pct(r.historyMedianErrPct)} (each run left out of its bucket: ${pct(r.leaveOneOutMedianErrPct, `no bucket has ${MIN_RUNS} runs besides the one left out`)})`,
    );
  (o.output === undefined ? process.stderr.write.bind(process.stderr) : out)(`${lines.join('\n')}\n`);
}

/** A median error for the report; a median of nothing (NaN, null in --json) says why there is none. */
function pct(x: number, none = 'none: too few runs'): string {
  return Number.isFinite(x) ? `${x.toFixed(1)}%` : none;
}

/** What a backend name runs, for the message. */
function kindsOfBackend(backend: string): string {
  const kinds = (Object.keys(BACKENDS_OF_KIND) as DeviceKind[]).filter((k) => BACKENDS_OF_KIND[k].includes(backend));
  return kinds.length > 0 ? `runs a ${kinds.join(' or ')}` : 'is no backend of dype';
}

/**
 * A run counts for the system it was planned on (`dype run --project` records the project's system). A history
 * whose runs are all of other systems would otherwise refit nothing and print a system file unchanged, which reads
 * as success: it is refused, naming the systems the file holds and the flag that takes them.
 */
function refuseOtherSystems(path: string, records: readonly HistoryRecord[], sys: SystemSpec): void {
  const system = sys.name;
  // An empty history refits nothing either: the unchanged system file it would print reads as success.
  if (records.length === 0)
    throw new InputError(
      'DY3048',
      path,
      undefined,
      'the history holds no run: record some with dype run --project ... --history FILE first',
    );
  // A run of this system must name one of its devices, of that device's kind, on a backend of that kind.
  const mine = records.filter((r) => r.system === system);
  const devices = new Map(sys.devices.map((d) => [d.id, d]));
  for (const r of mine) {
    const d = devices.get(r.device);
    const why =
      d === undefined
        ? `names device '${r.device}', which system '${system}' has not (its devices: ${sys.devices.map((x) => x.id).join(', ')})`
        : d.kind !== r.kind
          ? `says device '${r.device}' is a ${r.kind}, but in system '${system}' it is a ${d.kind}`
          : !BACKENDS_OF_KIND[d.kind].includes(r.backend)
            ? `says a ${d.kind} ran on backend '${r.backend}', which ${kindsOfBackend(r.backend)}`
            : undefined;
    if (why)
      throw new InputError(
        'DY3048',
        path,
        undefined,
        `run ${records.indexOf(r) + 1} of system '${system}' ${why}: the history is of another machine or was edited`,
      );
  }
  if (mine.length > 0) return;
  const counts = new Map<string, number>();
  for (const r of records) counts.set(r.system, (counts.get(r.system) ?? 0) + 1);
  const held = [...counts].map(([name, n]) => `${name} (${n})`).join(', ');
  throw new InputError(
    'DY3048',
    path,
    undefined,
    `no run here is of system '${system}': its ${records.length} runs are of ${held}; a run counts for the system it was planned on, so pass --system ${[...counts.keys()][0]}`,
  );
}
