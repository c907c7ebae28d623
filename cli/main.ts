#!/usr/bin/env node
/**
 * The `dype` command. Exit codes: 0 success, 1 user error (bad program, bad
 * data), 2 bad usage, 70 internal error.
 */
import { Command, CommanderError } from 'commander';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { printModule } from '../ir/printer.js';
import type { Module } from '../ir/module.js';
import { DEFAULT_PIPELINE, LOWER_STAGE, unknownPassError } from '../passes/index.js';
import { report, usage } from './errors.js';
import { loadProgram, optimise, selectKernel } from './program.js';
import type { PlanCliOptions } from './plan.js';
import type { RunOptions } from './run.js';
import type { CalibrateOptions } from './calibrate.js';
import type { BuildOptions } from './build.js';
import type { CompileOptions } from './compile.js';
import type { EvalOptions } from './eval.js';

// Commands load their modules when they run, so `dype check` does not pay for
// the planner, zod or the I/O layer.
import {
  COMPILE_SYSTEM_WHY,
  DEFAULT_COMPILE_SYSTEM,
  DEFAULT_HISTORY_SYSTEM,
  DEFAULT_PLAN_SYSTEM,
  DEFAULT_PROJECT_SYSTEM,
  DEFAULT_RUN_SYSTEM,
  PLAN_SYSTEM_WHY,
  RUN_SYSTEM_WHY,
  MAX_REPEAT,
} from './defaults.js';

const PRESETS = 'presets: paper-1g1f, paper-2g2f, h200-cpu, this-machine';

const collect = (v: string, prev: string[]): string[] => [...prev, v];

interface IrOptions {
  printIrAfter: string[];
  printIrAfterAll?: boolean;
  kernel?: string;
  input: string[];
  param: string[];
  system?: string;
  objective?: string;
  energyScope?: string;
  stream?: string;
}
const out = (s: string): void => void process.stdout.write(s);
const err = (s: string): void => void process.stderr.write(s);

function onlyKernel(m: Module, file: string, name: string | undefined): Module {
  return name === undefined ? m : { kernels: [selectKernel(m, file, name)] };
}

export function buildProgram(): Command {
  const program = new Command('dype')
    .description('Compiler and runtime for irregular (sparse and graph) kernels on heterogeneous machines')
    .version('0.1.0')
    .exitOverride()
    .configureOutput({ writeOut: out, writeErr: err })
    .showHelpAfterError('(add --help for usage)');

  program
    .command('check')
    .description('parse and type-check a program; prints nothing on success')
    .argument('<file>', 'the .dy program')
    .action((file: string) => {
      loadProgram(file);
    });

  program
    .command('ir')
    .description('print the graph IR (after the whole default pipeline unless told otherwise)')
    .argument('<file>', 'the .dy program')
    .option(
      '--print-ir-after <pass>',
      `print the IR after this pass (repeatable or comma-separated; '${LOWER_STAGE}' is the checker's output; passes: ${DEFAULT_PIPELINE.join(', ')}, partition with --input; lower-kernels shows the loop IR)`,
      collect,
      [],
    )
    .option('--print-ir-after-all', 'print the IR after the checker and after every pass')
    .option('--kernel <name>', 'only this kernel')
    .option(
      '--input <NAME=PATH>',
      'data for the partition pass: with inputs, the pipeline ends with partition (repeatable)',
      collect,
      [],
    )
    .option('--param <NAME=VALUE>', 'a scalar parameter or dim for the partition pass (repeatable)', collect, [])
    .option(
      '--system <FILE|PRESET>',
      `system for the partition pass (default ${DEFAULT_PLAN_SYSTEM}, as dype plan: ${PLAN_SYSTEM_WHY}; ${PRESETS})`,
    )
    .option('--objective <name>', 'objective of the partition pass (default throughput)')
    .option(
      '--energy-scope <scope>',
      'device (the devices the mapping uses: active power while computing, powered-up waiting power otherwise) or system (the devices plus every other device idle, host included) (default system)',
    )
    .option(
      '--stream <N>',
      'the number of inputs the figures are for: time per input = (latency + (N - 1) x period) / N, or unbounded for the steady state (default unbounded)',
    )
    .action(async (file: string, o: IrOptions) => {
      // These shape the partition pass alone, which runs only with --input: without it they would be ignored unread.
      const forPartition = (
        [
          ['--param', o.param.length > 0],
          ['--system', o.system !== undefined],
          ['--objective', o.objective !== undefined],
          ['--energy-scope', o.energyScope !== undefined],
          ['--stream', o.stream !== undefined],
        ] as const
      ).flatMap(([flag, given]) => (given ? [flag] : []));
      if (o.input.length === 0 && forPartition.length > 0)
        throw usage(
          `${forPartition.join(', ')} ${forPartition.length > 1 ? 'are' : 'is'} for the partition pass, which runs with --input`,
        );
      const p = loadProgram(file);
      const extra = o.input.length > 0 ? [await (await import('./ir-partition.js')).partitionFor(p, file, o)] : [];
      // The loop IR is shown on request; the default pipeline ends at the graph level.
      const stages = o.printIrAfter.flatMap((s) => s.split(',')).map((s) => s.trim());
      // An empty name (`--print-ir-after=`, `a,,b`) is a mistake, not a request for the default output.
      if (stages.includes('')) throw usage(`--print-ir-after expects pass names, got '${o.printIrAfter.join(',')}'`);
      // What this command can dump, in pipeline order: a name outside it is refused before any pass runs.
      const dumpable = [LOWER_STAGE, ...DEFAULT_PIPELINE, ...extra.map((x) => x.name), 'lower-kernels'];
      for (const s of stages)
        if (!dumpable.includes(s))
          throw unknownPassError(s, dumpable, s === 'partition' ? 'it runs when --input gives the data' : undefined);
      // The loop IR is a lowering of its own, shown when named: --print-ir-after-all is the graph IR's stages.
      if (stages.includes('lower-kernels')) extra.push((await import('../passes/lower-kernels.js')).lowerKernelsPass);
      if (o.printIrAfterAll && stages.length > 0)
        throw usage('give either --print-ir-after or --print-ir-after-all, not both');
      if (!o.printIrAfterAll && stages.length === 0) {
        out(printModule(onlyKernel(optimise(p, { extra }), file, o.kernel)));
        return;
      }
      if (o.kernel !== undefined) selectKernel(p.module, file, o.kernel);
      const dumps: string[] = [];
      optimise(p, {
        extra,
        printAfter: o.printIrAfterAll ? 'all' : new Set(stages),
        // The kernel is picked from the module itself, not from its printed text (the loop IR has no parser).
        select: (m) => onlyKernel(m, file, o.kernel),
        dump: (stage, text) => dumps.push(`// ----- IR after ${stage} -----\n${text}`),
      });
      out(dumps.join('\n'));
    });

  program
    .command('run')
    .description('execute a kernel on this machine and write its results')
    .argument('<file>', 'the .dy program')
    .option('--kernel <name>', 'the kernel to run (needed when the file has several)')
    .option(
      '--input <NAME=PATH>',
      'an input: a Matrix Market file, an edge list (.cites/.txt), or a generator @random[:SEED], @ones, @zeros, @const:V, @source:K (repeatable)',
      collect,
      [],
    )
    .option(
      '--out <NAME=PATH>',
      'write a result, or a tensor input as the run read or generated it, as Matrix Market (repeatable)',
      collect,
      [],
    )
    .option('--param <NAME=VALUE>', 'a scalar parameter, or the size of a dim no input binds (repeatable)', collect, [])
    .option(
      '--backend <name>',
      'execution backend: auto (the default: native where a C compiler ($CC, else cc) exists, else wasm with a note), native (C built with the system compiler, its own threads), wasm (compiled, multi-threaded) or reference (the float64 interpreter)',
    )
    .option(
      '--project <DIR>',
      'run a project compiled by dype compile (libraries built by dype build) stage by stage on the backends of its partition',
    )
    .option(
      '--partition <auto|ID|STAGES>',
      'with --project: auto (the project\'s guards, else the planner), a partition id of plan.json, or stages written out, e.g. "cpu:op0|gpu:op1-op3" (default auto)',
    )
    .option(
      '--emulate',
      'with --project: let the emulated builds (cuda-emu, fpga-csim) serve GPU and FPGA stages on a host without the devices',
    )
    .option(
      '--history <FILE>',
      'with --project: append every op run (implementation, device, work, measured ms) to this history file (dype calibrate --history fits it)',
    )
    .option(
      '--threads <T>',
      'threads for the native and wasm backends, at most (default: all cores; without --project each op runs on the count the CPU model of --system picks; the reference backend runs on one)',
    )
    .option('--repeat <N>', `run N times (1 to ${MAX_REPEAT}) after one warm-up and report the median`)
    .option(
      '--system <FILE|PRESET>',
      `system the partition and predictions are for (default ${DEFAULT_RUN_SYSTEM}: ${RUN_SYSTEM_WHY}; with --project, the system of the project's plan.json, else ${DEFAULT_PROJECT_SYSTEM} as dype plan; ${PRESETS})`,
    )
    .option(
      '--objective <name>',
      'throughput, energy or latency (default throughput; with --project and its guards, the objective whose guards pick the partition, default the one the project was compiled for)',
    )
    .option(
      '--energy-scope <scope>',
      'device (the devices the mapping uses: active power while computing, powered-up waiting power otherwise) or system (the devices plus every other device idle, host included) (default system)',
    )
    .option(
      '--stream <N>',
      'the number of inputs the figures are for: time per input = (latency + (N - 1) x period) / N, or unbounded for the steady state (default unbounded)',
    )
    .option('--power-cap <W>', 'peak power the devices may draw together, W')
    .option('--no-p2p', 'no peer-to-peer links between devices')
    .option(
      '--trace <FILE>',
      "write a Chrome trace-event timeline (opens in Perfetto): the predicted stages and transfers per device on the cost model's clock, and the measured runs",
    )
    .option('--json', 'print one JSON object on stdout')
    .option(
      '--no-cache',
      'compile the kernel afresh (wasm module or native library), without reading or writing the compile cache ($DYPE_CACHE_DIR, else $XDG_CACHE_HOME/dype or ~/.cache/dype)',
    )
    .action(async (file: string, o: RunOptions) => (await import('./run.js')).runCommand(file, o, out));

  program
    .command('plan')
    .description(
      'the Pareto set of mappings of a kernel onto a system for the data at hand, best first, with baselines',
    )
    .argument('<file>', 'the .dy program')
    .option('--kernel <name>', 'the kernel to plan (needed when the file has several)')
    .option(
      '--input <NAME=PATH>',
      'an input (sparse inputs are needed for their features; dense ones only bind dims)',
      collect,
      [],
    )
    .option('--param <NAME=VALUE>', 'a scalar parameter, or the size of a dim no input binds', collect, [])
    .option(
      '--system <FILE|PRESET>',
      `system description (default ${DEFAULT_PLAN_SYSTEM}: ${PLAN_SYSTEM_WHY}; ${PRESETS})`,
    )
    .option('--objective <name>', 'throughput, energy or latency (default throughput)')
    .option(
      '--energy-scope <scope>',
      'device (the devices the mapping uses: active power while computing, powered-up waiting power otherwise) or system (the devices plus every other device idle, host included) (default system)',
    )
    .option(
      '--stream <N>',
      'the number of inputs the figures are for: time per input = (latency + (N - 1) x period) / N, or unbounded for the steady state (default unbounded)',
    )
    .option('--power-cap <W>', 'peak power the devices may draw together, W')
    .option('--no-p2p', 'no peer-to-peer links: transfers between devices stage through host memory')
    .option('--json', 'print one JSON object on stdout')
    .action(async (file: string, o: PlanCliOptions) => (await import('./plan.js')).planCommand(file, o, out));

  program
    .command('calibrate')
    .description(
      'time the CPU kernels on generated and real matrices, fit the CPU cost model, write a system file and report the model error',
    )
    .option('-o, --output <FILE>', 'write the system file here (default: print it on stdout)')
    .option('--threads <T>', 'worker threads to time with (default: the CPUs available)')
    .option(
      '--backend <name>',
      'the CPU backend to time and fit: auto (the default: native where a C compiler exists, else wasm with a note, as dype run), native or wasm',
    )
    .option('--quick', 'a smaller ladder of generated matrices')
    .option(
      '--history <FILE>',
      "instead of timing kernels, refit the system's devices from a history of measured op runs (dype run --project --history, or a runtime given a history)",
    )
    .option(
      '--system <FILE|PRESET>',
      `with --history: the system the runs are for (default ${DEFAULT_HISTORY_SYSTEM}: the runs were measured on this machine)`,
    )
    .option('--json', 'print one JSON object on stdout')
    .action(async (o: CalibrateOptions) => (await import('./calibrate.js')).calibrateCommand(o, out));

  program
    .command('compile')
    .description(
      'write the compile artifacts: IR after every pass, and per target wasm kernels, CUDA and HLS projects, the generated runtime',
    )
    .argument('<file>', 'the .dy program')
    .option('-o, --output <DIR>', 'output directory (created if missing)')
    .option(
      '--targets <list>',
      'comma-separated targets: wasm, cuda, hls, runtime, report (default: all; runtime and report need --profile)',
    )
    .option(
      '--system <FILE|PRESET>',
      `system the plan and guards are for (default ${DEFAULT_COMPILE_SYSTEM}: ${COMPILE_SYSTEM_WHY}; ${PRESETS})`,
    )
    .option(
      '--profile <NAME=PATH>',
      'a sample input the guards are built from; a name may repeat (repeatable)',
      collect,
      [],
    )
    .option(
      '--objective <name>',
      'the objective the generated runtime starts with (guards are built for all three) and the report plans for: throughput, energy or latency (default throughput)',
    )
    .option(
      '--energy-scope <scope>',
      'device (the devices the mapping uses: active power while computing, powered-up waiting power otherwise) or system (the devices plus every other device idle, host included) (default system)',
    )
    .option(
      '--stream <N>',
      'the number of inputs the figures are for: time per input = (latency + (N - 1) x period) / N, or unbounded for the steady state (default unbounded)',
    )
    .action(async (file: string, o: CompileOptions) => (await import('./compile.js')).compileCommand(file, o, out));

  program
    .command('build')
    .description(
      'build the native libraries of a compiled project (real where the toolchain and device exist, emulated otherwise)',
    )
    .argument('<dir>', 'a directory written by dype compile')
    .option(
      '--emulate',
      'build the emulated libraries (CUDA on a CPU emulation, FPGA kernels in C simulation; g++ only)',
    )
    .option('--real', 'build the real libraries whatever this host has (nvcc for CUDA; XRT for the FPGA host library)')
    .option('--jobs <N>', 'parallel compile jobs (default 2)')
    .option(
      '--no-cache',
      'always run make: neither reuse nor keep libraries in the build cache ($DYPE_CACHE_DIR/builds, else $XDG_CACHE_HOME/dype/builds or ~/.cache/dype/builds)',
    )
    .option('--json', 'print one JSON object on stdout')
    .action(async (dir: string, o: BuildOptions) => (await import('./build.js')).buildCommand(dir, o, out));

  program
    .command('hls')
    .description(
      'write only the FPGA project: Vitis-HLS kernels, host code, Makefile with csim (g++), sw_emu, hw_emu, hw',
    )
    .argument('<file>', 'the .dy program')
    .option('-o, --output <DIR>', 'output directory (created if missing)')
    .option(
      '--kernel <name>',
      "the kernel the project's Makefile builds and runs by default (make csim; KERNEL=NAME picks another); every kernel is in the project (default: the first)",
    )
    .action(async (file: string, o: { output?: string; kernel?: string }) =>
      (await import('./hls.js')).hlsCommand(file, o, out),
    );

  program
    .command('eval')
    .description(
      'the evaluation suite: every strategy against the simulated oracle on workloads x inputs x systems x objectives; prints the table',
    )
    .option('--quick', 'a representative subset (under a minute)')
    .option(
      '--sensitivity [suite]',
      'also move every estimated parameter (x0.5, x2) and every measured one with a published range to each end and rank them by their effect on the figures; on the quick suite (default, 14-30 minutes) or the full one (over an hour)',
    )
    .option('-o, --output <DIR>', 'write cases.csv, eval.json and report.html here')
    .option('--json', 'print one JSON object on stdout')
    .action(async (o: EvalOptions) => (await import('./eval.js')).evalCommand(o, out));

  return program;
}

/**
 * An option that takes one value (or none) given twice is a usage error, as a repeated --input name is: commander
 * keeps the last and drops the first unread (`--repeat 3 --repeat 4`, `--backend wasm --backend reference`). The
 * repeatable options are those that collect their values.
 */
function refuseRepeats(cmd: Command, args: readonly string[]): void {
  const end = args.indexOf('--');
  const tokens = end >= 0 ? args.slice(0, end) : args;
  for (const opt of cmd.options) {
    if (opt.parseArg === collect) continue;
    const takesValue = opt.required || opt.optional;
    const given = tokens.filter(
      (t) =>
        t === opt.long ||
        t === opt.short ||
        (opt.long !== undefined && takesValue && t.startsWith(`${opt.long}=`)) ||
        (opt.short !== undefined && takesValue && t.startsWith(opt.short) && !t.startsWith('--')),
    );
    if (given.length > 1) throw usage(`${opt.long ?? opt.short} is given twice (${given.join(', ')}): give it once`);
  }
}

export async function main(argv: readonly string[]): Promise<number> {
  const program = buildProgram();
  if (argv.length === 0) {
    err(program.helpInformation());
    return 2;
  }
  // commander's own `help NAME` prints the general help and succeeds for a name that is no command.
  const named = argv[1];
  if (
    argv[0] === 'help' &&
    named !== undefined &&
    !named.startsWith('-') &&
    named !== 'help' &&
    !program.commands.some((c) => c.name() === named)
  ) {
    err(`error: unknown command '${named}'\n(add --help for usage)\n`);
    return 2;
  }
  // ... and `help help` printed the general help on stderr: it is help asked for, so it goes to stdout, as `--help`.
  if (argv[0] === 'help' && named === 'help' && argv.length === 2) {
    out(program.helpInformation());
    return 0;
  }
  try {
    const cmd = program.commands.find((c) => c.name() === argv[0]);
    if (cmd) refuseRepeats(cmd, argv.slice(1));
    await program.parseAsync(argv as string[], { from: 'user' });
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help')
        return 0;
      return 2;
    }
    return report(e, err);
  }
}

function invokedDirectly(): boolean {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}
const invoked = invokedDirectly();
if (invoked) process.exitCode = await main(process.argv.slice(2));
