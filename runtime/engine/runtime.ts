/**
 * The guarded runtime a generated `<prog>.runtime.ts` creates. Per input:
 * choose (features, generated guards, re-plan out of range, fallbacks;
 * ./choose.ts), decide (switch or stay; ./decide.ts), execute (the
 * partition's stages on the backends, for real; ./execute.ts and
 * runtime/exec) and clock (the cost model's timeline beside the measured
 * one; ./clock.ts), logging every decision as JSON. `stream` pipelines:
 * successive inputs run in different stages at the same time, a bounded
 * number in flight (one per stage), outputs in input order; a switch drains
 * the pipeline first. The runtime has guards for every objective over one
 * partition table; `setObjective` changes which guards choose (and in which
 * units the policy weighs a switch) from the next input on.
 */
import { InputError, valueKind } from '../errors.js';
import { KernelEngine, Slot, type StagePlan, type StageRun } from '../exec/index.js';
import { featureRecord } from '../guards/features.js';
import type { Mapping, Objective } from '../plan/types.js';
import { stageInstances } from '../policy/cost.js';
import { SwitchPolicy } from '../policy/policy.js';
import type { Tensor } from '../tensor.js';
import { historyRecords } from '../history/record.js';
import { cpuBackendOf, systemForCpuBackend } from '../system/cpu-backend.js';
import { instanceName } from '../system/types.js';
import { Chooser, type Choice, type Part } from './choose.js';
import { ModelClock } from './clock.js';
import { Decider, type Decision } from './decide.js';
import { outOfMemory, runStage, served, stagePlans } from './execute.js';
import {
  DEFAULT_KEEP_LOG,
  type DecisionLogEntry,
  type Explanation,
  type PartitionRef,
  type Predicted,
  type RunResult,
  type RuntimeConfig,
  type RuntimeInputs,
  type RuntimeOptions,
  type RuntimeStats,
  type StreamResult,
} from './types.js';

export interface GuardedRuntime {
  /** Runs one input: its partition's stages one after another on their devices. */
  run(inputs: RuntimeInputs, name?: string): Promise<RunResult>;
  /** Runs a sequence pipelined; results in input order. */
  stream(inputs: StreamSource): Promise<StreamResult>;
  /**
   * The same, yielding each result as soon as it and all before it are done (a failure leaves earlier ones
   * delivered). Inputs are taken from `inputs` one at a time, when the first stage is free for the next: a source
   * that never ends (graphs arriving over time) streams with at most one input per stage held, and leaving the
   * loop early closes the source.
   */
  each(inputs: StreamSource): AsyncGenerator<RunResult>;
  explain(inputs: RuntimeInputs): Explanation;
  /**
   * Says that these tensors' values (a dense tensor's data, a sparse input's
   * values) were rewritten in place, in the arrays the runtime was given: the
   * next input that passes one of them copies its values afresh to the
   * devices that read them, and nothing else is redone. A tensor object
   * stands for its values, so without this call (or a new object, which may
   * wrap the same arrays: `{ ...x }`) values rewritten under the same object
   * are not seen. A sparse input's pattern stays as it was by contract: a
   * rewritten pattern comes in a new tensor object. Inputs already admitted
   * (in flight in a stream) keep the values they were admitted with. Throws
   * a TypeError for an argument that is not a tensor object.
   */
  updated(...tensors: Tensor[]): void;
  /** The objective whose guards choose the next input (initially the config's). */
  readonly objective: Objective;
  /**
   * From the next input on (the next one admitted, in a stream), the guards
   * of `o` choose the partition, re-plans out of range plan for `o`, and the
   * policy weighs a switch in `o`'s units; its state (streaks, dwell) carries
   * over. A pick that is the running partition costs nothing. Throws a
   * RangeError for an objective without guards.
   */
  setObjective(o: Objective): void;
  stats(): RuntimeStats;
  /** Frees the runtime's device memory (the backends stay open: close them with closeBackends). */
  close(): void;
}

export type StreamItem = RuntimeInputs | { inputs: RuntimeInputs; name: string };
/** What `stream` and `each` read inputs from: any iterable, or an async one (inputs that arrive over time). */
export type StreamSource = Iterable<StreamItem> | AsyncIterable<StreamItem>;

const ref = (p: Part): PartitionRef => ({ id: p.id, label: p.label, replanned: p.replanned });
const predicted = (m: Mapping | undefined): Predicted | undefined =>
  m ? { periodMs: m.periodMs, latencyMs: m.latencyMs, energyJ: m.energyJ } : undefined;
const named = (x: StreamItem): { inputs: RuntimeInputs; name: string | undefined } =>
  typeof x === 'object' &&
  x !== null &&
  typeof (x as { name?: unknown }).name === 'string' &&
  (x as { inputs?: unknown }).inputs !== undefined
    ? (x as { inputs: RuntimeInputs; name: string })
    : { inputs: x as RuntimeInputs, name: undefined };

/** DY3042 for a stream source that is not what each() and stream() take. */
const badSource = (why: string): InputError =>
  new InputError(
    'DY3042',
    'stream source',
    undefined,
    `${why}: each() and stream() take an iterable or async iterable of inputs (or of { inputs, name })`,
  );

/** The source's iterator: an async one where it has one, else a sync one; DY3042 for anything else. */
function iteratorOf(seqIn: StreamSource): {
  source: Iterator<StreamItem> | AsyncIterator<StreamItem>;
  isAsync: boolean;
} {
  if ((typeof seqIn !== 'object' && typeof seqIn !== 'function') || seqIn === null || typeof seqIn === 'string')
    throw badSource(`got ${valueKind(seqIn)}`);
  const isAsync = typeof (seqIn as Partial<AsyncIterable<StreamItem>>)[Symbol.asyncIterator] === 'function';
  if (!isAsync && typeof (seqIn as Partial<Iterable<StreamItem>>)[Symbol.iterator] !== 'function')
    throw badSource('got an object with neither [Symbol.asyncIterator] nor [Symbol.iterator]');
  const source: unknown = isAsync
    ? (seqIn as AsyncIterable<StreamItem>)[Symbol.asyncIterator]()
    : (seqIn as Iterable<StreamItem>)[Symbol.iterator]();
  if (typeof source !== 'object' || source === null || typeof (source as { next?: unknown }).next !== 'function')
    throw badSource(
      `its ${isAsync ? '[Symbol.asyncIterator]' : '[Symbol.iterator]'}() gave ${valueKind(source)}, not an iterator with next()`,
    );
  return { source: source as Iterator<StreamItem> | AsyncIterator<StreamItem>, isAsync };
}

/** An iterator result as the protocol has it; DY3042 naming what the source's next() gave otherwise. */
function checkedResult(got: unknown): IteratorResult<StreamItem> {
  if (typeof got !== 'object' || got === null)
    throw badSource(`its next() gave ${valueKind(got)}, not an iterator result`);
  return got as IteratorResult<StreamItem>;
}

/** An input after choose and decide, before it runs. */
interface Planned {
  seq: number;
  label: string;
  name: string | undefined;
  c: Choice;
  d: Decision;
  /** Measured: choose, decide and the running partition's mapping. */
  decisionMs: number;
  running: Part;
  previous: Part | undefined;
  switched: boolean;
  mapping: Mapping;
  plans: StagePlan[];
  fallback?: string;
  /** Partitions this input already ran out of memory on. */
  tried: Set<number>;
}

/**
 * The backends' code must come from the program the config was generated from: a project recompiled from an edited
 * program (or another program) runs other ops under the same names, and its results would be wrong without a word.
 */
function checkBuiltFrom(cfg: RuntimeConfig, backends: RuntimeOptions['backends']): void {
  for (const b of Object.values(backends)) {
    const from = b?.builtFrom;
    if (!from) continue;
    if (from.program !== cfg.program)
      throw new InputError(
        'DY3044',
        from.where,
        undefined,
        `the ${b.name} backend was built from program '${from.program}', but this runtime runs '${cfg.program}': open the project compiled from ${cfg.program}`,
      );
    if (from.programHash !== cfg.programHash)
      throw new InputError(
        'DY3044',
        from.where,
        undefined,
        `the ${b.name} backend was built from another version of program '${cfg.program}' (hash ${from.programHash.slice(0, 12)}, this runtime's ${cfg.programHash.slice(0, 12)}): use the runtime generated with that project, or recompile and rebuild the project`,
      );
    // A wasm module runs one kernel: another kernel's runtime would fail at its first CPU stage, and only for
    // inputs whose partition has one.
    if (from.kernels && !from.kernels.includes(cfg.kernel))
      throw new InputError(
        'DY3044',
        from.where,
        undefined,
        `the ${b.name} backend runs the module of kernel ${from.kernels.join(', ')} of program '${cfg.program}', but this runtime runs kernel ${cfg.kernel}: open the project for it, openProject(dir, system, { emulate, kernel: '${cfg.kernel}' })`,
      );
  }
}

/**
 * Microtask turns `each` gives an async source's next() to answer before a wave goes on without its input: an async
 * generator yielding a value at hand answers in 2-4 (its own await, the promise's resolution, the then-callback).
 */
const READY_TURNS = 8;

export function createGuardedRuntime(cfg: RuntimeConfig, o: RuntimeOptions): GuardedRuntime {
  if (typeof o !== 'object' || o === null || typeof o.system !== 'object' || typeof o.backends !== 'object')
    throw new TypeError(
      'createGuardedRuntime(config, options): options must hold at least { system, backends }: a system from loadSystemFile, and the backends from openProject(dir, system, { emulate })',
    );
  checkBuiltFrom(cfg, o.backends);
  // The guards' cost model, the thread picks and the model clock price the CPU by the fit of the backend that runs it.
  const cpuBackend = cpuBackendOf(o.backends.cpu?.name);
  const sys = cpuBackend ? systemForCpuBackend(o.system, cpuBackend).system : o.system;
  const engine = new KernelEngine(cfg.manifest, o.backends, sys);
  engine.timeOps = o.history !== undefined;
  // A re-plan keeps to the instances some backend serves: of each device, those numbered below the first unserved
  // one (a backend serves a prefix of them: exec/engine.ts), as the planner numbers the instances it uses from 0.
  const servedInstances = Object.fromEntries(
    sys.devices.map((d) => {
      let n = 0;
      while (n < d.count && engine.places.has(instanceName(d.id, n))) n++;
      return [d.id, n];
    }),
  );
  const chooser = new Chooser(cfg, sys, (p) => served(engine, p), servedInstances);
  const decider = new Decider(sys, (x) => chooser.popts(x), chooser.memo);
  const policy = new SwitchPolicy(o.policy);
  const clock = new ModelClock(o.trace);
  const slots: Slot[] = [];
  const idle: Slot[] = [];
  const keepLog = o.keepLog ?? DEFAULT_KEEP_LOG;
  if (!(Number.isSafeInteger(keepLog) && keepLog >= 0))
    throw new RangeError(`keepLog must be a whole number >= 0, got ${String(o.keepLog)}`);
  // A ring of the latest decisions: `logStart` is the oldest once it is full.
  const log: DecisionLogEntry[] = [];
  let logStart = 0;
  const counts = {
    switches: 0,
    replans: 0,
    fallbacks: 0,
    wallMs: 0,
    switchCostMs: 0,
    decisionsReused: 0,
    decisionMs: 0,
  };
  /** The (instances, op) pairs this runtime has recorded to the history: an op's first run on them is cold. */
  const historySeen = new Set<string>();
  const byPartition: Record<string, number> = {};
  const byBackend: Record<string, { stages: number; ms: number }> = {};
  const byObjective: Partial<Record<Objective, number>> = {};
  let seq = 0;

  if (o.objective !== undefined) chooser.setObjective(o.objective);

  const slot = (): Slot => idle.pop() ?? (slots.push(new Slot()), slots[slots.length - 1]!);

  /** Choose and decide, in input order (the policy's state moves with each input). */
  const plan = (inputs: RuntimeInputs, name: string | undefined): Planned => {
    const t0 = performance.now();
    const c = chooser.choose(inputs);
    const d = decider.decide(c, policy);
    const previous = decider.current;
    const running = d.switch ? c.selected : previous!;
    policy.ran(d.switch && previous !== undefined);
    if (d.switch) {
      decider.switchTo(running, c);
      if (previous) counts.switches++;
      counts.switchCostMs += previous ? d.cost.totalMs : 0;
    }
    if (c.replanInfo) counts.replans++;
    if (c.fallback) counts.fallbacks++;
    const mapping = chooser.memo.mapping(c.problem, running);
    if (!mapping)
      throw new InputError(
        'DY3030',
        sys.name,
        undefined,
        `partition ${running.id} (${running.label}) cannot run this input and no fallback can`,
      );
    const s = ++seq;
    const decisionMs = performance.now() - t0;
    counts.decisionMs += decisionMs;
    if (!c.fresh) counts.decisionsReused++;
    return {
      seq: s,
      label: name ?? `input ${s}`,
      name,
      c,
      d,
      decisionMs,
      running,
      previous,
      switched: d.switch && previous !== undefined,
      mapping,
      plans: stagePlans(sys, cfg.spec, running, mapping, c.problem),
      tried: new Set([running.id]),
    };
  };

  /** Moves the input to a fallback partition after a device ran out of memory on its own. */
  const fallBack = (p: Planned, why: string): void => {
    const alt = chooser.fallbackOf(p.running, p.c.problem, p.tried);
    const m = alt ? chooser.memo.mapping(p.c.problem, alt) : undefined;
    if (!alt || !m)
      throw new InputError(
        'DY3046',
        p.label,
        undefined,
        `${why}; no fallback of partition ${p.running.id} (${p.running.label}) can run it`,
      );
    p.tried.add(alt.id);
    p.fallback = `partition ${p.running.id}: ${why}; fallback ${alt.id}`;
    counts.fallbacks++;
    decider.switchTo(alt, p.c);
    engine.retain(new Set(stageInstances(alt.choices).flat()), slots);
    p.running = alt;
    p.mapping = m;
    p.plans = stagePlans(sys, cfg.spec, alt, m, p.c.problem);
  };

  /** Runs every stage of one input in turn (falling back on out-of-memory). */
  const execute = async (p: Planned, s: Slot): Promise<{ outputs: Map<string, Tensor>; runs: StageRun[] }> => {
    for (;;) {
      const runs: StageRun[] = [];
      try {
        for (let i = 0; i < p.plans.length; i++) runs.push(await runStage(engine, s, p.plans, i, p.label, p.running));
        return { outputs: await engine.collect(s), runs };
      } catch (e) {
        if (!outOfMemory(e)) throw e;
        fallBack(p, `${e.device} ran out of memory (${e.cause.text})`);
      }
    }
  };

  const finish = (
    p: Planned,
    outputs: Map<string, Tensor>,
    runs: StageRun[],
    wallMs: number,
    pipelined: boolean,
  ): RunResult => {
    const t = clock.place(p.running, p.mapping, p.switched, p.d.cost.totalMs - p.d.cost.drainMs, pipelined, p.label);
    clock.measured(p.label, runs);
    decider.lastTensors = p.c.b.tensors;
    byPartition[p.running.label] = (byPartition[p.running.label] ?? 0) + 1;
    byObjective[p.c.objective] = (byObjective[p.c.objective] ?? 0) + 1;
    for (const r of runs) {
      const b = (byBackend[r.backend] ??= { stages: 0, ms: 0 });
      b.stages++;
      b.ms += r.ms;
    }
    counts.wallMs += wallMs;
    o.history?.append(historyRecords(sys, cfg.kernel, p.c.problem, runs, historySeen));
    const fallback = [p.c.fallback, p.fallback].filter((x) => x !== undefined).join('; ');
    const entry: DecisionLogEntry = {
      seq: p.seq,
      objective: p.c.objective,
      ...(p.name !== undefined ? { input: p.name } : {}),
      event: p.previous === undefined ? 'initial' : p.switched ? 'switch' : 'stay',
      selected: ref(p.c.selected),
      running: ref(p.running),
      ...(p.previous ? { previous: ref(p.previous) } : {}),
      switched: p.switched,
      reason: p.d.reason,
      path: p.c.path,
      inRange: p.c.oor.length === 0,
      outOfRange: p.c.oor,
      ...(p.c.replanInfo ? { replan: p.c.replanInfo } : {}),
      ...(fallback ? { fallback } : {}),
      ...(p.d.gainPerRun !== undefined ? { gainPerRun: p.d.gainPerRun, expectedRuns: p.d.expectedRuns! } : {}),
      units: Decider.unitsOf(p.c.objective),
      ...(p.previous ? { switchCost: p.d.cost } : {}),
      decisionMs: p.decisionMs,
      decisionReused: !p.c.fresh,
      predicted: predicted(p.mapping)!,
      stages: runs.map((r) => ({
        ops: r.ops,
        devices: r.devices,
        backend: r.backend,
        ms: r.ms,
        bytesIn: r.bytesIn,
        bytesOut: r.bytesOut,
      })),
    };
    if (log.length < keepLog) log.push(entry);
    else if (keepLog > 0) {
      log[logStart] = entry;
      logStart = (logStart + 1) % keepLog;
    }
    o.log?.(entry);
    return {
      outputs,
      partition: ref(p.running),
      switched: p.switched,
      reason: p.d.reason,
      path: p.c.path,
      predicted: entry.predicted,
      wallMs,
      stages: runs,
      mapping: p.mapping,
      startMs: t.start,
      endMs: t.end,
      log: entry,
    };
  };

  async function* each(seqIn: StreamSource): AsyncGenerator<RunResult> {
    const { source, isAsync } = iteratorOf(seqIn);
    let ended = false;
    let failed = false;
    /**
     * An async source's next() in progress: the inputs in flight go on through their stages meanwhile, so a source
     * that is slow (or waits for the next graph indefinitely) holds back no input already admitted.
     */
    let pulling: Promise<void> | undefined;
    let pulled: { got: IteratorResult<StreamItem> } | { error: unknown } | undefined;
    interface Flight {
      p: Planned;
      s: Slot;
      stage: number;
      runs: StageRun[];
      t0: number;
    }
    const flights: Flight[] = [];
    let pending: Planned | undefined;
    /**
     * Runs every input in flight to its end, one after another, and delivers each (oldest first). Each leaves
     * `flights` only when its slot is given back, so a caller that stops reading here leaves the rest to the
     * finally below.
     */
    async function* drain(): AsyncGenerator<RunResult> {
      while (flights.length > 0) {
        const f = flights[0]!;
        while (f.stage < f.p.plans.length)
          f.runs.push(await runStage(engine, f.s, f.p.plans, f.stage++, f.p.label, f.p.running));
        const outputs = await engine.collect(f.s);
        flights.shift();
        engine.end(f.s);
        idle.push(f.s);
        yield finish(f.p, outputs, f.runs, engine.now() - f.t0, true);
      }
    }
    /** The source's next item, taken without waiting where inputs are in flight and the source is async: undefined while it has none yet. */
    async function next(): Promise<IteratorResult<StreamItem> | undefined> {
      if (!isAsync) return checkedResult((source as Iterator<StreamItem>).next());
      pulling ??= Promise.resolve((source as AsyncIterator<StreamItem>).next())
        .then(checkedResult)
        .then(
          (got) => void (pulled = { got }),
          (error: unknown) => void (pulled = { error }),
        );
      if (flights.length === 0) await pulling;
      // A source with the next item at hand (an async generator over an array, a queue already filled) answers
      // within a few microtask turns: wait those, so that its input joins this wave's pipeline; a source still
      // waiting after them lets the wave go on without it.
      else for (let turn = 0; turn < READY_TURNS && pulled === undefined; turn++) await undefined;
      const r = pulled;
      if (r === undefined) return undefined;
      pulling = undefined;
      pulled = undefined;
      if ('error' in r) throw r.error;
      return r.got;
    }
    /**
     * Closes a source left early (a break in the caller's loop, an error), as a for-of loop closes it, and as there
     * an error of its own does not replace the one that is leaving. A next() still in progress is not waited for (a
     * source waiting for its next graph would hold the caller).
     */
    async function closeSource(): Promise<void> {
      const closing = (async () => source.return?.())();
      // A next() still unanswered: the source may be waiting for its next graph, which must not hold the caller.
      if (pulling && pulled === undefined) {
        closing.catch(() => undefined);
        return;
      }
      try {
        await closing;
      } catch (e) {
        if (!failed) throw e;
      }
    }
    try {
      while (!ended || pending || flights.length > 0) {
        // Take and admit the next input into stage 0 when it is free; a switch waits for the pipeline to drain.
        if (!flights.some((f) => f.stage === 0)) {
          if (!pending && !ended) {
            let got: IteratorResult<StreamItem> | undefined;
            try {
              got = await next();
            } catch (e) {
              // The source itself failed (and so is done): the inputs admitted before are delivered first.
              ended = true;
              yield* drain();
              throw e;
            }
            if (got?.done) ended = true;
            else if (got)
              try {
                const it = named(got.value);
                pending = plan(it.inputs, it.name);
              } catch (e) {
                // A bad input fails the stream where it stands: the inputs admitted before it are delivered first.
                yield* drain();
                throw e;
              }
          }
          if (pending && (!pending.switched || flights.length === 0)) {
            const s = slot();
            if (pending.switched) engine.retain(new Set(pending.plans.flatMap((x) => x.devices)), slots);
            engine.begin(s, engine.prepare({ tensors: pending.c.b.tensors, scalars: pending.c.b.scalars }));
            flights.push({ p: pending, s, stage: 0, runs: [], t0: engine.now() });
            pending = undefined;
          }
        }
        // One wave: every input in flight runs its current stage, on distinct devices, at the same time.
        engine.concurrent = flights.length > 1;
        const wave = await Promise.allSettled(
          flights.map(async (f) =>
            f.runs.push(await runStage(engine, f.s, f.p.plans, f.stage, f.p.label, f.p.running)),
          ),
        );
        engine.concurrent = false;
        const bad = wave.findIndex((w) => w.status === 'rejected');
        if (bad >= 0) {
          const why = (wave[bad] as PromiseRejectedResult).reason;
          if (!outOfMemory(why)) throw why;
          // Out of memory: drain the others, then run this input alone on a fallback partition.
          const [failed] = flights.splice(bad, 1);
          for (const f of flights) f.stage++;
          yield* drain();
          fallBack(failed!.p, `${why.device} ran out of memory (${why.cause.text})`);
          engine.begin(failed!.s, engine.prepare({ tensors: failed!.p.c.b.tensors, scalars: failed!.p.c.b.scalars }));
          const { outputs, runs } = await execute(failed!.p, failed!.s);
          engine.end(failed!.s);
          idle.push(failed!.s);
          yield finish(failed!.p, outputs, runs, engine.now() - failed!.t0, true);
          continue;
        }
        for (const f of flights) f.stage++;
        while (flights.length > 0 && flights[0]!.stage >= flights[0]!.p.plans.length) {
          const f = flights.shift()!;
          const outputs = await engine.collect(f.s);
          engine.end(f.s);
          idle.push(f.s);
          yield finish(f.p, outputs, f.runs, engine.now() - f.t0, true);
        }
      }
    } catch (e) {
      failed = true;
      throw e;
    } finally {
      engine.concurrent = false;
      for (const f of flights) {
        engine.end(f.s);
        idle.push(f.s);
      }
      if (!ended) await closeSource();
    }
  }

  return {
    async run(inputs, name) {
      const p = plan(inputs, name);
      const s = slot();
      try {
        if (p.switched) engine.retain(new Set(p.plans.flatMap((x) => x.devices)), slots);
        engine.begin(s, engine.prepare({ tensors: p.c.b.tensors, scalars: p.c.b.scalars }));
        const t0 = engine.now();
        const { outputs, runs } = await execute(p, s);
        return finish(p, outputs, runs, engine.now() - t0, false);
      } finally {
        engine.end(s);
        idle.push(s);
      }
    },
    async stream(seqIn) {
      const t0 = engine.now();
      const start = clock.lastEnd;
      const results: RunResult[] = [];
      for await (const r of each(seqIn)) results.push(r);
      return {
        results,
        makespanMs: clock.lastEnd - start,
        wallMs: engine.now() - t0,
        stageSumMs: results.reduce((a, r) => a + r.stages.reduce((b, s) => b + s.ms, 0), 0),
      };
    },
    each,
    explain(inputs) {
      const c = chooser.choose(inputs);
      const d = decider.decide(c, policy.clone());
      const sel = chooser.memo.mapping(c.problem, c.selected);
      const cur = decider.current;
      const run = cur ? chooser.memo.mapping(c.problem, cur) : undefined;
      return {
        objective: c.objective,
        features: featureRecord(c.b.binding),
        path: c.path,
        inRange: c.oor.length === 0,
        outOfRange: c.oor,
        selected: { ...ref(c.selected), choices: c.selected.choices },
        ...(cur ? { running: ref(cur) } : {}),
        predicted: { selected: predicted(sel), running: predicted(run) },
        wouldSwitch: d.switch,
        reason: [c.replanInfo?.reason, c.fallback, d.reason].filter((x) => x !== undefined).join('; '),
      };
    },
    updated(...tensors) {
      for (const t of tensors)
        if (typeof t !== 'object' || t === null)
          throw new TypeError(
            `updated() takes the tensor objects whose values were rewritten in place, got ${t === null ? 'null' : typeof t}`,
          );
      // Bindings, features and choices depend on shapes and the pattern only: the device copies are all that went stale.
      for (const t of tensors) engine.updated(t);
    },
    get objective() {
      return chooser.objective;
    },
    setObjective(x) {
      if (x === chooser.objective) return;
      chooser.setObjective(x);
      o.trace?.instant('runtime', `objective ${x}`, clock.lastEnd);
    },
    stats: () => ({
      runs: seq,
      objective: chooser.objective,
      byObjective: { ...byObjective },
      switches: counts.switches,
      replans: counts.replans,
      fallbacks: counts.fallbacks,
      decisionsReused: counts.decisionsReused,
      decisionMs: counts.decisionMs,
      byPartition: { ...byPartition },
      byBackend: structuredClone(byBackend),
      clockMs: clock.lastEnd,
      wallMs: counts.wallMs,
      switchCostMs: counts.switchCostMs,
      log: [...log.slice(logStart), ...log.slice(0, logStart)],
    }),
    close() {
      // The runtime's device memory; the backends belong to whoever opened them (closeBackends).
      engine.close(slots);
    },
  };
}
