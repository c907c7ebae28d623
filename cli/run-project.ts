/**
 * `dype run FILE.dy --project DIR --partition auto|ID|"<stages>" [--emulate]`:
 * runs a compiled project's partition stage by stage on the backends that
 * own its devices (wasm for the CPU; the project's CUDA and FPGA libraries,
 * or with --emulate their CPU emulation and C simulation) and reports per
 * stage what ran where, for how long, and the bytes it moved.
 *   - auto: the project's guards (plan.json) of the objective (--objective,
 *     default the one the project was compiled for) pick the partition as
 *     the generated runtime would; without guards, the planner's best
 *     mapping for this input;
 *   - ID: partition ID of plan.json's partition table (every objective's);
 *   - "<stages>": written out (cli/partition-arg.ts).
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { plannedSpec } from '../codegen/implementations.js';
import { programHash } from '../codegen/native/hash.js';
import { PLAN_JSON_VERSION } from '../codegen/runtime/plan-json.js';
import type { Module } from '../ir/module.js';
import { lowerKernelsPass } from '../passes/lower-kernels.js';
import { createGuardedRuntime } from '../runtime/engine/runtime.js';
import type { RuntimeConfig, RuntimeInputs } from '../runtime/engine/types.js';
import { stagePlans } from '../runtime/engine/execute.js';
import { ModelClock } from '../runtime/engine/clock.js';
import { TraceRecorder } from '../runtime/engine/trace.js';
import { HistoryLog } from '../runtime/history/log.js';
import { historyRecords } from '../runtime/history/record.js';
import { InputError } from '../runtime/errors.js';
import { cpuBackendOf, systemForCpuBackend } from '../runtime/system/cpu-backend.js';
import { KernelEngine, Slot, type StageRun } from '../runtime/exec/index.js';
import { tier0 } from '../runtime/features/index.js';
import { planOptions } from '../runtime/guards/build.js';
import { OBJECTIVES, partitionTable, treeGuards, type GuardPlans } from '../runtime/guards/objectives.js';
import { readInputFile } from '../runtime/io/files.js';
import { bindProblem } from '../runtime/plan/bind.js';
import { choicesOf, evaluateChoices, planPareto, type StageChoice } from '../runtime/plan/dp.js';
import type { Mapping, Objective, PlanSpec } from '../runtime/plan/types.js';
import { NATIVE_BACKENDS } from '../runtime/native/abi.js';
import { openProject, parseProjectJson, projectKinds, readProject } from '../runtime/native/project.js';
import type { DeviceKind, SystemSpec } from '../runtime/system/types.js';
import type { Tensor } from '../runtime/tensor.js';
import type { WasmManifest } from '../runtime/wasm/manifest.js';
import { usage } from './errors.js';
import { positiveInt } from './int-option.js';
import { loadInputs, parseAssignments, parseScalars } from './inputs.js';
import { outFiles, outputDecl, summarize, summaryText, writeAllAtomic } from './outputs.js';
import { instancesOver, parsePartition } from './partition-arg.js';
import { boundDims, loadSystem, parseGoal, sparseFeatures } from './planning.js';
import { DEFAULT_PROJECT_SYSTEM } from './defaults.js';
import { capThreads } from './threads.js';
import { snakeValues } from './json-keys.js';
import { loadProgram, optimise, selectKernel } from './program.js';
import { parseRepeat, timingOf, type RunOptions } from './run.js';
import { repeatsJson, repeatText } from './repeats.js';

interface PlanJson {
  format: string;
  version: number;
  system: SystemSpec;
  /** Per kernel: the guards of every objective and the one the project was compiled for (the runtime's initial one). */
  kernels: Record<string, { guards: GuardPlans; objective: Objective }>;
}

/** A file of the project as text; DY3010 when it is there but cannot be read (a folder, no permission). */
function projectText(path: string): string {
  return readInputFile(path, "the project's file").toString('utf8');
}

/**
 * plan.json, checked as far as this command reads it before trusting its
 * fields (a cut or edited file would otherwise fail later as an internal
 * error): the format and version, the program hash the project's, the system an object with devices, and
 * per kernel a known objective and guards keyed by objectives, each with a
 * tree and ranges. DY3044 names the file and what is wrong.
 */
function readPlanJson(planPath: string, programHash: string): PlanJson {
  const p = parseProjectJson(projectText(planPath), planPath, 'a dype plan') as Partial<PlanJson> & {
    programHash?: unknown;
  };
  const bad = (what: string): never => {
    throw new InputError('DY3044', planPath, undefined, `${what}: recompile the project with dype compile`);
  };
  // An older plan.json lacks what later planning needs (version 4: the ops' loop counts; version 3 has one objective's guards).
  if (p.format !== 'dype-plan' || p.version !== PLAN_JSON_VERSION)
    bad(
      `expected a dype plan (format dype-plan, version ${PLAN_JSON_VERSION}: guards for every objective, ops with their loop counts), got ${String(p.format)} version ${String(p.version)}`,
    );
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(p.system) || !Array.isArray(p.system.devices)) bad('expected `system` to be a system with `devices`');
  if (!isObject(p.kernels)) bad('expected `kernels` to be an object of kernels');
  for (const [name, k] of Object.entries(p.kernels as Record<string, unknown>)) {
    if (!isObject(k)) return bad(`expected \`kernels.${name}\` to be an object`);
    if (!OBJECTIVES.includes(k.objective as Objective))
      bad(
        `expected \`kernels.${name}.objective\` to be one of ${OBJECTIVES.join(', ')}, got ${JSON.stringify(k.objective)}`,
      );
    if (!isObject(k.guards)) return bad(`expected \`kernels.${name}.guards\` to be an object of guards per objective`);
    for (const [o, g] of Object.entries(k.guards))
      if (!OBJECTIVES.includes(o as Objective) || !isObject(g) || !isObject(g.tree) || !isObject(g.ranges))
        bad(`expected \`kernels.${name}.guards.${o}\` to be the guards of an objective (a tree and its ranges)`);
  }
  // A plan left by an earlier compile of another program (or version) into the directory would pick its system and
  // partitions for this one.
  if (p.programHash !== programHash)
    bad(
      `is the plan of another program or version (program hash ${String(p.programHash).slice(0, 12)}, the project's ${programHash.slice(0, 12)})`,
    );
  return p as PlanJson;
}

/** What one execution of the input gave. */
interface Execution {
  outputs: Map<string, Tensor>;
  runs: StageRun[];
  wallMs: number;
  mapping: Mapping;
  partition: { source: string; id?: number; label: string; choices: StageChoice[] };
  /** The guarded runtime's measured decision for this run (absent for a fixed partition). */
  decision?: { ms: number; reused: boolean };
}

export async function runProjectCommand(
  file: string,
  o: RunOptions & { project: string },
  stdout: (s: string) => void,
): Promise<void> {
  if (o.backend !== undefined)
    throw usage(
      '--backend and --project exclude each other: with --project the partition decides which backend runs each stage',
    );
  const repeat = parseRepeat(o.repeat);
  const threadsAsked = o.threads === undefined ? availableParallelism() : positiveInt('--threads', o.threads, 1);
  const threads = capThreads(threadsAsked);
  const partitionArg = o.partition ?? 'auto';
  const dir = o.project;
  const info = readProject(dir);
  const program = loadProgram(file);
  const module: Module = lowerKernelsPass.run(optimise(program));
  const hash = programHash(module);
  if (hash !== info.programHash)
    throw new InputError(
      'DY3044',
      join(dir, 'project.json'),
      undefined,
      `was compiled from ${basename(file) === info.source ? `another version of ${file}` : `another program, ${info.source}`} (program hash ${info.programHash.slice(0, 12)}, this file ${hash.slice(0, 12)}): recompile with dype compile ${file} -o ${dir}`,
    );
  const kernel = selectKernel(module, file, o.kernel);
  const outs = parseAssignments(o.out, '--out');
  // Every --out name is checked before any work (DY3014).
  for (const a of outs) outputDecl(kernel, a.name);
  const targets = outs.map((a) => resolve(a.value));
  const clash = targets.findIndex((t, i) => targets.indexOf(t) !== i);
  if (clash >= 0)
    throw usage(
      `--out ${outs[clash]!.name} and --out ${outs[targets.indexOf(targets[clash]!)]!.name} name the same file '${outs[clash]!.value}'`,
    );
  const planPath = join(dir, 'plan.json');
  const planJson = existsSync(planPath) ? readPlanJson(planPath, info.programHash) : undefined;
  const sys = o.system !== undefined || !planJson ? loadSystem(o, DEFAULT_PROJECT_SYSTEM) : planJson.system;
  const goal = parseGoal(o);
  const kplan = planJson?.kernels[kernel.name];
  const guards = kplan?.guards;
  // The project's guards start with the objective it was compiled for; --objective picks another.
  const objective: Objective = kplan && o.objective === undefined ? kplan.objective : goal.objective;
  if (guards && !guards[objective])
    throw new InputError(
      'DY3044',
      planPath,
      undefined,
      `the project has guards of kernel ${kernel.name} for ${Object.keys(guards).join(', ')}, not for --objective ${objective}: recompile the project with dype compile`,
    );
  const table = kplan && guards ? partitionTable(guards, kplan.objective) : undefined;
  const scalars = parseScalars(kernel, parseAssignments(o.param, '--param'));
  const loaded = loadInputs(kernel, parseAssignments(o.input, '--input'), scalars);
  const tensors = new Map<string, Tensor>([...loaded].map(([n, li]) => [n, li.tensor]));
  const dims = boundDims(kernel, tensors, scalars, loaded);
  const feats = sparseFeatures(kernel, tensors);
  const spec = plannedSpec(module, file, kernel.name);
  const problem = bindProblem(spec, { sparse: feats, dims, scalars });
  const manifestPath = join(dir, 'wasm', `${kernel.name}.manifest.json`);
  if (!existsSync(manifestPath))
    throw new InputError(
      'DY3043',
      manifestPath,
      undefined,
      `the project has no wasm kernel: compile it with dype compile ${file} -o ${dir} (targets wasm, cuda, hls)`,
    );
  const manifest = parseProjectJson(projectText(manifestPath), manifestPath, 'a wasm kernel manifest') as WasmManifest;

  // Which partition(s), and so which device kinds need a backend.
  let fixed: { source: string; id?: number; label: string; choices: StageChoice[] } | undefined;
  if (partitionArg === 'auto') {
    if (!table) {
      // On the device kinds the project was compiled for: a plan onto another kind would find no code to run.
      const kinds = projectKinds(info);
      const best = planPareto(sys, problem, planOptions(sys, { ...goal, kinds })).pareto[0];
      if (!best)
        throw new InputError(
          'DY3030',
          sys.name,
          undefined,
          `no mapping of kernel ${kernel.name} is feasible on ${sys.name}${kinds ? ` (on its ${kinds.join(', ')} devices: the project's targets run no other)` : ''} for this input`,
        );
      const choices = choicesOf(problem, best);
      fixed = {
        source:
          'auto: the planner\u2019s best mapping for this input (the project has no guards: compile with --profile for them)',
        label: labelOf(spec, sys, choices),
        choices,
      };
    }
  } else if (/^\d+$/.test(partitionArg)) {
    if (!table)
      throw new InputError(
        'DY3047',
        planPath,
        undefined,
        `--partition ${partitionArg} names a partition of the project's guards, but the project has none for kernel ${kernel.name}: compile with --profile, or write the stages out`,
      );
    const p = table.partitions.find((x) => x.id === Number(partitionArg));
    if (!p)
      throw new InputError(
        'DY3047',
        planPath,
        undefined,
        `the guards of kernel ${kernel.name} have partitions ${table.partitions.map((x) => x.id).join(', ')}; there is no ${partitionArg}`,
      );
    fixed = { source: `partition ${p.id} of plan.json`, id: p.id, label: p.label, choices: p.choices };
  } else {
    const choices = parsePartition(partitionArg, spec, sys);
    fixed = { source: '--partition as written', label: labelOf(spec, sys, choices), choices };
  }
  // A partition of plan.json (or written out) names devices of the system it was made for: another --system may
  // lack them.
  const kindsOf = (cs: readonly StageChoice[], what: string): DeviceKind[] => {
    const kinds = cs.map((c) => {
      const d = sys.devices.find((x) => x.id === c.device);
      if (!d)
        throw new InputError(
          'DY3047',
          what,
          undefined,
          `runs a stage on device '${c.device}', which system ${sys.name} does not have (its devices: ${sys.devices.map((x) => x.id).join(', ')}); run with the system the project was compiled for, or recompile for ${sys.name}`,
        );
      return d.kind;
    });
    const over = instancesOver(cs, sys);
    if (over !== undefined) throw new InputError('DY3047', what, undefined, over);
    return kinds;
  };
  // Guarded: the device kinds of the partitions the objective's guards pick (their fallbacks among them).
  const kinds = [
    ...new Set(
      fixed
        ? kindsOf(fixed.choices, fixed.source)
        : table!.ids[objective]!.flatMap((i) =>
            kindsOf(table!.partitions[i]!.choices, `partition ${i} of ${planPath}`),
          ),
    ),
  ];
  const backends = await openProject(dir, sys, { emulate: o.emulate === true, kernel: kernel.name, threads, kinds });
  // A fixed partition is priced, and its CPU ops given threads, by the fit of the CPU backend that opened (the
  // guarded runtime does the same itself).
  const cpuFit = cpuBackendOf(backends.cpu?.name);
  const fitSys = cpuFit ? systemForCpuBackend(sys, cpuFit).system : sys;
  const inputs = { tensors, scalars, dims };
  const trace = o.trace !== undefined ? new TraceRecorder() : undefined;
  const history = o.history !== undefined ? new HistoryLog(o.history) : undefined;

  let runOnce: () => Promise<Execution>;
  let close: () => void;
  if (fixed) {
    // A fixed partition's figures are counted the way the project's guards were planned, else as the options say.
    const mapping = evaluateChoices(fitSys, problem, fixed.choices, guards && kplan ? guards[kplan.objective]! : goal);
    if (!mapping)
      throw new InputError(
        'DY3030',
        sys.name,
        undefined,
        `partition ${fixed.label} cannot run this input on ${sys.name} (memory, FPGA resources or an op without an implementation there)`,
      );
    const engine = new KernelEngine(manifest, backends, sys);
    engine.timeOps = history !== undefined;
    const plans = stagePlans(fitSys, spec, fixed, mapping, problem);
    const slot = new Slot();
    // What this run has recorded: each op's first run (the warm-up, or the one run without --repeat) is cold.
    const seen = new Set<string>();
    const f = fixed;
    runOnce = async () => {
      engine.begin(slot, engine.prepare(inputs));
      const t0 = engine.now();
      const runs: StageRun[] = [];
      try {
        for (let i = 0; i < plans.length; i++) runs.push(await runStageNamed(engine, slot, plans, i, f.label));
        const outputs = await engine.collect(slot);
        history?.append(historyRecords(sys, kernel.name, problem, runs, seen));
        return { outputs, runs, wallMs: engine.now() - t0, mapping, partition: f };
      } finally {
        engine.end(slot);
      }
    };
    close = () => {
      engine.close([slot]);
      for (const b of new Set(Object.values(backends))) b?.close();
    };
  } else {
    const cfg: RuntimeConfig = {
      program: info.program,
      programHash: info.programHash,
      kernel: kernel.name,
      manifest,
      spec,
      // The project's initial objective keeps plan.json's partition ids; the runtime then starts with --objective.
      objective: kplan!.objective,
      guards: guards!,
      params: kernel.params.map((p) => ({
        name: p.name,
        kind: p.type.format !== 'dense' ? 'sparse' : p.type.shape.length === 0 ? 'scalar' : 'dense',
        shape: p.type.shape.map((d) => (d.kind === 'sym' ? d.name : d.value)),
      })),
      guard: treeGuards(guards!, kplan!.objective),
    };
    const rt = createGuardedRuntime(cfg, {
      system: sys,
      backends,
      objective,
      ...(trace ? { trace } : {}),
      ...(history ? { history } : {}),
    });
    const raw: RuntimeInputs = Object.fromEntries(
      [...kernel.params].map((p) => [p.name, tensors.get(p.name) ?? scalars.get(p.name)!]),
    );
    runOnce = async () => {
      const r = await rt.run(raw);
      return {
        outputs: r.outputs,
        runs: r.stages,
        wallMs: r.wallMs,
        mapping: r.mapping,
        decision: { ms: r.log.decisionMs, reused: r.log.decisionReused },
        partition: {
          source: `auto: the project's ${r.log.objective} guards (path ${r.path.join(' -> ') || 'one partition'})${r.log.replan ? `; ${r.log.replan.reason}, re-planned` : ''}`,
          id: r.partition.id,
          label: r.partition.label,
          choices: [],
        },
      };
    };
    close = () => {
      rt.close();
      for (const b of new Set(Object.values(backends))) b?.close();
    };
  }

  const times: number[] = [];
  const timed: Execution[] = [];
  try {
    if (o.repeat !== undefined) {
      await runOnce();
      // The timeline shows the runs the times are of: the guarded runtime drew the warm-up too.
      trace?.clear();
    }
    for (let i = 0; i < repeat; i++) {
      const ex = await runOnce();
      timed.push(ex);
      times.push(ex.wallMs);
    }
  } finally {
    close();
  }
  const ex = timed[timed.length - 1]!;
  if (trace && fixed) {
    // The guarded runtime draws both clocks itself; a fixed partition gets them here, every timed run.
    const clk = new ModelClock(trace);
    for (const run of timed) {
      clk.place(
        { id: fixed.id ?? -1, key: '', label: fixed.label, choices: fixed.choices, fallbacks: [], replanned: false },
        run.mapping,
        false,
        0,
        false,
        kernel.name,
      );
      clk.measured(kernel.name, run.runs);
    }
  }
  const files = outFiles(
    kernel,
    outs,
    loaded,
    ex.outputs,
    `partition ${ex.partition.label}: ${ex.runs.map((r) => r.backend).join(' | ')}`,
  );
  if (o.trace !== undefined)
    files.push({ path: o.trace, data: JSON.stringify(trace!.toJSON()), where: `--trace ${o.trace}` });
  writeAllAtomic(files);
  const backendsRan = [...new Set(ex.runs.map((r) => r.backend))];
  // What ran emulated, not what --emulate allowed: an all-CPU partition under --emulate emulated nothing.
  const emulatedRan = backendsRan.filter((b) => EMULATED.has(b));
  const timing = { ...timingOf(times), clock: 'measured' };
  const features = Object.fromEntries(
    [...loaded].map(([n, li]) => [n, { ...(feats.get(n) ?? tier0(li.tensor)), source: li.source }]),
  );
  const summaries = Object.fromEntries([...ex.outputs].map(([n, t]) => [n, summarize(t)]));
  const stages = ex.runs.map((r, i) => ({
    ops: r.ops,
    devices: r.devices,
    backend: r.backend,
    ms: r.ms,
    bytes_in: r.bytesIn,
    bytes_out: r.bytesOut,
    transfer_ms: r.transferMs,
    compute_ms: r.computeMs,
    ...(r.unsplit.length ? { unsplit: r.unsplit } : {}),
    ...(r.threads ? { threads_per_op: r.threads } : {}),
    predicted_ms: ex.mapping.stages[i]?.timeMs,
    repeats: repeatsJson(r.repeats),
  }));
  const predicted = {
    period_ms: ex.mapping.periodMs,
    per_input_ms: ex.mapping.perInputMs,
    latency_ms: ex.mapping.latencyMs,
    energy_j: ex.mapping.energyJ,
    device_energy_j: ex.mapping.deviceEnergyJ,
    system_energy_j: ex.mapping.systemEnergyJ,
    power_w: ex.mapping.powerW,
    clock: 'modelled',
  };
  const partition = {
    system: sys.name,
    objective,
    source: ex.partition.source,
    ...(ex.partition.id !== undefined ? { id: ex.partition.id } : {}),
    label: ex.partition.label,
    stages: ex.mapping.stages.map((st) => ({ ops: st.ops, devices: st.devices, variants: st.variants })),
    ...(ex.decision
      ? {
          decision_ms: ex.decision.ms,
          decision_reused: ex.decision.reused,
          decision_clock: 'measured',
        }
      : {}),
  };
  if (o.json) {
    stdout(
      `${JSON.stringify({ kernel: kernel.name, backend: backendsRan.join('+'), threads, emulated: emulatedRan.length > 0, emulate_allowed: o.emulate === true, project: dir, outputs: Object.fromEntries(outs.map((a) => [a.name, a.value])), timing, features: snakeValues(features), dims: Object.fromEntries(dims), summary: summaries, partition, predicted, stages }, null, 2)}\n`,
    );
    return;
  }
  const lines: string[] = [];
  lines.push(
    `kernel ${kernel.name} from project ${dir} on ${sys.name}${o.emulate ? ` (--emulate: GPU/FPGA stages may run in the emulated builds; ${emulatedRan.length ? `${emulatedRan.join(' and ')} did` : 'none did'})` : ''}`,
  );
  lines.push(
    `  partition ${ex.partition.id !== undefined ? `${ex.partition.id} ` : ''}${ex.partition.label} (${ex.partition.source})`,
  );
  if (ex.decision)
    lines.push(
      `  decision: ${(ex.decision.ms * 1e3).toFixed(1)} us measured (${ex.decision.reused ? 'the choice kept for this pattern, reused' : 'features, guards and the cost model on this input'})`,
    );
  ex.runs.forEach((r, i) => {
    lines.push(
      `  stage ${i} [${r.ops.join(' ')}] on ${r.devices.join('+')}: ${r.backend}, ${r.ms.toFixed(3)} ms measured (transfers ${r.transferMs.toFixed(3)} ms; ${r.bytesIn} B in, ${r.bytesOut} B out), ${(ex.mapping.stages[i]?.timeMs ?? NaN).toPrecision(3)} ms predicted for ${sys.name}${r.unsplit.length ? `; ${r.unsplit.join(', ')} ran unsplit` : ''}${
        r.threads
          ? `; threads per op: ${Object.entries(r.threads)
              .map(([op, n]) => `${op} ${n}`)
              .join(', ')}`
          : ''
      }`,
    );
    for (const t of r.repeats) lines.push(`    ${repeatText(t)} (${r.backend})`);
  });
  for (const [n, s] of Object.entries(summaries)) {
    const where = outs.find((a) => a.name === n)?.value;
    lines.push(
      `  output ${n.padEnd(6)} ${s.shape.join(' x ')}${s.nnz !== undefined ? `, nnz ${s.nnz}` : ''}: ${summaryText(s)}${where ? ` -> ${where}` : ''}`,
    );
  }
  lines.push(
    `  time: median ${timing.median_ms.toFixed(3)} ms, min ${timing.min_ms.toFixed(3)} ms over ${timing.runs} run(s), measured on this host (${backendsRan.join(' + ')})${o.repeat === undefined ? ' (one cold run: first-call setup and input copies included)' : ''}`,
  );
  if (emulatedRan.length)
    lines.push(
      `  note: ${emulatedRan.join(' and ')} ran on this host's CPU: ${emulatedRan.length > 1 ? 'their' : 'its'} measured times are the emulation's, not a device's`,
    );
  stdout(lines.join('\n') + '\n');
}

/** The backends that run a GPU or FPGA stage without the device (runtime/native/abi.ts NATIVE_BACKENDS). */
const EMULATED: ReadonlySet<string> = new Set(
  Object.values(NATIVE_BACKENDS).flatMap((b) => (b.emulated !== null ? [b.emulated] : [])),
);

/** `cpu x1 [T1] | gpu x1 [H1, T2, Y]`, as plan.json labels partitions. */
function labelOf(spec: PlanSpec, sys: SystemSpec, choices: readonly StageChoice[]): string {
  void sys;
  return choices
    .map(
      (c) =>
        `${c.device} x${c.count} [${spec.ops
          .slice(c.start, c.end)
          .map((o) => o.result)
          .join(', ')}]`,
    )
    .join(' | ');
}

async function runStageNamed(
  engine: KernelEngine,
  slot: Slot,
  plans: Parameters<KernelEngine['runStage']>[1][],
  i: number,
  label: string,
): Promise<StageRun> {
  const { runStage } = await import('../runtime/engine/execute.js');
  return runStage(engine, slot, plans, i, 'the input', {
    id: -1,
    key: '',
    label,
    choices: [],
    fallbacks: [],
    replanned: false,
  });
}
