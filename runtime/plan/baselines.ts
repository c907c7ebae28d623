/**
 * Baseline strategies over the same cost model: single-device-kind plans
 * (GPU-only, FPGA-only, CPU-only: the best mapping that uses only that kind),
 * static (one mapping chosen once for a training set of inputs and kept for
 * every input), and HEFT list scheduling (each op to the instance that
 * finishes it earliest, no pipelining by design).
 */
import { instances, type DeviceKind, type SystemSpec } from '../system/types.js';
import { bestOpTime } from './cost.js';
import {
  choicesOf,
  evaluateChoices,
  lastWriters,
  objectiveValue,
  planPareto,
  type PlanOptions,
  type StageChoice,
} from './dp.js';
import { figures, type Accounting } from './figures.js';
import { evalStage, transferMs } from './stage.js';
import type { Mapping, PlanProblem, Stage } from './types.js';

export function singleKind(sys: SystemSpec, p: PlanProblem, kind: DeviceKind, opts: PlanOptions): Mapping | undefined {
  if (!sys.devices.some((d) => d.kind === kind)) return undefined;
  return planPareto(sys, p, { ...opts, kinds: [kind] }).pareto[0];
}

/**
 * Static: among the best mappings for each training input, the one whose
 * mean objective over all training inputs (each relative to that input's own
 * optimum) is lowest; then scored on `p`.
 */
export function staticChoice(
  sys: SystemSpec,
  training: readonly PlanProblem[],
  opts: PlanOptions,
): StageChoice[] | undefined {
  const best = training.map((t) => planPareto(sys, t, opts).pareto[0]);
  const candidates = best.flatMap((m, i) => (m ? [choicesOf(training[i]!, m)] : []));
  let pick: StageChoice[] | undefined;
  let score = Infinity;
  for (const c of candidates) {
    let total = 0;
    for (let i = 0; i < training.length; i++) {
      const m = evaluateChoices(sys, training[i]!, c, opts);
      const ref = best[i];
      total += m && ref ? objectiveValue(m, opts.objective) / objectiveValue(ref, opts.objective) : Infinity;
    }
    if (total < score) {
      score = total;
      pick = c;
    }
  }
  return pick;
}

/**
 * HEFT: ops ranked by upward rank (mean cost plus the costliest path to the
 * exit), each placed on the instance with the earliest finish. It ignores
 * the objective by design; `acct` says how its figures are counted.
 */
export function heft(
  sys: SystemSpec,
  p: PlanProblem,
  acct: Accounting,
  /** The instances HEFT may place tasks on (default: all); the others stay idle and still draw their idle power. */
  allowed?: ReadonlySet<string>,
): Mapping | undefined {
  const all = instances(sys).map((x) => ({ name: x.name, dev: x.spec }));
  const inst = allowed ? all.filter((x) => allowed.has(x.name)) : all;
  if (inst.length === 0) return undefined;
  // A repeat region is one task: its ops never leave one device.
  const tasks: { ops: typeof p.ops; id: string }[] = [];
  for (const op of p.ops) {
    const last = tasks[tasks.length - 1];
    if (op.group !== undefined && last && last.ops[0]!.group === op.group) last.ops.push(op);
    else tasks.push({ ops: [op], id: op.id });
  }
  const writers = lastWriters(p);
  const opById = new Map(p.ops.map((o) => [o.id, o]));
  const taskOf = new Map<string, number>();
  tasks.forEach((t, i) => t.ops.forEach((o) => taskOf.set(o.id, i)));
  const cost = (t: number, d: (typeof inst)[number]['dev']): number =>
    tasks[t]!.ops.reduce((a, o) => a + bestOpTime(o, d, 1).ms, 0);
  const succ = tasks.map(() => new Set<number>());
  const preds = tasks.map(() => new Map<number, number>());
  tasks.forEach((t, i) => {
    for (const o of t.ops)
      for (const r of o.reads) {
        if (r.from.kind !== 'op') continue;
        const src = taskOf.get(r.from.id)!;
        if (src === i) continue;
        succ[src]!.add(i);
        const bytes = p.ops.find((x) => x.id === (r.from as { id: string }).id)!.resultBytes;
        preds[i]!.set(src, Math.max(preds[i]!.get(src) ?? 0, bytes));
      }
  });
  const mean = tasks.map((_, t) => inst.reduce((a, x) => a + cost(t, x.dev), 0) / inst.length);
  const rank = new Array<number>(tasks.length).fill(0);
  for (let t = tasks.length - 1; t >= 0; t--) rank[t] = mean[t]! + Math.max(0, ...[...succ[t]!].map((s) => rank[s]!));
  const order = tasks.map((_, t) => t).sort((a, b) => rank[b]! - rank[a]! || a - b);
  const free = new Map(inst.map((x) => [x.name, 0]));
  const busy = new Map(all.map((x) => [x.name, 0]));
  const place = new Map<number, { name: string; dev: (typeof inst)[number]['dev']; finish: number }>();
  const stages: Stage[] = [];
  for (const t of order) {
    let best:
      | {
          name: string;
          dev: (typeof inst)[number]['dev'];
          start: number;
          finish: number;
          xfer: number;
          predXfer: number;
          ms: number;
        }
      | undefined;
    for (const x of inst) {
      // Only devices that can hold and run the task (memory, FPGA resources, dtypes).
      const check = evalStage(
        {
          sys,
          problem: p,
          producerDevice: (id) => place.get(taskOf.get(id)!)?.dev,
          lastWriter: writers,
          opById,
          opTime: bestOpTime,
        },
        tasks[t]!.ops,
        x.dev,
        1,
      );
      if (!check.ok) continue;
      let ready = 0;
      let xfer = 0;
      for (const [src, bytes] of preds[t]!) {
        const at = place.get(src)!;
        const moved = at.name === x.name ? 0 : transferMs(sys, at.dev, x.dev, bytes);
        xfer += moved;
        ready = Math.max(ready, at.finish + moved);
      }
      // Parameters come from host memory when the task starts.
      let inputs = 0;
      for (const o of tasks[t]!.ops)
        for (const r of o.reads)
          if (r.from.kind === 'param') inputs += transferMs(sys, undefined, x.dev, p.paramBytes.get(r.value) ?? 0);
      const ms = cost(t, x.dev) + inputs;
      const start = Math.max(ready, free.get(x.name)!);
      if (!best || start + ms < best.finish)
        best = { name: x.name, dev: x.dev, start, finish: start + ms, xfer: xfer + inputs, predXfer: xfer, ms };
    }
    if (!best) return undefined;
    place.set(t, { name: best!.name, dev: best!.dev, finish: best!.finish });
    free.set(best!.name, best!.finish);
    busy.set(best!.name, busy.get(best!.name)! + best!.ms + best!.predXfer);
    stages.push({
      ops: tasks[t]!.ops.map((o) => o.id),
      device: best!.dev.id,
      kind: best!.dev.kind,
      count: 1,
      devices: [best!.name],
      variants: Object.fromEntries(tasks[t]!.ops.map((o) => [o.id, bestOpTime(o, best!.dev, 1).variant])),
      computeMs: best!.ms - (best!.xfer - best!.predXfer),
      // HEFT places unsplit tasks and does not model the root complex.
      syncMs: 0,
      rootBytes: 0,
      transferMs: best!.xfer,
      timeMs: best!.ms + best!.predXfer,
      periodMs: best!.ms + best!.predXfer,
    });
  }
  const latency = Math.max(...[...place.values()].map((x) => x.finish));
  const period = Math.max(...busy.values());
  // Busy instances draw active power while busy and their waiting power otherwise, as a pipeline's do (figures.ts).
  const activeJ = all.reduce((a, x) => a + (busy.get(x.name)! / 1e3) * (x.dev.activePowerW - x.dev.waitingPowerW), 0);
  const usedPower = all.reduce((a, x) => a + (busy.get(x.name)! > 0 ? x.dev.activePowerW : x.dev.idlePowerW), 0);
  const used = sys.devices.map((d) => all.filter((x) => x.dev === d && busy.get(x.name)! > 0).length);
  stages.sort((a, b) => p.ops.findIndex((o) => o.id === a.ops[0]) - p.ops.findIndex((o) => o.id === b.ops[0]));
  return {
    stages,
    ...figures(sys, used, { stagePeriodMs: period, rootMs: 0, latencyMs: latency, activeJ }, acct),
    powerW: usedPower,
  };
}

export { evaluateChoices };

/**
 * The peak draw of a mapping on `sys`: the instances it uses at their active power, every other instance of the
 * system idle. A mapping made on a subset of the devices (HEFT on fewer) is measured against the whole system,
 * whose other devices still draw their idle power.
 */
export function peakDrawW(sys: SystemSpec, m: Mapping): number {
  const used = new Set(m.stages.flatMap((s) => s.devices));
  return instances(sys).reduce((a, x) => a + (used.has(x.name) ? x.spec.activePowerW : x.spec.idlePowerW), 0);
}

/** `m` where it keeps under the system's power cap (or there is none), else undefined. */
export function withinCap(sys: SystemSpec, m: Mapping | undefined): Mapping | undefined {
  const cap = sys.constraints.powerCapW;
  return m && (cap === undefined || peakDrawW(sys, m) <= cap + 1e-9) ? m : undefined;
}

/**
 * The instances a schedule may use, every nonempty choice of how many of each device (the first ones of each: its
 * instances are alike), most first.
 */
export function instanceSubsets(sys: SystemSpec): Set<string>[] {
  const byDevice = sys.devices.map((d) =>
    instances(sys)
      .filter((x) => x.spec === d)
      .map((x) => x.name),
  );
  const out: Set<string>[] = [];
  const rec = (i: number, names: string[]): void => {
    if (i === byDevice.length) {
      if (names.length > 0) out.push(new Set(names));
      return;
    }
    for (let c = byDevice[i]!.length; c >= 0; c--) rec(i + 1, [...names, ...byDevice[i]!.slice(0, c)]);
  };
  rec(0, []);
  return out;
}

/** A baseline's mapping, or why there is none; `note` says how it was found. */
export interface BaselinePick {
  mapping: Mapping | undefined;
  note: string;
}

/**
 * HEFT under the system's power cap: HEFT itself places every op on the instance that finishes it first, whatever
 * that draws, so where its schedule breaks the cap it runs again on each subset of the devices, and the best
 * schedule within the cap (by the objective) is kept.
 */
export function heftWithinCap(sys: SystemSpec, p: PlanProblem, opts: PlanOptions): BaselinePick {
  const whole = heft(sys, p, opts);
  if (withinCap(sys, whole)) return { mapping: whole, note: 'heft' };
  if (!whole) return { mapping: undefined, note: 'no HEFT schedule fits the devices' };
  let best: Mapping | undefined;
  for (const allowed of instanceSubsets(sys)) {
    const m = withinCap(sys, heft(sys, p, opts, allowed));
    if (m && (!best || objectiveValue(m, opts.objective) < objectiveValue(best, opts.objective))) best = m;
  }
  return best
    ? { mapping: best, note: 'heft on the devices the power cap allows' }
    : { mapping: undefined, note: 'no HEFT schedule meets the power cap' };
}

/** The best mapping on devices of one kind, or why there is none (no such device, or none that fits or meets the limits). */
export function singleKindPick(sys: SystemSpec, p: PlanProblem, kind: DeviceKind, opts: PlanOptions): BaselinePick {
  if (!sys.devices.some((d) => d.kind === kind)) return { mapping: undefined, note: `no ${kind} in this system` };
  const m = withinCap(sys, singleKind(sys, p, kind, opts));
  if (m) return { mapping: m, note: `${kind}-only` };
  const free = singleKind(sys, p, kind, { ...opts, powerCapW: undefined, latencyBoundMs: undefined });
  return {
    mapping: undefined,
    note: free
      ? `every ${kind}-only mapping breaks the power cap or the latency bound`
      : `no ${kind}-only mapping fits the devices (memory, resources or dtypes)`,
  };
}

/** The static mapping (staticChoice's) scored on `p` under the system's power cap, or why it cannot run it. */
export function staticPick(
  sys: SystemSpec,
  p: PlanProblem,
  choice: readonly StageChoice[] | undefined,
  acct: Accounting,
): BaselinePick {
  if (!choice) return { mapping: undefined, note: 'no mapping is feasible on the training inputs' };
  const m = withinCap(sys, evaluateChoices(sys, p, choice, acct));
  return m ? { mapping: m, note: 'static' } : { mapping: undefined, note: 'the static mapping cannot run this input' };
}
