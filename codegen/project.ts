/**
 * What every compile target (wasm, cuda, hls, runtime) is given and returns.
 * A target emits its files into memory; `dype compile` / `dype hls` write
 * them only when every target has succeeded, so a failure leaves no partial
 * project behind.
 */
import type { PlanGoal } from '../runtime/plan/figures.js';
import type { Module } from '../ir/module.js';
import type { DeviceKind } from '../runtime/system/types.js';

/** A program after the default pipeline and lower-kernels: every kernel carries `loops`. */
export interface CompiledProgram {
  /** The .dy file as given on the command line (for messages and comments). */
  file: string;
  source: string;
  /** Program name: the file's base name without `.dy`, made a C identifier (see programName). */
  name: string;
  module: Module;
}

/** One `--profile NAME=PATH`: a sample input the guards are built from (several per name allowed). */
export interface ProfileArg {
  name: string;
  path: string;
}

export interface TargetContext {
  program: CompiledProgram;
  /** The system file or preset given with --system (undefined: the target's default). */
  system?: string;
  /** What the guards and the report plan for: objective, energy scope, stream length (--objective, --energy-scope, --stream). */
  goal: PlanGoal;
  profiles: ProfileArg[];
  /** Where the project will be written (for messages and README text only; never write there yourself). */
  outDir: string;
  /**
   * The device kinds the project's code targets serve (wasm the CPU, cuda the GPU, hls the FPGA): the guards plan
   * partitions on these alone. Absent: every kind of the system (a compile that builds no kernel code).
   */
  kinds?: readonly DeviceKind[];
}

/** Relative POSIX path under the target's folder -> file content. */
export type ProjectFiles = Map<string, string | Uint8Array>;

export interface CompileTarget {
  /** The --targets name, also the sub-folder of the output directory it writes into. */
  name: string;
  /**
   * Files of `emit`'s result written at the top of the output directory
   * instead of under the target's folder (the runtime target's plan.json).
   * Two targets may not claim the same top-level path. 'all': every file
   * of the target (the report pages).
   */
  topLevelFiles?: readonly string[] | 'all';
  /** Built by default only when --profile inputs are given (it cannot do without them). */
  needsProfiles?: boolean;
  emit(ctx: TargetContext): Promise<ProjectFiles>;
}

/** The C-identifier program name of a file path: `examples/gcn.dy` -> `gcn`, `my-prog.dy` -> `my_prog`. */
export function programName(file: string): string {
  const base = file.replace(/\\/g, '/').split('/').pop() ?? file;
  const stem = base.replace(/\.dy$/, '');
  let id = stem.replace(/[^A-Za-z0-9_]/g, '_');
  if (!/^[A-Za-z_]/.test(id)) id = `p_${id}`;
  return id;
}
