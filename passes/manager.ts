/**
 * The pass manager: passes are registered by name, run in order, and the IR
 * is verified after each one. Dumps (--print-ir-after) go to a callback so
 * the CLI decides where they are printed.
 */
import { DiagnosticError, fileSpan, makeDiagnostic } from '../ir/diagnostics.js';
import { cloneModule, type Module } from '../ir/module.js';
import { printModule } from '../ir/printer.js';
import { verifyModule } from '../ir/verifier.js';

export interface Pass {
  name: string;
  description: string;
  /** True once every tensor op must state its type (infer-types and after). */
  typesKnownAfter?: boolean;
  run(m: Module): Module;
  /** What --print-ir-after shows for this pass, when not the graph IR (lower-kernels shows loops). */
  print?: (m: Module) => string;
}

const registry = new Map<string, Pass>();

export function registerPass(p: Pass): void {
  if (registry.has(p.name)) throw new Error(`pass '${p.name}' registered twice`);
  registry.set(p.name, p);
}

export function getPass(name: string): Pass | undefined {
  return registry.get(name);
}

export function registeredPasses(): Pass[] {
  return [...registry.values()];
}

/** Name under which the checker's output (before any pass) can be dumped. */
export const LOWER_STAGE = 'lower';

export interface PipelineOptions {
  /** Registered pass names, or pass objects built for one call (such as partition). */
  passes: readonly (string | Pass)[];
  /** Stage names after which to dump the IR ('lower' is the checker's output), or 'all'. */
  printAfter?: ReadonlySet<string> | 'all';
  dump?: (stage: string, text: string) => void;
  /** The part of the module a dump prints (one kernel, say); the passes run on the whole of it. */
  select?: (m: Module) => Module;
  /** Verify after each pass (default true). */
  verify?: boolean;
}

/**
 * DY5003 for a pass name this pipeline does not run: `pipeline` lists the stages it does run (the checker's output
 * first). A registered pass outside it (build-guards, say, under `dype ir`) is named as such rather than as unknown,
 * so the message never lists a name it has just refused; `why` says what would run it (a pass built per call).
 */
export function unknownPassError(name: string, pipeline?: readonly string[], why?: string): DiagnosticError {
  const expected = pipeline ?? [LOWER_STAGE, ...registry.keys()];
  const what =
    pipeline !== undefined && (registry.has(name) || why !== undefined)
      ? `pass '${name}' does not run in this pipeline${why ? ` (${why})` : ''}`
      : `unknown pass '${name}'`;
  return new DiagnosticError([
    makeDiagnostic('DY5003', `${what}: expected one of ${expected.join(', ')}`, fileSpan('<command line>')),
  ]);
}

export function runPipeline(input: Module, opts: PipelineOptions): Module {
  const wants = (stage: string): boolean => opts.printAfter === 'all' || (opts.printAfter?.has(stage) ?? false);
  if (opts.printAfter && opts.printAfter !== 'all') {
    const names = opts.passes.map((p) => (typeof p === 'string' ? p : p.name));
    for (const s of opts.printAfter)
      if (s !== LOWER_STAGE && !names.includes(s)) throw unknownPassError(s, [LOWER_STAGE, ...names]);
  }
  const shown = (m: Module): Module => (opts.select ? opts.select(m) : m);
  if (wants(LOWER_STAGE)) opts.dump?.(LOWER_STAGE, printModule(shown(input)));
  let m = input;
  let typed = false;
  for (const entry of opts.passes) {
    const pass = typeof entry === 'string' ? registry.get(entry) : entry;
    if (!pass) throw unknownPassError(String(entry));
    const name = pass.name;
    m = pass.run(cloneModule(m));
    typed ||= pass.typesKnownAfter === true;
    if (opts.verify !== false) {
      const errs = verifyModule(m, { requireTypes: typed });
      if (errs.length > 0) {
        throw new DiagnosticError(errs.map((d) => ({ ...d, message: `after pass '${name}': ${d.message}` })));
      }
    }
    if (wants(name)) opts.dump?.(name, (pass.print ?? printModule)(shown(m)));
  }
  return m;
}
