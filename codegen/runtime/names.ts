/**
 * Names the runtime target derives from the program, checked before any
 * guard is built (DY6304): the guards' feature keys (`A.rows`, `dim.n`,
 * `scalar.alpha`, runtime/guards/features.ts) are read by prefix, so a
 * sparse parameter named `dim` or `scalar` would have its features read as
 * dims or scalars; the TypeScript runtime names each kernel's exports by
 * its Pascal and upper-case forms (`foo_bar` and `fooBar` both give
 * `createFooBarRuntime`); and the C++ dispatch header writes each feature
 * key as a struct member with `.` as `_` (`dim_x.rows` and `dim.x_rows`
 * both give `dim_x_rows`).
 */
import { DiagnosticError, fileSpan, makeDiagnostic, type Diagnostic } from '../../ir/diagnostics.js';
import type { Kernel } from '../../ir/module.js';
import { SPARSE_FIELDS } from '../../runtime/guards/features.js';
import type { CompiledProgram } from '../project.js';

/** A kernel's exports in the generated TypeScript: `createGcnRuntime`, `GcnInputs` (Pascal case). */
export const pascal = (s: string): string => s.replace(/(^|_)([a-z0-9])/gi, (_, __, c: string) => c.toUpperCase());

/** A feature key as a C++ struct member: `A.rowLenCv` -> `A_rowLenCv`. */
export const cppIdent = (key: string): string => key.replace(/[^A-Za-z0-9_]/g, '_');

/** The prefixes of the guards' dim and scalar keys: no sparse parameter may be named as one. */
const KEY_FAMILIES = ['dim', 'scalar'];

/** Every feature key a binding of the kernel can have (featureKeys of runtime/guards/features.ts). */
function possibleKeys(k: Kernel): string[] {
  const sparse = k.params.filter((p) => p.type.format !== 'dense').map((p) => p.name);
  const dims = [...new Set(k.params.flatMap((p) => p.type.shape.flatMap((d) => (d.kind === 'sym' ? [d.name] : []))))];
  const scalars = k.params.filter((p) => p.type.format === 'dense' && p.type.shape.length === 0).map((p) => p.name);
  return [
    ...sparse.flatMap((n) => SPARSE_FIELDS.map((f) => `${n}.${f}`)),
    ...dims.map((d) => `dim.${d}`),
    ...scalars.map((s) => `scalar.${s}`),
  ];
}

/** DY6304 for a sparse parameter named as a family of the guards' feature keys (dim.NAME, scalar.NAME). */
export function checkFeatureNames(program: CompiledProgram): void {
  const diags: Diagnostic[] = [];
  for (const k of program.module.kernels)
    for (const p of k.params)
      if (p.type.format !== 'dense' && KEY_FAMILIES.includes(p.name))
        diags.push(
          makeDiagnostic(
            'DY6304',
            `sparse parameter '${p.name}' of kernel ${k.name}: its features would be named ${p.name}.rows, ${p.name}.nnz, ..., which the guards read as ${p.name === 'dim' ? 'dims' : 'scalars'} (${p.name}.NAME); rename the parameter`,
            p.span ?? k.span ?? fileSpan(program.file),
          ),
        );
  if (diags.length > 0) throw new DiagnosticError(diags);
}

/** DY6304 for two kernels whose generated TypeScript names, or two feature keys whose C++ members, would be the same. */
export function checkGeneratedNames(program: CompiledProgram): void {
  const diags: Diagnostic[] = [];
  const seen = new Map<string, Kernel>();
  for (const k of program.module.kernels)
    for (const [form, name] of [
      ['Pascal', pascal(k.name)],
      ['upper-case', k.name.toUpperCase()],
    ] as const) {
      const other = seen.get(`${form}:${name}`);
      if (other)
        diags.push(
          makeDiagnostic(
            'DY6304',
            `kernels ${other.name} and ${k.name} have the same ${form} name ${name} in the generated runtime (${form === 'Pascal' ? `create${name}Runtime, ${name}Inputs` : `${name}_MANIFEST, ${name}_GUARDS`}); rename one of them`,
            k.span ?? fileSpan(program.file),
          ),
        );
      else seen.set(`${form}:${name}`, k);
    }
  for (const k of program.module.kernels) {
    const members = new Map<string, string>();
    for (const key of possibleKeys(k)) {
      const m = cppIdent(key);
      const other = members.get(m);
      if (other !== undefined && other !== key)
        diags.push(
          makeDiagnostic(
            'DY6304',
            `kernel ${k.name}: features ${other} and ${key} would both be the member ${m} of the C++ dispatch header's feature struct; rename a parameter or dim`,
            k.span ?? fileSpan(program.file),
          ),
        );
      else members.set(m, key);
    }
  }
  if (diags.length > 0) throw new DiagnosticError(diags);
}
