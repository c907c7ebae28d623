/** Loading a .dy program and taking it through the frontend and the pass pipeline. */
import { compileSource } from '../frontend/compile.js';
import { DiagnosticError, fileSpan, formatDiagnostic, makeDiagnostic } from '../ir/diagnostics.js';
import { findKernel, type Kernel, type Module } from '../ir/module.js';
import { DEFAULT_PIPELINE, runPipeline, type Pass } from '../passes/index.js';
import { readInputFile } from '../runtime/io/files.js';
import { DiagnosticsFailure } from './errors.js';

export interface LoadedProgram {
  file: string;
  source: string;
  module: Module;
}

export function readSource(file: string): string {
  // DY3010 in the data files' format: `FILE: error DY3010: cannot read ...`.
  const text = readInputFile(file, 'the program').toString('utf8');
  // A byte-order mark (some editors write one) is no character of the program; columns count from what follows.
  return text.startsWith('\uFEFF') ? text.slice(1) : text;
}

/**
 * Parses and checks; throws DiagnosticsFailure on any error. Warnings of a
 * program that checks go to `warn` (stderr), in the errors' format with the
 * source line and a caret line: every command that loads a program shows
 * them (`dype check` among them), and they never change the exit code.
 */
export function loadProgram(
  file: string,
  warn: (s: string) => void = (s) => void process.stderr.write(s),
): LoadedProgram {
  const source = readSource(file);
  const r = compileSource(source, file);
  if (!r.module) throw new DiagnosticsFailure(r.diagnostics, source, file);
  const warnings = r.diagnostics.filter((d) => d.severity === 'warning');
  if (warnings.length > 0) warn(`${warnings.map((d) => formatDiagnostic(d, source)).join('\n')}\n`);
  return { file, source, module: r.module };
}

export interface PipelineDump {
  printAfter?: ReadonlySet<string> | 'all';
  dump?: (stage: string, text: string) => void;
  /** What of the module a dump prints (passes/manager.ts PipelineOptions.select). */
  select?: (m: Module) => Module;
  /** Passes to run after the default pipeline (partition, built for some data). */
  extra?: readonly Pass[];
}

export function optimise(p: LoadedProgram, d: PipelineDump = {}): Module {
  const { extra, ...dump } = d;
  try {
    return runPipeline(p.module, { passes: [...DEFAULT_PIPELINE, ...(extra ?? [])], ...dump });
  } catch (e) {
    if (e instanceof DiagnosticError) throw new DiagnosticsFailure(e.diagnostics, p.source, p.file);
    throw e;
  }
}

/** The kernel named by --kernel, or the only kernel of the file. */
export function selectKernel(m: Module, file: string, name: string | undefined): Kernel {
  if (name !== undefined) {
    const k = findKernel(m, name);
    if (!k)
      throw new DiagnosticsFailure([
        makeDiagnostic(
          'DY2030',
          `no kernel '${name}' in this file; it defines ${m.kernels.map((x) => x.name).join(', ')}`,
          fileSpan(file),
        ),
      ]);
    return k;
  }
  if (m.kernels.length === 1) return m.kernels[0]!;
  throw new DiagnosticsFailure([
    makeDiagnostic(
      'DY2030',
      `this file defines several kernels (${m.kernels.map((x) => x.name).join(', ')}): choose one with --kernel NAME`,
      fileSpan(file),
    ),
  ]);
}
