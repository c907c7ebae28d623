/**
 * The runtime target of `dype compile`: guards built from the --profile
 * inputs (the build-guards pass) for the system given (default
 * DEFAULT_GUARD_SYSTEM), written as runtime/<prog>.runtime.ts (TypeScript,
 * ts-morph), runtime/<prog>_dispatch.h (C++), and at the top of the output
 * directory plan.json and ir/build-guards.ir.
 */
import { DiagnosticError, fileSpan, makeDiagnostic } from '../../ir/diagnostics.js';
import { printModule } from '../../ir/printer.js';
import { buildGuardsPass } from '../../passes/build-guards.js';
import { runPipeline } from '../../passes/manager.js';
import { planSpec } from '../../passes/plan-spec.js';
import { implementationsOf } from '../implementations.js';
import { programHash } from '../native/hash.js';
import { wasmManifest } from '../wasm/emit.js';
import type { SparseFeatures } from '../../runtime/plan/types.js';
import type { SystemSpec } from '../../runtime/system/types.js';
import type { Module } from '../../ir/module.js';
import { loadSystemFile } from '../../runtime/system/load.js';
import { resolveSystemArg } from '../../runtime/system/presets.js';
import { checkFeatureNames, checkGeneratedNames } from './names.js';
import type { CompileTarget, ProjectFiles, TargetContext } from '../project.js';
import { emitDispatchHeader } from './emit-cpp.js';
import type { KernelRuntime } from './emit-ts.js';
import { planJson } from './plan-json.js';
import { kernelProfiles, type KernelProfiles } from './profiles.js';

/** A GPU+FPGA+CPU box: where choosing among partitions matters. */
export const DEFAULT_GUARD_SYSTEM = 'paper-1g1f';

export interface RuntimeEmitOptions {
  /** The compile target the guards are built for, as errors name it (default 'runtime'). */
  target?: string;
  /** Module specifier of the runtime library in the generated file (default: DYPE_RUNTIME_IMPORT or 'dype/runtime'). */
  importFrom?: string;
  maxPartitions?: number;
  lossTolerance?: number;
  perProfile?: number;
}

/** DY6300's message for the targets named: `the report target needs profile inputs: ...`. */
export function profilesNeeded(targets: readonly string[]): string {
  const list =
    targets.length === 1 ? targets[0]! : `${targets.slice(0, -1).join(', ')} and ${targets[targets.length - 1]!}`;
  return `the ${list} target${targets.length === 1 ? ' needs' : 's need'} profile inputs: give --profile NAME=PATH (one or more sample matrices per sparse parameter)`;
}

export interface KernelGuards extends KernelRuntime {
  profiles: KernelProfiles;
}

/**
 * Profile features per compile: the runtime and report targets both build
 * guards from the same --profile files, and loading a large matrix twice
 * doubled `dype compile`'s time.
 */
const profileFeatures = new WeakMap<TargetContext, Map<string, SparseFeatures>>();

type GuardBuild = { sys: SystemSpec; kernels: KernelGuards[]; module: Module };
/**
 * Guard builds per compile and fitting options: the runtime and report
 * targets fit the same guards (0.8 s a profile, measured), and both only
 * read what they get.
 */
const guardBuilds = new WeakMap<TargetContext, Map<string, GuardBuild>>();

/** Guards for every kernel the profiles bind and every objective, on the system given (default DEFAULT_GUARD_SYSTEM); the IR with the build-guards annotations. */
export function buildKernelGuards(ctx: TargetContext, o: RuntimeEmitOptions = {}): GuardBuild {
  // What the guards depend on beside the context; `target` and `importFrom` only name things.
  const key = JSON.stringify([o.maxPartitions ?? null, o.lossTolerance ?? null, o.perProfile ?? null]);
  let builds = guardBuilds.get(ctx);
  if (!builds) guardBuilds.set(ctx, (builds = new Map()));
  const hit = builds.get(key);
  if (hit) return hit;
  const built = buildKernelGuardsOnce(ctx, o);
  builds.set(key, built);
  return built;
}

function buildKernelGuardsOnce(ctx: TargetContext, o: RuntimeEmitOptions): GuardBuild {
  const { program } = ctx;
  if (ctx.profiles.length === 0)
    throw new DiagnosticError([
      makeDiagnostic('DY6300', profilesNeeded([o.target ?? 'runtime']), fileSpan('<command line>')),
    ]);
  for (const a of ctx.profiles) {
    const known = program.module.kernels.some(
      (k) =>
        k.params.some((p) => p.name === a.name) ||
        k.params.some((p) => p.type.shape.some((d) => d.kind === 'sym' && d.name === a.name)),
    );
    if (!known)
      throw new DiagnosticError([
        makeDiagnostic(
          'DY6301',
          `--profile ${a.name}: no kernel of ${program.file} has a parameter or dim named '${a.name}'`,
          fileSpan('<command line>'),
        ),
      ]);
  }
  checkFeatureNames(program);
  const sys = loadSystemFile(resolveSystemArg(ctx.system ?? DEFAULT_GUARD_SYSTEM));
  let cache = profileFeatures.get(ctx);
  if (!cache) profileFeatures.set(ctx, (cache = new Map()));
  const profiles = new Map<string, KernelProfiles>();
  for (const k of program.module.kernels) {
    const p = kernelProfiles(k, ctx.profiles, cache);
    if (p) profiles.set(k.name, p);
  }
  // Each kernel has its own sample ranges: the pass runs once per kernel.
  let module = program.module;
  const impls = implementationsOf(program);
  const kernels: KernelGuards[] = [];
  for (const k of program.module.kernels) {
    const kp = profiles.get(k.name);
    if (!kp) continue;
    const one = buildGuardsPass({
      system: sys,
      profiles: new Map([[k.name, kp.bindings]]),
      ...ctx.goal,
      impls,
      ...(ctx.kinds !== undefined ? { kinds: ctx.kinds } : {}),
      ...(o.maxPartitions !== undefined ? { maxPartitions: o.maxPartitions } : {}),
      ...(o.lossTolerance !== undefined ? { lossTolerance: o.lossTolerance } : {}),
      shapeDims: new Map([[k.name, kp.shapeDims]]),
      sampling: { perProfile: o.perProfile ?? 24, seed: 7, ranges: kp.ranges },
    });
    module = runPipeline(module, { passes: [one], verify: true });
    kernels.push({
      kernel: module.kernels.find((x) => x.name === k.name)!,
      spec: planSpec(k, impls.get(k.name)!),
      objective: one.objective,
      plans: one.plans.get(k.name)!,
      profiles: kp,
      manifest: wasmManifest(k, [], true),
    });
  }
  return { sys, kernels, module };
}

export async function emitRuntimeProject(ctx: TargetContext, o: RuntimeEmitOptions = {}): Promise<ProjectFiles> {
  const { program } = ctx;
  checkGeneratedNames(program);
  const { sys, kernels, module } = buildKernelGuards(ctx, o);
  // ts-morph loads only when a runtime is emitted, not when `dype compile` merely asks whether this target needs profiles.
  const { DEFAULT_RUNTIME_IMPORT, emitRuntimeTs } = await import('./emit-ts.js');
  const importFrom = o.importFrom ?? process.env['DYPE_RUNTIME_IMPORT'] ?? DEFAULT_RUNTIME_IMPORT;
  // The file's base name: generated files do not depend on where the program was compiled.
  const source = program.file.replace(/\\/g, '/').split('/').pop() ?? program.file;
  const files: ProjectFiles = new Map();
  files.set(
    `${program.name}.runtime.ts`,
    emitRuntimeTs(program.name, source, programHash(program.module), kernels, importFrom),
  );
  files.set(`${program.name}_dispatch.h`, emitDispatchHeader(program.name, source, kernels));
  files.set('plan.json', planJson(program.name, source, programHash(program.module), sys, kernels));
  files.set('ir/build-guards.ir', printModule(module));
  return files;
}

export const runtimeTarget: CompileTarget = {
  name: 'runtime',
  topLevelFiles: ['plan.json', 'ir/build-guards.ir'],
  needsProfiles: true,
  emit: (ctx) => emitRuntimeProject(ctx),
};
