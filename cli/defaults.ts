/**
 * The system each command plans for when `--system` is not given, with the
 * reason, in one place: cli/main.ts's help states them from here and the
 * commands use them, so the two cannot drift apart (test/cli/defaults.test.ts
 * runs each command without --system and checks the system it used).
 * Light on purpose: main.ts imports it at start-up.
 */

/** `dype plan` and `dype ir --input ...`: a heterogeneous box, where the partition is the question. */
export const DEFAULT_PLAN_SYSTEM = 'paper-2g2f';
export const PLAN_SYSTEM_WHY =
  "the paper's box of two GPUs and two FPGAs with peer-to-peer links, where splitting a kernel across devices is worth planning";

/** `dype run` (without --project): the machine it executes on. */
export const DEFAULT_RUN_SYSTEM = 'this-machine';
export const RUN_SYSTEM_WHY =
  "run executes on this machine, so the partition and predictions it prints are the planner's for this machine";

/** `dype compile` (guards, plan.json, the generated runtime, report.html). Equal to codegen/runtime/project.ts's DEFAULT_GUARD_SYSTEM. */
export const DEFAULT_COMPILE_SYSTEM = 'paper-1g1f';
export const COMPILE_SYSTEM_WHY =
  'one CPU, one GPU and one FPGA: the guards choose which kind of device runs each op, without multi-device splits, on the box the generated runtime and examples/app are written for';

/** `dype run --project` when the project has no plan.json (compiled without --profile). */
export const DEFAULT_PROJECT_SYSTEM = DEFAULT_PLAN_SYSTEM;

/** `dype calibrate --history`: the runs of a history are measured on this machine. */
export const DEFAULT_HISTORY_SYSTEM = 'this-machine';

/**
 * The most timed runs `dype run --repeat` takes (docs/CLI.md): every run's
 * time is kept for the median, and `--trace` draws every run (a few hundred
 * bytes to a few kB each), which must stay within one JavaScript string.
 */
export const MAX_REPEAT = 100_000;
