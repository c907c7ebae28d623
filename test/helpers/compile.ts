/** Test helpers: source text to (optimised) IR, failing loudly on diagnostics. */
import { compileSource } from '../../frontend/compile.js';
import { formatDiagnostics } from '../../ir/diagnostics.js';
import type { Module } from '../../ir/module.js';
import { plannedSpec } from '../../codegen/implementations.js';
import { DEFAULT_PIPELINE, runPipeline } from '../../passes/index.js';
import type { OpImpls } from '../../runtime/catalogue/index.js';
import type { PlanSpec } from '../../runtime/plan/types.js';

export function lower(src: string, file = 'test.dy'): Module {
  const r = compileSource(src, file);
  if (!r.module) throw new Error(formatDiagnostics(r.diagnostics, src));
  return r.module;
}

export function optimised(src: string, passes: readonly string[] = DEFAULT_PIPELINE): Module {
  return runPipeline(lower(src), { passes });
}

/** The planner's spec of a kernel of `src`, with the implementations its program really has (codegen/implementations.ts). */
export function specOf(src: string, file = 'test.dy', kernel?: string): PlanSpec {
  const m = optimised(src);
  return plannedSpec(m, file, kernel ?? m.kernels[0]!.name);
}

/** Op id -> implementations of a kernel of `src` (for passes that take them). */
export function implsOf(src: string, file = 'test.dy', kernel?: string): Map<string, OpImpls> {
  return new Map(specOf(src, file, kernel).ops.map((o) => [o.id, o.impls]));
}
