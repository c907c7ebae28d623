/**
 * Which implementations of the catalogue (runtime/catalogue) a compiled
 * program has, per kernel and op: what the planner may cost, plan.json
 * lists, and the native libraries and the wasm executor dispatch on.
 * Computed from the emitters themselves, so the planner never picks an
 * implementation that was not emitted:
 *   - cpu: the wasm kernel's thread split (manifest: splittable, balanceBy);
 *   - gpu: the CUDA schedules codegen/cuda emits for the op's loop nest
 *     (none when the program cannot be written as CUDA: a DY61xx name);
 *   - fpga: the HLS design codegen/hls picks for the op (none when the
 *     design fails its legality checks, DY62xx).
 */
import { DiagnosticError } from '../ir/diagnostics.js';
import type { Kernel, Module } from '../ir/module.js';
import { lowerKernelsPass } from '../passes/lower-kernels.js';
import { planSpec } from '../passes/plan-spec.js';
import type { PlanSpec } from '../runtime/plan/types.js';
import { cpuImplOf, fpgaImplOfDesign, type FpgaImpl, type GpuImpl, type OpImpls } from '../runtime/catalogue/index.js';
import { cudaPlans } from './cuda/emit.js';
import { buildKernelVM } from './hls/kernel-vm.js';
import { legalityProblems } from './hls/legality.js';
import { buildContext } from './hls/project.js';
import { DEFAULT_PLATFORM } from './hls/view-model.js';
import { programName, type CompiledProgram } from './project.js';
import { wasmManifest } from './wasm/emit.js';

/** kernel name -> op id -> implementations. */
export type ProgramImpls = Map<string, Map<string, OpImpls>>;

function gpuImpls(program: CompiledProgram): Map<string, Map<string, GpuImpl[]>> {
  const out = new Map<string, Map<string, GpuImpl[]>>();
  let plans;
  try {
    plans = cudaPlans(program).plans;
  } catch (e) {
    // A program the CUDA backend rejects (a name C++ cannot take) has no GPU implementation at all.
    if (e instanceof DiagnosticError) return out;
    throw e;
  }
  for (const p of plans)
    out.set(p.kernel.name, new Map(p.ops.map((op) => [op.f.op, op.variants.map((v) => v.name as GpuImpl)])));
  return out;
}

function fpgaImpls(k: Kernel): Map<string, FpgaImpl[]> {
  const ctx = buildContext(k, wasmManifest(k, [], false));
  const out = new Map<string, FpgaImpl[]>();
  for (const f of k.loops!) {
    const vm = buildKernelVM(f, ctx);
    out.set(f.op, legalityProblems(vm, DEFAULT_PLATFORM).length === 0 ? [fpgaImplOfDesign(vm.estimates.design)] : []);
  }
  return out;
}

/** Every kernel's ops with their implementations; the program must be lowered (kernels carry `loops`). */
export function implementationsOf(program: CompiledProgram): ProgramImpls {
  const gpu = gpuImpls(program);
  const out: ProgramImpls = new Map();
  for (const k of program.module.kernels) {
    if (!k.loops) throw new Error(`implementations: kernel ${k.name} has no loop IR; run the lower-kernels pass first`);
    const manifest = wasmManifest(k, [], false);
    const fpga = fpgaImpls(k);
    const ops = new Map<string, OpImpls>();
    for (const o of manifest.ops)
      ops.set(o.op, { cpu: [cpuImplOf(o)], gpu: gpu.get(k.name)?.get(o.op) ?? [], fpga: fpga.get(o.op) ?? [] });
    out.set(k.name, ops);
  }
  return out;
}

/**
 * The planner's spec of every kernel of a module after the default pipeline
 * (lowered here when it is not yet), with the implementations its program
 * has. `file` names the program (for the CUDA symbol prefix and messages).
 */
export function plannedSpecs(m: Module, file: string, source = ''): Map<string, PlanSpec> {
  const lowered = m.kernels.every((k) => k.loops) ? m : lowerKernelsPass.run(m);
  const impls = implementationsOf({ file, source, name: programName(file), module: lowered });
  return new Map(lowered.kernels.map((k) => [k.name, planSpec(k, impls.get(k.name)!)]));
}

export function plannedSpec(m: Module, file: string, kernel: string): PlanSpec {
  const s = plannedSpecs(m, file).get(kernel);
  if (!s) throw new Error(`implementations: no kernel ${kernel}`);
  return s;
}
