/**
 * `dype compile FILE.dy -o DIR [--targets wasm,cuda,hls,runtime] [--system S]
 * [--profile NAME=PATH ...]`: writes the project (docs/CLI.md, `dype compile`).
 * The IR after every pass always goes to DIR/ir/; each target writes its own
 * sub-folder. Everything is generated in memory first and written only when
 * every target succeeded.
 */
import { lstatSync, readFileSync } from 'node:fs';
import { isAbsolute, join, posix } from 'node:path';
import { DiagnosticError, fileSpan, makeDiagnostic } from '../ir/diagnostics.js';
import { printLoops } from '../ir/loops-printer.js';
import { printModule } from '../ir/printer.js';
import { lowerKernelsPass } from '../passes/lower-kernels.js';
import { programHash } from '../codegen/native/hash.js';
import { loadSystemFile } from '../runtime/system/load.js';
import { resolveSystemArg } from '../runtime/system/presets.js';
import { kindsServedBy, type ProjectInfo } from '../runtime/native/project.js';
import {
  programName,
  type CompileTarget,
  type CompiledProgram,
  type ProfileArg,
  type ProjectFiles,
  type TargetContext,
} from '../codegen/project.js';
import { DEFAULT_COMPILE_SYSTEM } from './defaults.js';
import { usage } from './errors.js';
import { parseAssignments } from './inputs.js';
import { parseGoal, type GoalOptions } from './goal.js';
import { checkOutputDir } from './output-path.js';
import { writeProject } from './project-writer.js';
import { loadProgram, optimise } from './program.js';

export interface CompileOptions extends GoalOptions {
  output?: string;
  targets?: string;
  system?: string;
  profile: string[];
}

/** Targets load only when asked for, so a wasm-only build never loads handlebars or ts-morph. */
export const TARGETS: Record<string, () => Promise<CompileTarget>> = {
  wasm: async () => (await import('../codegen/wasm/project.js')).wasmTarget,
  cuda: async () => (await import('../codegen/cuda/project.js')).cudaTarget,
  hls: async () => (await import('../codegen/hls/project.js')).hlsTarget,
  runtime: async () => (await import('../codegen/runtime/project.js')).runtimeTarget,
  report: async () => (await import('./report-target.js')).reportTarget,
};

/** Targets built when --targets is not given: every one registered. */
export function defaultTargets(): string[] {
  return Object.keys(TARGETS);
}

export function parseTargets(s: string | undefined): string[] {
  if (s === undefined) return defaultTargets();
  const names = s.split(',').map((t) => t.trim());
  if (names.some((t) => t === '')) throw usage(`--targets expects a comma-separated list of targets, got '${s}'`);
  for (const n of names)
    if (!(n in TARGETS)) throw usage(`unknown target '${n}'; targets: ${Object.keys(TARGETS).join(', ')}`);
  return [...new Set(names)];
}

/** The program after the default pipeline and lower-kernels, with the IR text after every stage. */
export function compileProgram(file: string): { program: CompiledProgram; dumps: ProjectFiles } {
  const p = loadProgram(file);
  const dumps: ProjectFiles = new Map();
  let n = 0;
  const module = optimise(p, {
    extra: [lowerKernelsPass],
    printAfter: 'all',
    dump: (stage, text) =>
      void dumps.set(`${String(n++).padStart(2, '0')}-${stage}.${stage === 'lower-kernels' ? 'loops' : 'ir'}`, text),
  });
  // The final graph IR, under a stable name for tools that read it.
  dumps.set('final.ir', printModule(module));
  if (![...dumps.keys()].some((k) => k.endsWith('.loops'))) dumps.set('loops.loops', printLoops(module));
  return { program: { file, source: p.source, name: programName(file), module }, dumps };
}

export async function emitTargets(ctx: TargetContext, names: readonly string[]): Promise<ProjectFiles> {
  const all: ProjectFiles = new Map();
  for (const n of names) {
    const target = await TARGETS[n]!();
    const files = await target.emit(ctx);
    for (const [path, data] of files) {
      const top = target.topLevelFiles === 'all' || (target.topLevelFiles?.includes(path) ?? false);
      const dest = top ? path : `${target.name}/${path}`;
      if (all.has(dest)) throw new Error(`targets write '${dest}' twice`);
      all.set(dest, data);
    }
  }
  return all;
}

/**
 * project.json: what `dype build` and `dype run --project` read (program, hash, kernels, targets built), and the
 * files the compile wrote (`files`, project.json among them), which the next compile into the directory removes
 * where it does not write them again.
 */
export function projectJson(program: CompiledProgram, targets: readonly string[], files: readonly string[]): string {
  const source = program.file.replace(/\\/g, '/').split('/').pop() ?? program.file;
  const info: ProjectInfo = {
    format: 'dype-project',
    version: 1,
    program: program.name,
    source,
    programHash: programHash(program.module),
    kernels: program.module.kernels.map((k) => k.name),
  };
  return `${JSON.stringify({ ...info, targets, files: [...files].sort() }, null, 2)}\n`;
}

/** --profile NAME=PATH, where a name may repeat: each is one more sample of that input. */
export function parseProfiles(list: readonly string[]): ProfileArg[] {
  return list.map((item) => {
    const [a] = parseAssignments([item], '--profile');
    return { name: a!.name, path: a!.value };
  });
}

export async function compileCommand(file: string, o: CompileOptions, stdout: (s: string) => void): Promise<void> {
  if (o.output === undefined) throw usage('dype compile needs -o DIR');
  checkOutputDir(o.output);
  const profiles = parseProfiles(o.profile);
  let names = parseTargets(o.targets);
  // A --system is checked as plan checks it (DY3049, DY3010, DY3018-DY3026) before any work, even when no
  // target asked for reads it (the runtime's guards and the report need --profile).
  if (o.system !== undefined) loadSystemFile(resolveSystemArg(o.system));
  const needing = await profileTargets(names);
  // Profiles feed the guards and the report alone: given to a compile that builds neither, they would be ignored unread.
  if (profiles.length > 0 && needing.length === 0)
    throw usage(
      `--profile is read only by the targets that build guards (${(await profileTargets(Object.keys(TARGETS))).join(', ')}); --targets ${names.join(',')} has none of them`,
    );
  if (profiles.length === 0 && needing.length > 0) {
    // Without --profile the default set leaves out the targets that need profiles (the runtime's guards, the report).
    if (o.targets === undefined) names = names.filter((n) => !needing.includes(n));
    // Asked for by name: say which of them need profiles, before compiling anything.
    else
      throw new DiagnosticError([
        makeDiagnostic(
          'DY6300',
          (await import('../codegen/runtime/project.js')).profilesNeeded(needing),
          fileSpan('<command line>'),
        ),
      ]);
  }
  const { program, dumps } = compileProgram(file);
  const ctx: TargetContext = {
    program,
    profiles,
    outDir: o.output,
    goal: parseGoal(o),
    system: o.system ?? DEFAULT_COMPILE_SYSTEM,
  };
  // The guards pick among partitions the project can run: none on a device kind whose target it was compiled without.
  const kinds = kindsServedBy(names);
  if (kinds) ctx.kinds = kinds;
  const files = await emitTargets(ctx, names);
  for (const [path, text] of dumps) files.set(`ir/${path}`, text);
  files.set('project.json', projectJson(program, names, [...files.keys(), 'project.json']));
  writeProject(
    o.output,
    files,
    previousProjectFiles(o.output).filter((f) => !files.has(f)),
  );
  stdout(`wrote ${files.size} files to ${o.output} (targets: ${names.join(', ')})\n`);
}

/**
 * The files an earlier compile into `dir` wrote, as its project.json lists them, that a recompile may remove: none
 * where there is no project.json (or one from before the list, or one that is not a regular file or does not
 * parse). An entry is kept only as a plain relative path, normalised, whose every folder is a real folder inside
 * `dir` (no link): a hand-edited or crafted list can neither reach outside the project nor, through a linked
 * folder, delete what lies elsewhere. A recompile of another program or with fewer targets would otherwise leave
 * the old program's plan.json, report and kernels beside the new.
 */
export function previousProjectFiles(dir: string): string[] {
  const path = join(dir, 'project.json');
  let data: unknown;
  try {
    if (!lstatSync(path).isFile()) return [];
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return [];
  }
  const files = (data as { format?: unknown; files?: unknown }).files;
  if ((data as { format?: unknown }).format !== 'dype-project' || !Array.isArray(files)) return [];
  const kept = new Set<string>();
  for (const f of files) {
    if (typeof f !== 'string' || f === '' || isAbsolute(f) || f.includes('\\')) continue;
    const rel = posix.normalize(f);
    const parts = rel.split('/');
    if (rel.startsWith('/') || parts.some((x) => x === '..' || x === '.' || x === '')) continue;
    if (inRealFolders(dir, parts.slice(0, -1))) kept.add(rel);
  }
  return [...kept];
}

/** Whether each of `folders`, from `dir` down, is a folder and not a link to one. */
function inRealFolders(dir: string, folders: readonly string[]): boolean {
  let at = dir;
  for (const f of folders) {
    at = join(at, f);
    const st = lstatSync(at, { throwIfNoEntry: false });
    if (st === undefined || !st.isDirectory()) return false;
  }
  return true;
}

/** Of `names`, the targets that read --profile (the runtime's guards, the report). */
async function profileTargets(names: readonly string[]): Promise<string[]> {
  const all = await Promise.all(names.map(async (n) => ((await TARGETS[n]!()).needsProfiles ? [n] : [])));
  return all.flat();
}
