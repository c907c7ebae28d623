/** Test helpers: source text to (optimised) IR, failing loudly on diagnostics. */
import { compileSource } from '../../frontend/compile.js';
import { formatDiagnostics } from '../../ir/diagnostics.js';
import type { Module } from '../../ir/module.js';
import { DEFAULT_PIPELINE, runPipeline } from '../../passes/index.js';

export function lower(src: string, file = 'test.dy'): Module {
  const r = compileSource(src, file);
  if (!r.module) throw new Error(formatDiagnostics(r.diagnostics, src));
  return r.module;
}

export function optimised(src: string, passes: readonly string[] = DEFAULT_PIPELINE): Module {
  return runPipeline(lower(src), { passes });
}
