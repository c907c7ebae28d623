/**
 * The identifiers the CUDA and HLS generators introduce, read from what they
 * generate for every example (not listed by hand), and programs whose
 * kernels, parameters, dims, index variables and results are named after
 * them (test/cuda/names.test.ts compiles those).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileProgram } from '../../cli/compile.js';
import { emitCuda } from '../../codegen/cuda/emit.js';
import { LANGUAGE_RESERVED } from '../../codegen/cuda/names.js';
import { emitHlsProject } from '../../codegen/hls/project.js';
import type { ProjectFiles } from '../../codegen/project.js';
import { ROOT } from './helpers.js';

const IDENT = /\b[A-Za-z_][A-Za-z0-9_]*\b/g;

/** Identifiers of C++ source text outside comments, string and character literals. */
export function cppIdentifiers(text: string, into: Set<string>): void {
  const code = text
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .replace(/\/\/[^\n]*/g, ' ')
    .replace(/"(?:\\.|[^"\\\n])*"/g, ' ')
    .replace(/'(?:\\.|[^'\\\n])*'/g, ' ');
  // A reserved name the emitter renamed (`u_acc0`) is still one the generator introduces.
  for (const m of code.matchAll(IDENT)) into.add(m[0].startsWith('u_') ? m[0].slice(2) : m[0]);
}

/** Names of a .dy source (its declarations and index variables), in the forms the emitters derive from them. */
function userForms(source: string): Set<string> {
  const words = new Set(source.replace(/#[^\n]*/g, ' ').match(IDENT) ?? []);
  const out = new Set<string>();
  for (const w of words) {
    out.add(w);
    out.add(`nnz_${w}`);
    out.add(`maxrow_${w}`);
    out.add(`maxcol_${w}`);
    for (const s of ['rowPtr', 'colIdx', 'vals', 'colPtr', 'rowIdx', 'cscVals', 'next', 'op0', 'op1', 'op2', 'op3'])
      out.add(`${w}_${s}`);
  }
  return out;
}

const LOOP_LOCAL = /^(acc|p|q|v|r)\d+$/;

const C_SOURCE = /\.(cu|h|cpp|hpp)$/;

/** Generated C++ files of a project that hold names a program gives (not the verbatim-shipped headers). */
function generatedSources(files: ProjectFiles, shipped: RegExp): [string, string][] {
  return [...files]
    .filter(([f, t]) => C_SOURCE.test(f) && !shipped.test(f) && typeof t === 'string')
    .map(([f, t]) => [f, t as string]);
}

/** Identifiers that could name something in a .dy program and that the emitters would print unchanged. */
function usable(t: string): boolean {
  return /^[A-Za-z][A-Za-z0-9_]*$/.test(t) && !t.includes('__') && !t.endsWith('_') && t !== 'kernel' && t !== 'repeat';
}

export interface GeneratorNames {
  /** Identifiers the CUDA generator prints where a program's names are in scope (kernels, stubs, header, ABI; shipped macros). */
  cuda: string[];
  /** Locals the loop IR introduces (the emitter prints them unchanged). */
  loopLocals: string[];
  /** Identifiers of the two checking drivers (a program's names reach them as struct fields and strings). */
  drivers: string[];
  /** Names whose HLS spelling (b_, v_, s_ prefixed) is an identifier the HLS generator prints. */
  hls: string[];
}

/** What the generators print for every example, minus what comes from the examples' own names. */
export async function generatorNames(): Promise<GeneratorNames> {
  const cuda = new Set<string>();
  const drivers = new Set<string>();
  const hlsIds = new Set<string>();
  const user = new Set<string>();
  const examples = readdirSync(join(ROOT, 'examples')).filter((f) => f.endsWith('.dy'));
  for (const e of examples) {
    const file = join(ROOT, 'examples', e);
    for (const u of userForms(readFileSync(file, 'utf8'))) user.add(u);
    const { program } = compileProgram(file);
    for (const [f, t] of generatedSources(emitCuda(program), /^emu\/|dype_abi\.h$/))
      cppIdentifiers(t, f.startsWith('dype_') ? drivers : cuda);
    for (const [, t] of generatedSources(await emitHlsProject(program), /^csim\//)) cppIdentifiers(t, hlsIds);
  }
  // Macros of the shipped headers are in every unit's scope; their other names are in their own namespaces.
  const emu = readFileSync(join(ROOT, 'codegen/cuda/emu/cuda_runtime_api.h'), 'utf8');
  for (const m of emu.matchAll(/^\s*#\s*define\s+([A-Za-z_][A-Za-z0-9_]*)/gm)) cuda.add(m[1]!);
  // A C++ keyword or a dy_ name is renamed by the emitters' mangling whatever the generators print (emit.test.ts).
  const keep = (t: string): boolean =>
    usable(t) && !user.has(t) && !/^(u|dy|dype)_/i.test(t) && !LANGUAGE_RESERVED.has(t);
  // Locals of the loop IR (acc0, p0) are the lowering's names: it keeps them apart from a program's (ir/loops-lower.ts).
  const cudaList = [...cuda].filter((t) => keep(t) && !LOOP_LOCAL.test(t)).sort();
  const loopLocals = [...cuda].filter((t) => keep(t) && LOOP_LOCAL.test(t)).sort();
  const hls = new Set<string>();
  for (const t of hlsIds) {
    const m = /^[bvs]_(.+)$/.exec(t);
    if (m && keep(m[1]!)) hls.add(m[1]!);
  }
  const driverList = [...drivers].filter((t) => keep(t) && !cuda.has(t)).sort();
  return { cuda: cudaList, loopLocals, drivers: driverList, hls: [...hls].sort() };
}

/**
 * A program in which every name takes each role: a kernel of `chunk` names has
 * one sparse matrix, dims, index variables, a result, dense parameters and
 * scalar parameters; a second round of kernels swaps the dense and scalar
 * roles and moves the names of the fixed slots along.
 */
export function namedProgram(names: readonly string[], rounds: readonly (0 | 1)[] = [0, 1], chunk = 24): string {
  const kernels: string[] = [];
  const used = new Set<string>();
  for (const shift of rounds) {
    for (let c = 0; c < names.length; c += chunk) {
      const group = names.slice(c, c + chunk);
      while (group.length < 8) group.push(`zpad${group.length}`);
      const rot = shift === 0 ? group : [...group.slice(6), ...group.slice(0, 6)];
      const [k, d1, d2, r, i, j, ...rest] = rot as [string, string, string, string, string, string, ...string[]];
      const kname = used.has(k) ? `zk${shift}_${c}` : k;
      used.add(kname);
      const dense = rest.filter((_, n) => n % 2 === shift);
      const scalars = rest.filter((_, n) => n % 2 !== shift);
      if (dense.length === 0) dense.push(`zd${c}`);
      const params = [
        `zA: csr<f32>[${d1}, ${d2}]`,
        ...dense.map((p) => `${p}: dense<f32>[${d2}]`),
        ...scalars.map((s) => `${s}: f32`),
      ];
      const sum = dense.map((p) => `${p}[${j}]`).join(' + ');
      const scale = scalars.length > 0 ? `${scalars.join(' * ')} * ` : '';
      kernels.push(
        `kernel ${kname}(${params.join(', ')}) -> (${r}: dense<f32>[${d1}]) {\n  ${r}[${i}] = ${scale}zA[${i}, ${j}] * (${sum});\n}\n`,
      );
    }
  }
  return kernels.join('\n');
}

/** Writes a program's source into dir and returns its path. */
export function writeProgram(dir: string, name: string, source: string): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.dy`);
  writeFileSync(file, source);
  return file;
}
