/**
 * The partitioner: a dynamic program over the ops in program order (a
 * topological order). A state is (ops placed, device instances used per
 * device, which device holds each value still to be read); its labels are
 * the Pareto set of four partial figures of the mappings reaching it: the
 * longest stage period, the root-complex time of the stages' host traffic,
 * the latency and the energy above the waiting draw (figures.ts). Future
 * costs depend only on the state, and the four combine monotonically (max,
 * +, +, +), so pruning dominated labels within a state keeps every
 * Pareto-optimal mapping. The whole mapping's figures are monotone
 * functions of the four and of the instances used, which the state fixes:
 * the period is max(stage period, root-complex time); the time per input
 * over a stream of N is (latency + (N - 1) period) / N; device energy adds
 * the used instances' waiting draw x that time, system energy the unused
 * ones' idle draw too. So one DP is exact for every stream length, both
 * energy scopes and every objective. Power (peak draw of the devices as
 * used), memory, FPGA resources and the latency bound are all monotone or
 * stage-local, so they prune exactly too.
 */
import { instanceName, type DeviceKind, type DeviceSpec, type SystemSpec } from '../system/types.js';
import {
  checkStreamLength,
  figures,
  rootComplexMs,
  type Figures,
  type Accounting,
  type PartialFigures,
  type PlanGoal,
} from './figures.js';
import { fastestVariant, onInstances, type VariantTime } from './cost.js';
import { evalStage, stageShape, type StageContext, type StageEval, type StageShape } from './stage.js';
import type { Mapping, Objective, PlanOp, PlanProblem, Stage, ValueRead } from './types.js';

/** The goal (objective, energy scope, stream length) and the constraints. */
export interface PlanOptions extends PlanGoal {
  powerCapW?: number;
  latencyBoundMs?: number;
  /** Restrict to these device kinds (the single-device-kind baselines; the kinds a project's targets serve). */
  kinds?: readonly DeviceKind[];
  /**
   * At most this many instances of a device (by id): a runtime whose backend sees fewer devices than the system
   * plans on the instances it can run (they are numbered from 0, runtime/policy/cost.ts stageInstances). A device
   * absent here may use all its instances.
   */
  instances?: Readonly<Record<string, number>>;
}

/** How many instances of `dev` a mapping may use under the options: 0 for a kind left out. */
export function usableInstances(dev: DeviceSpec, opts: Pick<PlanOptions, 'kinds' | 'instances'>): number {
  if (opts.kinds && !opts.kinds.includes(dev.kind)) return 0;
  const cap = opts.instances;
  return Math.min(dev.count, cap && Object.hasOwn(cap, dev.id) ? cap[dev.id]! : dev.count);
}

/** A stage choice, independent of the figures: what `static` keeps across inputs. */
export interface StageChoice {
  start: number;
  end: number;
  device: string;
  count: number;
}

interface StagePick {
  choice: StageChoice;
  /** Index of the device in the system. */
  s: number;
  ev: StageEval;
  timeMs: number;
  periodMs: number;
  /** The stage's host traffic over the root complex's bandwidth. */
  rootMs: number;
  /** Instances x kernel time x (active - waiting power), J. */
  activeJ: number;
}

interface Label extends PartialFigures {
  parent: Label | undefined;
  pick: StagePick | undefined;
}

/**
 * The label of no stage yet: a literal of extend's fields in extend's order, so that every label has one hidden
 * class. Spreading a constant record into it (`{ ...START, parent, pick }`) gave the first label of each walk
 * another shape, and the walk of a partition's stages with its stage costs cached took 3.5-4.3 us instead of
 * 0.35 us (five partitions of gcn on paper-2g2f; docs/PERFORMANCE.md).
 */
function startLabel(): Label {
  return { stagePeriodMs: 0, rootMs: 0, latencyMs: 0, activeJ: 0, parent: undefined, pick: undefined };
}

/** A partial mapping followed by one more stage. */
function extend(l: Label, r: StagePick): Label {
  return {
    stagePeriodMs: Math.max(l.stagePeriodMs, r.periodMs),
    rootMs: l.rootMs + r.rootMs,
    latencyMs: l.latencyMs + r.timeMs,
    activeJ: l.activeJ + r.activeJ,
    parent: l,
    pick: r,
  };
}

/** Draw of the whole system with every instance idle, W (the least any mapping draws). */
export function idlePowerW(sys: SystemSpec): number {
  return sys.devices.reduce((a, d) => a + d.count * d.idlePowerW, 0);
}

/** Peak draw with `used[s]` instances of each device active and the rest idle. */
export function peakPowerW(sys: SystemSpec, used: readonly number[]): number {
  return sys.devices.reduce((a, d, s) => a + used[s]! * d.activePowerW + (d.count - used[s]!) * d.idlePowerW, 0);
}

/** May a stage boundary fall before op i? Not inside a repeat region. */
export function cutPoints(p: PlanProblem): boolean[] {
  return p.ops.map((op, i) => i === 0 || op.group === undefined || p.ops[i - 1]!.group !== op.group).concat([true]);
}

export function lastWriters(p: PlanProblem): Map<string, string> {
  const m = new Map<string, string>();
  for (const op of p.ops) if (p.results.includes(op.result)) m.set(op.result, op.id);
  return m;
}

/** Ops (by index) whose results some op at index >= i still reads. */
function liveAfter(p: PlanProblem): Set<string>[] {
  const index = new Map(p.ops.map((o, i) => [o.id, i]));
  const out: Set<string>[] = p.ops.map(() => new Set<string>());
  out.push(new Set());
  p.ops.forEach((op, j) => {
    for (const r of op.reads) {
      if (r.from.kind !== 'op') continue;
      const src = index.get(r.from.id)!;
      for (let i = src + 1; i <= j; i++) out[i]!.add(r.from.id);
    }
  });
  return out;
}

/**
 * What a planner reads of a problem's ops that does not depend on the input: where stages may be cut, which
 * values stay live, the kernel results' last writers, each op's index, and each op range's stage shape and
 * outside reads. Problems bound from one spec share it (a runtime prices partitions on every new pattern).
 */
export interface PlanStructure {
  readonly cuts: boolean[];
  readonly live: Set<string>[];
  readonly writers: Map<string, string>;
  readonly index: Map<string, number>;
  /** Stage shapes (stage.ts) per range, start * 4096 + end. */
  readonly shapes: Map<number, StageShape>;
  /** Producer ops a stage over a range reads from before it, per start * 4096 + end. */
  readonly externalReads: Map<number, string[]>;
  /** The op ids and reads it was taken from, and the parameters split by rows, to check a problem against. */
  readonly ops: readonly Pick<PlanOp, 'id' | 'reads'>[];
  readonly sparseParams: ReadonlySet<string>;
}

export function planStructure(p: PlanProblem): PlanStructure {
  return {
    cuts: cutPoints(p),
    live: liveAfter(p),
    writers: lastWriters(p),
    index: new Map(p.ops.map((o, i) => [o.id, i])),
    shapes: new Map(),
    externalReads: new Map(),
    ops: p.ops.map((o) => ({ id: o.id, reads: o.reads })),
    sparseParams: new Set(p.sparseParams),
  };
}

const sameReads = (a: readonly ValueRead[], b: readonly ValueRead[]): boolean =>
  a === b ||
  (a.length === b.length &&
    a.every((r, i) => {
      const q = b[i]!;
      return (
        r.value === q.value &&
        r.from.kind === q.from.kind &&
        (r.from.kind === 'param' || (q.from.kind === 'op' && r.from.id === q.from.id))
      );
    }));

/** Whether a structure was taken from ops like these (same ids and reads in the same order, the same results and sparse parameters). */
function fits(st: PlanStructure, p: PlanProblem): boolean {
  return (
    st.ops.length === p.ops.length &&
    st.ops.every((o, i) => o.id === p.ops[i]!.id && sameReads(o.reads, p.ops[i]!.reads)) &&
    [...st.writers.keys()].every((r) => p.results.includes(r)) &&
    st.writers.size === new Set(p.results).size &&
    st.sparseParams.size === p.sparseParams.size &&
    [...p.sparseParams].every((x) => st.sparseParams.has(x))
  );
}

class Planner {
  readonly cuts: boolean[];
  readonly live: Set<string>[];
  readonly writers: Map<string, string>;
  private readonly cache = new Map<number | string, StageEval>();
  /** The most instances of any device, and the span of a stage key before its producers' places (stageFor). */
  private readonly maxCount: number;
  private readonly stageKeySpan: number;
  private readonly externalReads: Map<number, string[]>;
  private readonly shapes: Map<number, StageShape>;
  readonly opById: Map<string, PlanOp>;
  readonly index: Map<string, number>;
  private readonly ctx: StageContext;

  constructor(
    readonly sys: SystemSpec,
    readonly p: PlanProblem,
    readonly opts: Accounting & Pick<PlanOptions, 'kinds' | 'instances'>,
    structure?: PlanStructure,
  ) {
    checkStreamLength(opts.streamLength);
    if (structure && !fits(structure, p))
      throw new Error(`a plan structure of other ops was given for kernel ${p.kernel}'s problem`);
    const st = structure ?? planStructure(p);
    this.cuts = st.cuts;
    this.live = st.live;
    this.writers = st.writers;
    this.index = st.index;
    this.shapes = st.shapes;
    this.externalReads = st.externalReads;
    this.opById = new Map(p.ops.map((o) => [o.id, o]));
    this.maxCount = sys.devices.reduce((a, d) => Math.max(a, d.count), 0);
    this.stageKeySpan = (p.ops.length + 1) * (p.ops.length + 1) * sys.devices.length * (this.maxCount + 1);
    this.ctx = {
      sys,
      problem: p,
      producerDevice: (id) => {
        const at = this.where.get(id);
        return at === undefined ? undefined : sys.devices[at];
      },
      lastWriter: this.writers,
      opById: this.opById,
      opTime: (op, d, count) => this.opTime(op, d, count),
    };
  }

  /** Where earlier values live for the stage being priced (read by ctx.producerDevice). */
  private where: ReadonlyMap<string, number> = new Map();
  /** bestOpTime per (op, device, instances): the DP prices an op once per stage range that holds it, and the partitions one problem weighs share most of their ops. */
  private readonly opTimes = new Map<number, VariantTime>();
  /** The fastest implementation per (op, device), whatever the instances (cost.ts onInstances). */
  private readonly fastest = new Map<number, VariantTime | undefined>();

  opTime(op: PlanOp, dev: DeviceSpec, count: number): VariantTime {
    const nd = this.sys.devices.length;
    const at = this.index.get(op.id)! * nd + this.sys.devices.indexOf(dev);
    const key = at * 65536 + count;
    let t = this.opTimes.get(key);
    if (!t) {
      let best = this.fastest.get(at);
      if (best === undefined && !this.fastest.has(at)) this.fastest.set(at, (best = fastestVariant(op, dev)));
      this.opTimes.set(key, (t = onInstances(op, dev, best, count)));
    }
    return t;
  }

  /** Producer ops that a stage over [start, end) reads from before it (cached per range). */
  private external(start: number, end: number): string[] {
    const key = start * 4096 + end;
    let ids = this.externalReads.get(key);
    if (!ids) {
      const set = new Set<string>();
      for (let i = start; i < end; i++)
        for (const r of this.p.ops[i]!.reads)
          if (r.from.kind === 'op' && this.index.get(r.from.id)! < start) set.add(r.from.id);
      this.externalReads.set(key, (ids = [...set]));
    }
    return ids;
  }

  /** Cost of a stage choice given where earlier values live; the Stage object itself is built only for final mappings. */
  stageFor(choice: StageChoice, s: number, where: ReadonlyMap<string, number>): StagePick | { why: string } {
    const dev = this.sys.devices[s]!;
    // A stage's cost depends only on its ops, device, count and where its inbound values come from: a number in
    // mixed radix where that fits a double's integers (see planPareto's state keys), else a string.
    const ext = this.external(choice.start, choice.end);
    const nd = this.sys.devices.length;
    let key: number | string;
    if (this.stageKeySpan * Math.pow(nd + 1, ext.length) <= 2 ** 52) {
      // The producers' places above the range, device and count (which fix how many producers there are), so keys
      // of ranges with different numbers of producers cannot meet.
      let places = 0;
      for (const id of ext) {
        const at = where.get(id);
        places = places * (nd + 1) + (at === undefined ? 0 : at + 1);
      }
      key =
        places * this.stageKeySpan +
        ((choice.start * (this.p.ops.length + 1) + choice.end) * nd + s) * (this.maxCount + 1) +
        choice.count;
    } else {
      key = `${choice.start}:${choice.end}:${s}:${choice.count}`;
      for (const id of ext) key += `,${where.get(id) ?? -1}`;
    }
    let ev = this.cache.get(key);
    if (!ev) {
      this.where = where;
      const rangeKey = choice.start * 4096 + choice.end;
      const ops = this.p.ops.slice(choice.start, choice.end);
      let shape = this.shapes.get(rangeKey);
      if (!shape) this.shapes.set(rangeKey, (shape = stageShape(this.ctx, ops)));
      this.cache.set(key, (ev = evalStage(this.ctx, ops, dev, choice.count, shape)));
    }
    if (!ev.ok) return { why: ev.why! };
    return {
      choice,
      s,
      ev,
      timeMs: ev.computeMs + ev.inMs + ev.outMs,
      periodMs: Math.max(ev.computeMs, ev.inMs, ev.outMs),
      rootMs: rootComplexMs(this.sys, ev.rootBytes),
      // Instances draw active power while their kernels run and their waiting power the rest of the time (figures.ts adds that part); DMA is not charged above waiting.
      activeJ: (ev.computeMs / 1e3) * choice.count * (dev.activePowerW - dev.waitingPowerW),
    };
  }

  makeStage(pick: StagePick, first: number): Stage {
    const dev = this.sys.devices[pick.s]!;
    const { choice, ev } = pick;
    const ops: string[] = [];
    const variants: Record<string, string> = {};
    for (let i = choice.start; i < choice.end; i++) {
      const op = this.p.ops[i]!;
      ops.push(op.id);
      variants[op.id] = this.opTime(op, dev, choice.count).variant;
    }
    return {
      ops,
      device: dev.id,
      kind: dev.kind,
      count: choice.count,
      devices: Array.from({ length: choice.count }, (_, j) => instanceName(dev.id, first + j)),
      variants,
      computeMs: ev.computeMs,
      syncMs: ev.syncMs,
      rootBytes: ev.rootBytes,
      transferMs: ev.inMs + ev.outMs,
      timeMs: pick.timeMs,
      periodMs: pick.periodMs,
    };
  }

  /** Devices a stage may use next: allowed kinds with free instances. */
  options(used: readonly number[]): { s: number; dev: DeviceSpec; free: number }[] {
    return this.sys.devices
      .map((dev, s) => ({ s, dev, free: usableInstances(dev, this.opts) - used[s]! }))
      .filter((o) => o.free > 0);
  }

  finish(l: Label, used: readonly number[]): Mapping {
    const picks: Label[] = [];
    for (let c: Label | undefined = l; c?.pick; c = c.parent) picks.unshift(c);
    const taken = this.sys.devices.map(() => 0);
    const stages = picks.map((c) => {
      const st = this.makeStage(c.pick!, taken[c.pick!.s]!);
      taken[c.pick!.s]! += c.pick!.choice.count;
      return st;
    });
    return { stages, ...figures(this.sys, used, l, this.opts), powerW: peakPowerW(this.sys, used) };
  }
}

function dominates(a: Label, b: Label): boolean {
  return (
    a.stagePeriodMs <= b.stagePeriodMs && a.rootMs <= b.rootMs && a.latencyMs <= b.latencyMs && a.activeJ <= b.activeJ
  );
}

function insert(front: Label[], l: Label): void {
  if (front.some((f) => dominates(f, l))) return;
  for (let i = front.length - 1; i >= 0; i--) if (dominates(l, front[i]!)) front.splice(i, 1);
  front.push(l);
}

export interface PlanOutcome {
  pareto: Mapping[];
  /** When nothing is feasible: the reasons met, most frequent first. */
  infeasible: string[];
  /** Lowest peak power of any mapping that met every other constraint (for the power-cap message). */
  minPowerW?: number;
  states: number;
}

export function planPareto(
  sys: SystemSpec,
  p: PlanProblem,
  opts: PlanOptions,
  /** The structure of the problems of p's spec, shared (planStructure); taken from p when absent. */
  structure?: PlanStructure,
): PlanOutcome {
  const pl = new Planner(sys, p, opts, structure);
  const n = p.ops.length;
  const why = new Map<string, number>();
  const note = (w: string): void => void why.set(w, (why.get(w) ?? 0) + 1);
  let minPowerW: number | undefined;
  // states[i]: key -> { used, where, labels }
  type State = { used: number[]; where: Map<string, number>; labels: Label[] };
  const states: Map<number | string, State>[] = Array.from({ length: n + 1 }, () => new Map());
  // A state's key after op j - 1: the instances used per device, then where each value live at j is (or nowhere),
  // the live values in a fixed order. A number in mixed radix where that fits a double's integers (the maps hash a
  // number at once, where a string built per transition had to be flattened and hashed: a tenth of a re-plan),
  // else a string.
  const nd = sys.devices.length;
  const liveIds = pl.live.map((set) => [...set]);
  const usedSpan = sys.devices.reduce((a, d) => a * (d.count + 1), 1);
  const numericAt = liveIds.map((ids) => usedSpan * Math.pow(nd + 1, ids.length) <= 2 ** 52);
  const keyOf = (j: number, used: number[], where: Map<string, number>): number | string => {
    if (numericAt[j]) {
      let k = 0;
      for (let d = 0; d < nd; d++) k = k * (sys.devices[d]!.count + 1) + used[d]!;
      for (const id of liveIds[j]!) {
        const at = where.get(id);
        k = k * (nd + 1) + (at === undefined ? 0 : at + 1);
      }
      return k;
    }
    let k = '';
    for (const u of used) k += `${u},`;
    k += '|';
    for (const id of liveIds[j]!) {
      const at = where.get(id);
      k += at === undefined ? '.,' : `${at},`;
    }
    return k;
  };
  const start: State = {
    used: sys.devices.map(() => 0),
    where: new Map(),
    labels: [startLabel()],
  };
  states[0]!.set(keyOf(0, start.used, start.where), start);
  let count = 0;
  for (let i = 0; i < n; i++) {
    for (const st of states[i]!.values()) {
      count++;
      const options = pl.options(st.used);
      for (let j = i + 1; j <= n; j++) {
        if (!pl.cuts[j]) continue;
        for (const { s, dev, free } of options) {
          for (let k = 1; k <= free; k++) {
            const choice: StageChoice = { start: i, end: j, device: dev.id, count: k };
            const r = pl.stageFor(choice, s, st.where);
            if ('why' in r) {
              note(r.why);
              continue;
            }
            const used = st.used.slice();
            used[s]! += k;
            const power = peakPowerW(sys, used);
            const where = new Map<string, number>();
            for (const id of pl.live[j]!) {
              const at = st.where.get(id) ?? (pl.index.get(id)! >= i && pl.index.get(id)! < j ? s : undefined);
              if (at !== undefined) where.set(id, at);
            }
            const key = keyOf(j, used, where);
            let next = states[j]!.get(key);
            for (const l of st.labels) {
              const lab = extend(l, r);
              if (opts.latencyBoundMs !== undefined && lab.latencyMs > opts.latencyBoundMs) {
                note(`latency ${lab.latencyMs.toFixed(3)} ms exceeds the bound ${opts.latencyBoundMs} ms`);
                continue;
              }
              if (opts.powerCapW !== undefined && power > opts.powerCapW) {
                if (j === n) minPowerW = Math.min(minPowerW ?? Infinity, power);
                note(`peak power ${power.toFixed(0)} W exceeds the cap ${opts.powerCapW} W`);
                continue;
              }
              if (!next) states[j]!.set(key, (next = { used, where, labels: [] }));
              insert(next.labels, lab);
            }
          }
        }
      }
    }
  }
  // The front is taken on the final labels' figures, and only its mappings are built (their stages and instance
  // names): a runtime re-plans an input outside its guards' ranges, and building every final label's mapping was a
  // tenth of that.
  const finals: (FrontFigures & { l: Label; used: number[] })[] = [];
  for (const st of states[n]!.values())
    for (const l of st.labels) {
      const f = figures(sys, st.used, l, opts);
      finals.push({ perInputMs: f.perInputMs, latencyMs: f.latencyMs, energyJ: f.energyJ, l, used: st.used });
    }
  const pareto = paretoFilter(finals).map((x) => pl.finish(x.l, x.used));
  sortByObjective(pareto, opts.objective);
  const infeasible = [...why].sort((a, b) => b[1] - a[1]).map(([w]) => w);
  return minPowerW === undefined
    ? { pareto, infeasible, states: count }
    : { pareto, infeasible, minPowerW, states: count };
}

/** The figures the Pareto front is taken over. */
export type FrontFigures = Pick<Figures, 'perInputMs' | 'latencyMs' | 'energyJ'>;

/**
 * Dominance over the three objectives' figures: time per input over the
 * stream, latency, energy in the planned scope. Each objective's optimum is
 * on this front.
 */
export function mappingDominates(a: FrontFigures, b: FrontFigures): boolean {
  return (
    a.perInputMs <= b.perInputMs &&
    a.latencyMs <= b.latencyMs &&
    a.energyJ <= b.energyJ &&
    (a.perInputMs < b.perInputMs || a.latencyMs < b.latencyMs || a.energyJ < b.energyJ)
  );
}

/** Non-dominated mappings over (time per input, latency, energy), one per distinct figure triple. */
export function paretoFilter<M extends FrontFigures>(ms: readonly M[]): M[] {
  const out: M[] = [];
  const seen = new Set<string>();
  for (const m of ms) {
    if (ms.some((o) => mappingDominates(o, m))) continue;
    const key = `${m.perInputMs}|${m.latencyMs}|${m.energyJ}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(m);
  }
  return out;
}

/** The figure an objective minimises: time per input over the stream, energy in the planned scope, or latency. */
export function objectiveValue(m: FrontFigures, o: Objective): number {
  switch (o) {
    case 'throughput':
      return m.perInputMs;
    case 'energy':
      return m.energyJ;
    case 'latency':
      return m.latencyMs;
    default: {
      const never: never = o;
      throw new Error(`unknown objective ${String(never)}`);
    }
  }
}

export function sortByObjective(ms: Mapping[], o: Objective): void {
  const order: Objective[] = [o, ...(['throughput', 'energy', 'latency'] as Objective[]).filter((x) => x !== o)];
  ms.sort((a, b) => {
    for (const x of order) {
      const d = objectiveValue(a, x) - objectiveValue(b, x);
      if (d !== 0) return d;
    }
    return 0;
  });
}

/** Scores a fixed list of stage choices on a problem, its figures counted as `acct` says (the static baseline keeps one list across inputs). */
export function evaluateChoices(
  sys: SystemSpec,
  p: PlanProblem,
  choices: readonly StageChoice[],
  acct: Accounting,
): Mapping | undefined {
  return choiceEvaluator(sys, p, acct)(choices);
}

/** A mapping's figures without its stages: what scoring a partition reads (scoreMapping, objectiveValue). */
export interface ChoiceFigures extends Figures {
  /** Peak power of the devices as used (active), the rest idle, W. */
  powerW: number;
}

/**
 * Many lists of stage choices priced on one problem: one planner's set-up (live values, writers) and its stage
 * and op-time caches serve them all, so the partitions a runtime weighs for an input share what their stages have
 * in common. `figures` gives what a score reads and builds no Stage (a runtime prices every open partition of a
 * guard leaf on each new pattern and runs one: building each candidate's stages and instance names was a fifth of
 * that pricing, docs/PERFORMANCE.md); `mapping` gives the whole mapping.
 */
export interface ChoicePricer {
  figures(choices: readonly StageChoice[]): ChoiceFigures | undefined;
  mapping(choices: readonly StageChoice[]): Mapping | undefined;
}

export function choicePricer(
  sys: SystemSpec,
  p: PlanProblem,
  acct: Accounting,
  /** The structure of the problems of p's spec, shared (planStructure); taken from p when absent. */
  structure?: PlanStructure,
): ChoicePricer {
  const pl = new Planner(sys, p, { energyScope: acct.energyScope, streamLength: acct.streamLength }, structure);
  const nd = sys.devices.length;
  const deviceAt = new Map(sys.devices.map((d, s) => [d.id, s]));
  // Where the walk's earlier values live: one map for every walk (stageFor reads it during its call only).
  const where = new Map<string, number>();
  // The label of the stages in order and the instances used; undefined when infeasible.
  const walk = (choices: readonly StageChoice[]): { used: number[]; l: Label } | undefined => {
    const used = new Array<number>(nd).fill(0);
    where.clear();
    let l: Label = startLabel();
    for (const c of choices) {
      const s = deviceAt.get(c.device);
      if (s === undefined || used[s]! + c.count > sys.devices[s]!.count) return undefined;
      const r = pl.stageFor(c, s, where);
      if ('why' in r) return undefined;
      used[s]! += c.count;
      for (let i = c.start; i < c.end; i++) where.set(p.ops[i]!.id, s);
      l = extend(l, r);
    }
    return { used, l };
  };
  return {
    figures: (choices) => {
      const w = walk(choices);
      if (!w) return undefined;
      const f = figures(sys, w.used, w.l, pl.opts) as ChoiceFigures;
      f.powerW = peakPowerW(sys, w.used);
      return f;
    },
    mapping: (choices) => {
      const w = walk(choices);
      return w && pl.finish(w.l, w.used);
    },
  };
}

/** evaluateChoices for many lists of stage choices on one problem (choicePricer's whole mappings). */
export function choiceEvaluator(
  sys: SystemSpec,
  p: PlanProblem,
  acct: Accounting,
): (choices: readonly StageChoice[]) => Mapping | undefined {
  return choicePricer(sys, p, acct).mapping;
}

/** The stage choices behind a mapping. */
export function choicesOf(p: PlanProblem, m: Mapping): StageChoice[] {
  const index = new Map(p.ops.map((o, i) => [o.id, i]));
  return m.stages.map((s) => ({
    start: index.get(s.ops[0]!)!,
    end: index.get(s.ops[s.ops.length - 1]!)! + 1,
    device: s.device,
    count: s.count,
  }));
}

export type { PlanOp };
