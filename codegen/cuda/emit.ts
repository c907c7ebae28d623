/**
 * The CUDA project of a compiled program: `<prog>.cu`, `<prog>_cuda.h`,
 * `<prog>_abi.cu` (the native ABI over the stubs), the checking drivers
 * `dype_check.cpp` (over the stubs) and `dype_abi_check.cpp` (over the ABI)
 * with what they share (`dype_check_common.h`), `Makefile`,
 * `CMakeLists.txt` and `README.md`, rendered from view models through
 * templates/*.hbs, and, shipped as they are, the ABI's header (`dype_abi.h`)
 * and the CPU emulation of the CUDA runtime (`emu/cuda_runtime_api.h`).
 * Each kernel's host side comes from the wasm manifest (params, results,
 * value types, pattern roots, ops, program order with repeats); each op's
 * device code from its loop IR.
 */
import { wasmManifest } from '../wasm/emit.js';
import type { CompiledProgram } from '../project.js';
import { checkBody } from './driver.js';
import { abiCheckBody } from './abi-check.js';
import { abiPrefix } from '../../runtime/native/abi.js';
import { kernelView, planKernel, type KernelPlan } from './host.js';
import { cString, commentText, cudaDiagnostic, symbolPart } from './names.js';
import { render, shipped } from './templates.js';
import { abiSymbols, abiView } from './abi.js';
import { programHash } from '../native/hash.js';

const lines = (ls: readonly string[], ind = ''): string => ls.map((l) => (l === '' ? '' : ind + l)).join('\n');

export function cudaPlans(program: CompiledProgram): { prog: string; plans: KernelPlan[] } {
  const file = program.file;
  const prog = symbolPart({ kernel: program.module.kernels[0]?.name ?? '?', file }, 'program (file)', program.name);
  // The ABI's functions share the library's symbol space with the stubs.
  const symbols = new Set<string>(abiSymbols(prog));
  const plans = program.module.kernels.map((k) => {
    if (!k.loops) throw new Error(`cuda emitter: kernel ${k.name} has no loop IR; run the lower-kernels pass first`);
    const ctx = { kernel: k.name, file, ...(k.span ? { span: k.span } : {}) };
    symbolPart(ctx, 'kernel', k.name);
    let manifest;
    try {
      manifest = wasmManifest(k, [], false);
    } catch (e) {
      throw cudaDiagnostic('DY6103', `kernel '${k.name}': ${(e as Error).message}`, k.span, file);
    }
    return planKernel(prog, k, manifest, ctx, symbols);
  });
  return { prog, plans };
}

export function emitCuda(program: CompiledProgram): Map<string, string> {
  const { prog, plans } = cudaPlans(program);
  const file = commentText(program.file);
  const views = plans.map(kernelView);
  const kernels = views.map((v, n) => ({
    name: v.name,
    prefix: v.prefix,
    signature: commentText(v.signature),
    device: lines(v.device),
    stubs: v.stubs.map((s) => ({
      variant: s.variant,
      note: s.note,
      signature: s.signature,
      body: lines(s.body, '  '),
      doc: s.doc.map(commentText).join('\n *  '),
    })),
    dispatch: lines(v.dispatch),
    opCases: lines(
      plans[n]!.ops.map((_, i) => `case ${i}: return dy_${v.prefix.slice('dype_'.length)}_op${i}(b, variant, stream);`),
      '    ',
    ),
    opCount: String(plans[n]!.ops.length),
    variantCounts: lines(
      plans[n]!.ops.map((op, i) => `case ${i}: return ${op.variants.length};`),
      '    ',
    ),
    variantNames: lines(
      plans[n]!.ops.flatMap((op, i) => op.variants.map((x, vi) => `case ${i * 64 + vi}: return ${cString(x.name)};`)),
      '    ',
    ),
    opNames: lines(
      plans[n]!.ops.map((op, i) => `case ${i}: return ${cString(op.f.op)};`),
      '    ',
    ),
    runBuffers: lines(v.runBuffers, '  '),
    run: lines(v.run, '  '),
    buffersStruct: lines(v.buffersStruct, '  '),
    argsStruct: lines(v.argsStruct, '  '),
    opTable: lines(v.opTable.map(commentText), ' *   '),
    body: lines(checkBody(plans[n]!)),
    abiBody: lines(abiCheckBody(plans[n]!)),
  }));
  for (const p of plans)
    for (const op of p.ops)
      if (op.variants.length > 64)
        throw cudaDiagnostic(
          'DY6103',
          `kernel '${p.kernel.name}': op ${op.f.op} has more than 64 variants`,
          p.kernel.span,
          program.file,
        );
  const view = {
    file,
    prog,
    guard: prog.toUpperCase(),
    kernels,
    kernelNames: plans.map((p) => cString(p.kernel.name)).join(', '),
    kernelList: commentText(plans.map((p) => p.kernel.name).join(', ')),
    dispatch: lines(
      plans.map((p) => `if (k == ${cString(p.kernel.name)}) failures = check_${p.kernel.name}(cli, csv, stream);`),
      '    ',
    ),
    abiDispatch: lines(
      plans.map((p) => `if (k == ${cString(p.kernel.name)}) failures = abi_check_${p.kernel.name}(cli);`),
      '    ',
    ),
    prefix: abiPrefix(prog, 'cuda'),
  };
  const readmeView = { file, prog, kernels: views.map((v) => ({ signature: v.signature, opTable: v.opTable })) };
  return new Map([
    [`${prog}.cu`, render('program.cu', view)],
    [`${prog}_cuda.h`, render('header.h', view)],
    ['dype_check.cpp', render('check.cpp', view)],
    ['dype_abi_check.cpp', render('abi_check.cpp', view)],
    ['dype_check_common.h', render('check_common.h', { file })],
    ['Makefile', render('Makefile', view)],
    ['CMakeLists.txt', render('CMakeLists.txt', view)],
    ['README.md', render('README.md', readmeView)],
    [`${prog}_abi.cu`, render('abi.cu', { file, prog, ...abiView(prog, programHash(program.module), plans) })],
    ['dype_abi.h', shipped('../native/dype_abi.h')],
    ['emu/cuda_runtime_api.h', shipped('emu/cuda_runtime_api.h')],
  ]);
}
