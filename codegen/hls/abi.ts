/**
 * The native ABI library of an HLS project (host/<program>_fpga_abi.cpp,
 * built by `make csim-lib` and `make xrt-lib`): per op, the entry of its
 * table (kernel, op id, FPGA implementation, buffer and size counts, whether
 * a row range may clamp it) and the wrapper that reads launch()'s buffers
 * and sizes (checked against the caller's device and allocations) and calls
 * the op's launch function. The state and checks behind it are static
 * (hls-templates/host/dype_abi_lib.h); the contract is
 * codegen/native/dype_abi.h, shipped verbatim.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { LoopFunc } from '../../ir/loops.js';
import { fpgaImplOfDesign } from '../../runtime/catalogue/names.js';
import type { WasmManifest } from '../../runtime/wasm/manifest.js';
import { cppType } from './cpp-expr.js';
import { bufName, varName, type BuildContext } from './kernel-vm.js';
import type { KernelVM } from './view-model.js';

export interface AbiOpVM {
  name: string;
  kernel: string;
  op: string;
  impl: string;
  /** Comment: the buffers and sizes launch() takes, in order. */
  signature: string;
  /** Body of the wrapper: sizes, dims, checked buffers, the call. */
  body: string[];
  /** Initializer of the op's dype::abi::Op. */
  entry: string;
}

/** codegen/native/dype_abi.h, found from the templates folder (the repository root is its parent). */
export function abiHeader(templates: string): string {
  return readFileSync(join(dirname(templates), 'codegen', 'native', 'dype_abi.h'), 'utf8');
}

/**
 * A dim the launch function needs but launch()'s sizes do not carry (say
 * the length of `x` in an SpMV): a dim of the op's sparse operand is its
 * rows or cols figure; otherwise it is read from the extent of a dense
 * buffer whose other dims are known. Undefined when neither works.
 */
function extraDim(d: string, f: LoopFunc, m: WasmManifest, known: Set<string>): string | undefined {
  const sparse = f.buffers.find((b) => b.role !== 'dense' && b.role !== 'scalar');
  if (sparse) {
    const shape = m.values[m.roots[sparse.of] ?? sparse.of]?.shape ?? [];
    if (shape[0] === d) return 'sp_rows';
    if (shape[1] === d) return 'sp_cols';
  }
  for (const [i, b] of f.buffers.entries()) {
    if (b.role !== 'dense') continue;
    const shape = m.values[b.of]?.shape ?? [];
    const others = shape.filter((x) => x !== d);
    if (shape.length - others.length !== 1 || !others.every((x) => typeof x === 'number' || known.has(x))) continue;
    const per =
      others.map((x) => (typeof x === 'number' ? `size_t(${x})` : `size_t(${varName(x)})`)).join(' * ') || 'size_t(1)';
    return `c.dim_from_extent(${i}, sizeof(${cppType(b.elem)}), ${per}, "${d}")`;
  }
  return undefined;
}

export function abiOpVM(
  f: LoopFunc,
  vm: KernelVM,
  m: WasmManifest,
  ctx: BuildContext,
  extra: readonly string[],
): AbiOpVM {
  const op = ctx.manifestOp(f);
  const S = f.sizes.length;
  const impl = fpgaImplOfDesign(vm.design);
  const body: string[] = [];
  f.sizes.forEach((s, i) => body.push(`const int32_t ${varName(s)} = c.size(${i});`));
  body.push(
    `const int32_t sp_rows = c.size(${S});`,
    `const int32_t sp_cols = c.size(${S + 1});`,
    `const int32_t sp_nnz = c.size(${S + 2});`,
  );
  const known = new Set(f.sizes);
  let missing: string | undefined;
  for (const d of extra) {
    const e = extraDim(d, f, m, known);
    if (e === undefined) {
      missing = d;
      break;
    }
    body.push(`const int32_t ${varName(d)} = ${e};`);
    known.add(d);
  }
  if (missing !== undefined) {
    body.length = 0;
    body.push(
      '(void)c;',
      `dype::abi::raise(DYPE_ERR_UNSUPPORTED, "launch ${f.name}: its dim '${missing}' is neither a size, a dim of its sparse operand, nor the length of a buffer");`,
    );
  } else {
    // The top loop reads the balancing pointers at every row it runs: it must not run past the pattern's.
    if (op.balanceBy && typeof op.splitRange === 'string') {
      const figure = op.balanceBy.layout === 'csr' ? 'sp_rows' : 'sp_cols';
      body.push(
        `if (${varName(op.splitRange)} > ${figure}) dype::abi::raise(DYPE_ERR_BAD_SIZE, std::string("launch ${f.name}: it runs ") + std::to_string(${varName(op.splitRange)}) + " rows over a pattern of " + std::to_string(${figure}));`,
      );
    }
    f.buffers.forEach((b, i) =>
      body.push(`${cppType(b.elem)}* ${bufName(b.name)} = c.buffer<${cppType(b.elem)}>(${i}, ${ctx.sizeOf(f, b)});`),
    );
    const args = [
      ...f.buffers.map((b) => bufName(b.name)),
      ...f.sizes.map(varName),
      ...extra.map(varName),
      'sp_rows',
      'sp_cols',
      'sp_nnz',
      'c.at',
    ];
    body.push(`launch_${f.name}(${args.join(', ')});`);
    // Its result is new: a later launch must not reuse what it derived from the old one.
    const out = f.buffers.findIndex((b) => b.name === f.out);
    if (out < 0) throw new Error(`hls: op ${f.name} writes ${f.out}, which is none of its buffers`);
    body.push(`c.wrote(${out});`);
  }
  return {
    name: f.name,
    kernel: ctx.kernel,
    op: f.op,
    impl,
    signature: `buffers ${f.buffers.map((b) => b.name).join(', ')}; sizes ${[...f.sizes, 'rows', 'cols', 'nnz'].join(', ')}`,
    body,
    entry: `{"${ctx.kernel}", "${f.op}", "${impl}", ${f.buffers.length}, ${S}, ${op.splittable}, &abi_${f.name}}`,
  };
}
