/**
 * The guarded runtime a generated `<prog>.runtime.ts` creates: per input it
 * computes the features, evaluates the generated guards, re-plans with the
 * DP when the input is outside the guards' ranges, asks the switching policy
 * whether to switch, runs the partition on the backends and keeps the clock
 * (measured for real backends' wall time, the cost model's for the
 * timeline), logging every decision as structured JSON.
 */
import { placeStages } from '../backends/trace.js';
import type { Backend } from '../backends/types.js';
import { InputError } from '../errors.js';
import { choiceKey, partitionLabel, planOptions, scoreChoices } from '../guards/build.js';
import { featureRecord } from '../guards/features.js';
import { outOfRange } from '../guards/select.js';
import { walkTree } from '../guards/tree.js';
import { bindProblem } from '../plan/bind.js';
import { choicesOf, evaluateChoices, idlePowerW, planPareto, type StageChoice } from '../plan/dp.js';
import type { Mapping, PlanProblem } from '../plan/types.js';
import { stageInstances, switchCost, fpgaNeeds } from '../policy/cost.js';
import { SwitchPolicy } from '../policy/policy.js';
import type { DeviceKind } from '../system/types.js';
import type { Tensor } from '../tensor.js';
import { bindInputs, type BoundInputs } from './inputs.js';
import type { DecisionLogEntry, Explanation, PartitionRef, Predicted, RunResult, RuntimeConfig, RuntimeInputs, RuntimeOptions, RuntimeStats } from './types.js';

interface Part {
  id: number;
  key: string;
  label: string;
  choices: StageChoice[];
  fallbacks: number[];
  replanned: boolean;
}

export interface GuardedRuntime {
  run(inputs: RuntimeInputs, name?: string): RunResult;
  /** Runs a sequence pipelined: on the clock, successive inputs overlap in different stages. */
  stream(inputs: Iterable<RuntimeInputs | { inputs: RuntimeInputs; name: string }>): { results: RunResult[]; makespanMs: number };
  explain(inputs: RuntimeInputs): Explanation;
  stats(): RuntimeStats;
  close(): void;
}

const ref = (p: Part): PartitionRef => ({ id: p.id, label: p.label, replanned: p.replanned });
const predicted = (m: Mapping | undefined): Predicted | undefined => (m ? { periodMs: m.periodMs, latencyMs: m.latencyMs, energyJ: m.energyJ } : undefined);

export function createGuardedRuntime(cfg: RuntimeConfig, o: RuntimeOptions): GuardedRuntime {
  const sys = o.system;
  const objective = cfg.guards.objective;
  const popts = planOptions(sys, objective);
  const units = objective === 'energy' ? 'J' : 'ms';
  const costInUnits = (ms: number): number => (objective === 'energy' ? (ms / 1e3) * idlePowerW(sys) : ms);
  const parts: Part[] = cfg.guards.partitions.map((p) => ({ id: p.id, key: choiceKey(p.choices), label: p.label, choices: p.choices, fallbacks: p.fallbacks, replanned: false }));
  const policy = new SwitchPolicy(o.policy);
  const log: DecisionLogEntry[] = [];
  let current: Part | undefined;
  let seq = 0;
  let lastTensors = new Map<string, Tensor>();
  const loaded = new Map<string, Set<string>>();
  const free = new Map<string, number>();
  let lastEnd = 0;
  const counts = { switches: 0, replans: 0, fallbacks: 0, wallMs: 0, switchCostMs: 0 };
  const byPartition: Record<string, number> = {};

  const kindOf = (device: string): DeviceKind => {
    const d = sys.devices.find((x) => x.id === device);
    if (!d) throw new InputError('DY3041', sys.name, undefined, `partition uses device '${device}', which system ${sys.name} does not have`);
    return d.kind;
  };
  const backendFor = (kind: DeviceKind): Backend | undefined => o.backends[kind];
  const runnable = (p: Part): boolean => p.choices.every((c) => sys.devices.some((d) => d.id === c.device) && backendFor(kindOf(c.device)) !== undefined);

  const replan = (problem: PlanProblem): { part: Part; ms: number } => {
    const t0 = performance.now();
    const best = planPareto(sys, problem, popts).pareto[0];
    const ms = performance.now() - t0;
    if (!best) throw new InputError('DY3030', sys.name, undefined, `no mapping of kernel ${cfg.kernel} is feasible on ${sys.name} for this input`);
    const choices = choicesOf(problem, best);
    const key = choiceKey(choices);
    const known = parts.find((p) => p.key === key);
    if (known) return { part: known, ms };
    const part: Part = { id: parts.length, key, label: partitionLabel(cfg.spec, choices), choices, fallbacks: [], replanned: true };
    parts.push(part);
    return { part, ms };
  };

  interface Choice {
    b: BoundInputs;
    problem: PlanProblem;
    features: Record<string, number>;
    path: string[];
    oor: string[];
    selected: Part;
    replanInfo?: { reason: string; planMs: number };
    fallback?: string;
  }

  const choose = (inputs: RuntimeInputs): Choice => {
    const b = bindInputs(cfg.kernel, cfg.params, inputs);
    const features = featureRecord(b.binding);
    const leaf = cfg.guard(features);
    const walked = walkTree(cfg.guards.tree, (k) => features[k]);
    if (walked.leaf !== leaf) throw new Error(`generated guards of ${cfg.kernel} disagree with the guard tree (${leaf} vs ${walked.leaf}): regenerate the runtime`);
    const oor = outOfRange(cfg.guards.ranges, (k) => features[k]);
    const problem = bindProblem(cfg.spec, b.binding);
    let selected = parts[leaf]!;
    let replanInfo: Choice['replanInfo'];
    if (oor.length > 0) {
      const r = replan(problem);
      selected = r.part;
      replanInfo = { reason: `outside the guards' ranges: ${oor.join('; ')}`, planMs: r.ms };
    }
    let fallback: string | undefined;
    if (!runnable(selected) || !Number.isFinite(scoreChoices(sys, problem, selected.choices, popts))) {
      const why = runnable(selected) ? 'cannot run this input (memory, resources or constraints)' : 'needs a device kind no backend serves';
      const alt = selected.fallbacks.map((i) => parts[i]!).find((p) => runnable(p) && Number.isFinite(scoreChoices(sys, problem, p.choices, popts)));
      if (alt) {
        fallback = `partition ${selected.id} ${why}; fallback ${alt.id}`;
        selected = alt;
      }
    }
    return { b, problem, features, path: walked.path, oor, selected, ...(replanInfo ? { replanInfo } : {}), ...(fallback ? { fallback } : {}) };
  };

  const decideFor = (c: Choice, pol: SwitchPolicy) => {
    const resident = new Set([...c.b.tensors].filter(([n, t]) => lastTensors.get(n) === t).map(([n]) => n));
    const curMapping = current ? evaluateChoices(sys, c.problem, current.choices) : undefined;
    const cost = switchCost(sys, c.problem, current ? { choices: current.choices, mapping: curMapping } : undefined, c.selected.choices, resident, loaded);
    pol.observe(c.selected.key);
    if (!current) return { switch: true, reason: 'initial partition', cost, gainPerRun: undefined, expectedRuns: undefined };
    const d = pol.decide(
      { current: scoreChoices(sys, c.problem, current.choices, popts), candidate: scoreChoices(sys, c.problem, c.selected.choices, popts), cost: costInUnits(cost.totalMs), differs: c.selected.key !== current.key },
      units,
    );
    // Out of range the pick is the DP's, not the guards'.
    return { ...d, reason: c.replanInfo ? d.reason.replace(/^the guards pick/, 'the re-plan picks').replace(/^the guards\u2019 pick/, 'the re-plan\u2019s pick') : d.reason, cost };
  };

  const execute = (p: Part, c: Choice): { outputs: Map<string, Tensor>; wallMs: number } => {
    const used = [...new Set(p.choices.map((s) => kindOf(s.device)))];
    const backs = used.map((k) => {
      const be = backendFor(k);
      if (!be) throw new InputError('DY3041', sys.name, undefined, `partition ${p.id} (${p.label}) runs stages on ${k}, but no backend serves ${k}: pass backends.${k}`);
      return be;
    });
    // Native backends compute on their devices (and say so where they cannot); otherwise one CPU computation gives the numbers.
    const native = backs.find((be) => be.name === 'cuda' || be.name === 'xrt');
    const numbers = native ?? backs.find((be) => be.name === 'wasm') ?? backs[0]!;
    const t0 = performance.now();
    const outputs = numbers.compute({ tensors: c.b.tensors, scalars: c.b.scalars });
    return { outputs, wallMs: performance.now() - t0 };
  };

  /** Places the input's stages on the clock; pipelined inputs start as soon as their first stage's devices are free. */
  const clock = (p: Part, m: Mapping, switched: boolean, costMs: number, pipelined: boolean, name: string): { start: number; end: number } => {
    const tr = o.trace;
    const inst = stageInstances(p.choices);
    if (switched) {
      // The old pipeline drains, then data moves and bitstreams load.
      const at = lastEnd;
      tr?.instant('runtime', `switch to partition ${p.id}`, at, { label: p.label });
      tr?.slice('runtime', 'compute', `switch cost`, at, costMs);
      for (const k of [...free.keys()]) free.set(k, at + costMs);
      for (const i of inst.flat()) free.set(i, at + costMs);
    }
    const t = placeStages(tr, free, m.stages, pipelined ? 0 : lastEnd, name, { partition: p.id });
    lastEnd = Math.max(lastEnd, t.end);
    return t;
  };

  const runOne = (inputs: RuntimeInputs, name: string | undefined, pipelined: boolean): RunResult => {
    const c = choose(inputs);
    const d = decideFor(c, policy);
    const previous = current;
    const switched = d.switch;
    const running = switched ? c.selected : current!;
    policy.ran(switched && previous !== undefined);
    if (switched) {
      for (const [dev, designs] of fpgaNeeds(sys, c.problem, running.choices)) loaded.set(dev, designs);
      if (previous) counts.switches++;
      counts.switchCostMs += previous ? d.cost.totalMs : 0;
      current = running;
    }
    if (c.replanInfo) counts.replans++;
    if (c.fallback) counts.fallbacks++;
    const m = evaluateChoices(sys, c.problem, running.choices);
    if (!m) throw new InputError('DY3030', sys.name, undefined, `partition ${running.id} (${running.label}) cannot run this input and no fallback can`);
    const { outputs, wallMs } = execute(running, c);
    counts.wallMs += wallMs;
    const label = name ?? `input ${seq + 1}`;
    const t = clock(running, m, switched && previous !== undefined, d.cost.totalMs - d.cost.drainMs, pipelined, label);
    lastTensors = c.b.tensors;
    byPartition[running.label] = (byPartition[running.label] ?? 0) + 1;
    const entry: DecisionLogEntry = {
      seq: ++seq,
      ...(name !== undefined ? { input: name } : {}),
      event: previous === undefined ? 'initial' : switched ? 'switch' : 'stay',
      selected: ref(c.selected),
      running: ref(running),
      ...(previous ? { previous: ref(previous) } : {}),
      switched: switched && previous !== undefined,
      reason: d.reason,
      path: c.path,
      inRange: c.oor.length === 0,
      outOfRange: c.oor,
      ...(c.replanInfo ? { replan: c.replanInfo } : {}),
      ...(c.fallback ? { fallback: c.fallback } : {}),
      ...(d.gainPerRun !== undefined ? { gainPerRun: d.gainPerRun, expectedRuns: d.expectedRuns! } : {}),
      units,
      ...(previous ? { switchCost: d.cost } : {}),
      predicted: predicted(m)!,
    };
    log.push(entry);
    o.log?.(entry);
    return { outputs, partition: ref(running), switched: entry.switched, reason: d.reason, path: c.path, predicted: entry.predicted, wallMs, startMs: t.start, endMs: t.end, log: entry };
  };

  return {
    run: (inputs, name) => runOne(inputs, name, false),
    stream(seqIn) {
      const results: RunResult[] = [];
      const t0 = lastEnd;
      for (const x of seqIn) {
        const named = typeof (x as { name?: unknown }).name === 'string' && (x as { inputs?: unknown }).inputs !== undefined;
        results.push(named ? runOne((x as { inputs: RuntimeInputs }).inputs, (x as { name: string }).name, true) : runOne(x as RuntimeInputs, undefined, true));
      }
      return { results, makespanMs: lastEnd - t0 };
    },
    explain(inputs) {
      const c = choose(inputs);
      const pol = policy.clone();
      const d = decideFor(c, pol);
      const sel = evaluateChoices(sys, c.problem, c.selected.choices);
      const run = current ? evaluateChoices(sys, c.problem, current.choices) : undefined;
      return {
        features: c.features,
        path: c.path,
        inRange: c.oor.length === 0,
        outOfRange: c.oor,
        selected: { ...ref(c.selected), choices: c.selected.choices },
        ...(current ? { running: ref(current) } : {}),
        predicted: { selected: predicted(sel), running: predicted(run) },
        wouldSwitch: d.switch,
        reason: [c.replanInfo?.reason, c.fallback, d.reason].filter((x) => x !== undefined).join('; '),
      };
    },
    stats: () => ({ runs: seq, switches: counts.switches, replans: counts.replans, fallbacks: counts.fallbacks, byPartition: { ...byPartition }, clockMs: lastEnd, wallMs: counts.wallMs, switchCostMs: counts.switchCostMs, log: [...log] }),
    close() {
      for (const be of new Set(Object.values(o.backends))) be?.close();
    },
  };
}

