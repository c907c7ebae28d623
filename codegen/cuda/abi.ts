/**
 * The native ABI (codegen/native/dype_abi.h) of a CUDA project, as the view
 * of templates/abi.cu.hbs: one table row per op and implementation (a
 * launch handle is its index), and per row a small function that turns the
 * ABI's untyped buffers and sizes into the stub's typed arguments. Buffers
 * and sizes are in the manifest's order (= the LoopFunc's), followed by the
 * pattern figures of the op's sparse operand (runtime/native/abi.ts
 * PATTERN_FIGURES); a variant's extra parameters (variant.ts ExtraParam: the
 * entry count, the longest row) are figures from there.
 */
import { abiPrefix, ABI_FUNCTIONS, ABI_VERSION, NATIVE_BACKENDS, PATTERN_FIGURES } from '../../runtime/native/abi.js';
import { storageType } from './cprint.js';
import type { KernelPlan } from './host.js';
import { cString } from './names.js';

export interface AbiView {
  prefix: string;
  abiVersion: string;
  backendReal: string;
  backendEmu: string;
  programName: string;
  programHash: string;
  launchers: string;
  impls: string;
  ops: string;
  maxSizes: string;
}

/** The ABI's exported symbols of program `prog` (so that no kernel stub can take one of their names). */
export function abiSymbols(prog: string): string[] {
  return Object.keys(ABI_FUNCTIONS).map((f) => `${abiPrefix(prog, 'cuda')}${f}`);
}

export function abiView(prog: string, hash: string, plans: readonly KernelPlan[]): AbiView {
  const launchers: string[] = [];
  const impls: string[] = [];
  const ops: string[] = [];
  const nf = PATTERN_FIGURES.length;
  let maxSizes: number = nf;
  for (const plan of plans) {
    for (const op of plan.ops) {
      const f = op.f;
      const ns = f.sizes.length;
      maxSizes = Math.max(maxSizes, ns + nf);
      const bufs = f.buffers.map(
        (b, n) => `(${op.code.written.has(b.name) ? '' : 'const '}${storageType(b.elem)}*)b[${n}]`,
      );
      const sizes = f.sizes.map((_, n) => `s[${n}]`);
      ops.push(
        `{${cString(plan.kernel.name)}, ${cString(f.op)}, ${cString(op.variants.map((v) => v.name).join(','))}},`,
      );
      op.variants.forEach((v, vi) => {
        const h = impls.length;
        const args = [
          ...bufs,
          ...sizes,
          ...v.extra.map((e) => `s[${ns + PATTERN_FIGURES.indexOf(e.figure)}]`),
          ...(op.splittable ? ['rb', 're'] : []),
          'stream',
        ];
        launchers.push(
          `int launch_${h}(void* const* b, const int* s, int rb, int re, cudaStream_t stream) {`,
          ...(op.splittable ? [] : ['  (void)rb;', '  (void)re;']),
          ...(f.buffers.length === 0 ? ['  (void)b;'] : []),
          ...(ns === 0 && v.extra.length === 0 ? ['  (void)s;'] : []),
          `  return ${op.symbols[vi]!}(${args.join(', ')});`,
          '}',
        );
        impls.push(
          `{${cString(plan.kernel.name)}, ${cString(f.op)}, ${cString(v.name)}, ${f.buffers.length}, ${ns + nf}, ${op.splittable}, launch_${h}},`,
        );
      });
    }
  }
  return {
    prefix: abiPrefix(prog, 'cuda'),
    abiVersion: String(ABI_VERSION),
    backendReal: cString(NATIVE_BACKENDS.cuda.real),
    backendEmu: cString(NATIVE_BACKENDS.cuda.emulated),
    programName: cString(prog),
    programHash: cString(hash),
    launchers: launchers.join('\n'),
    impls: impls.map((l) => `    ${l}`).join('\n'),
    ops: ops.map((l) => `    ${l}`).join('\n'),
    maxSizes: String(maxSizes),
  };
}
