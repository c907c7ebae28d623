/**
 * Host side of one kernel program: where every loop-IR buffer lives
 * (storage planning from the wasm manifest: params, results, temporaries,
 * `X.next` buffers, sparse temporaries sharing their root's pattern arrays),
 * the buffers/args structs, one extern "C" stub per op and variant, and the
 * program stubs that run the ops in program order with `repeat` loops on the
 * host.
 */
import type { LElem, LoopFunc } from '../../ir/loops.js';
import type { Kernel } from '../../ir/module.js';
import type { WasmManifest, WasmOp, WasmStep, WasmValueType } from '../../runtime/wasm/manifest.js';
import { cType, FuncNames, storageType } from './cprint.js';
import { cudaDiagnostic, Scope, symbolPart, type NameContext } from './names.js';
import { topLoop } from './nest.js';
import { figureSize, OpCode, variantsOf, type Variant } from './variants.js';

export interface Storage {
  /** Loop-IR buffer name it backs (pattern arrays under their root's name). */
  key: string;
  c: string;
  elem: LElem;
  /** Element count as C over the buffers struct `b`. */
  count: string;
  kind: 'param' | 'result' | 'temp';
  /** The value it holds (part of), and what part. */
  of: string;
  what: string;
}

export interface OpPlan {
  f: LoopFunc;
  code: OpCode;
  variants: Variant[];
  /** extern "C" symbol per variant. */
  symbols: string[];
  /** Storage key of each buffer in LoopFunc order. */
  storage: string[];
  /** Size struct field of each size in LoopFunc order. */
  sizes: string[];
  /** The manifest's `splittable`: its stubs take a row range [dy_row_begin, dy_row_end). */
  splittable: boolean;
}

export interface KernelPlan {
  kernel: Kernel;
  prefix: string;
  manifest: WasmManifest;
  storages: Map<string, Storage>;
  /** Dim symbol or pattern figure (nnz(X), maxrow(X), maxcol(X): variant.ts figureSize) -> struct field, in a stable order. */
  sizes: Map<string, string>;
  ops: OpPlan[];
}

const SUFFIX: Record<string, string> = { rowPtr: 'rowPtr', colIdx: 'colIdx', colPtr: 'colPtr', rowIdx: 'rowIdx' };

function dimsOf(t: WasmValueType): (string | number)[] {
  return t.shape;
}

export function planKernel(
  prog: string,
  k: Kernel,
  manifest: WasmManifest,
  ctx: NameContext,
  symbols: Set<string>,
): KernelPlan {
  const loops = k.loops!;
  const kname = symbolPart(ctx, 'kernel', k.name);
  const prefix = `dype_${prog}_${kname}`;
  const fields = new Scope(ctx, 'buffers and sizes of the program stub');
  const sizes = new Map<string, string>();
  const values = manifest.values;
  const addSize = (s: string): string => {
    let c = sizes.get(s);
    if (c === undefined) {
      c = fields.add(s);
      sizes.set(s, c);
    }
    return c;
  };
  const dimExpr = (d: string | number): string => (typeof d === 'number' ? `${d}` : `b->${addSize(d)}`);
  for (const v of Object.keys(values).sort()) for (const d of dimsOf(values[v]!)) if (typeof d === 'string') addSize(d);
  for (const r of [...new Set(Object.values(manifest.roots))].sort()) addSize(`nnz(${r})`);
  const isParam = new Set(k.params.map((p) => p.name));
  const isResult = new Set(k.results.map((r) => r.name));
  const storages = new Map<string, Storage>();
  const product = (shape: (string | number)[]): string =>
    shape.length === 0 ? '1' : shape.map((d) => `(size_t)${dimExpr(d)}`).join(' * ');
  const rootOf = (v: string): string => {
    const r = manifest.roots[v];
    if (r === undefined)
      throw cudaDiagnostic('DY6103', `kernel '${k.name}': sparse value '${v}' has no pattern root`, ctx.span, ctx.file);
    return r;
  };
  const written = new Map<string, Set<string>>();
  for (const f of loops)
    for (const b of f.buffers)
      if (b.role === 'values' && b.name === f.out)
        (written.get(b.of) ?? written.set(b.of, new Set()).get(b.of)!).add(b.layout ?? 'csr');
  const storageOf = (b: LoopFunc['buffers'][number]): string => {
    const pattern = SUFFIX[b.role];
    if (pattern !== undefined) {
      const r = rootOf(b.of);
      const key = `${r}.${pattern}`;
      if (!storages.has(key)) {
        const t = values[r]!;
        const count =
          b.role === 'rowPtr'
            ? `(${product([t.shape[0]!])} + 1)`
            : b.role === 'colPtr'
              ? `(${product([t.shape[1]!])} + 1)`
              : `(size_t)b->${addSize(`nnz(${r})`)}`;
        storages.set(key, {
          key,
          c: fields.add(key),
          elem: 'index',
          count,
          kind: 'param',
          of: r,
          what: `${b.layout ?? ''} ${pattern}`.trim(),
        });
      }
      return key;
    }
    const key = b.name;
    if (!storages.has(key)) {
      const next = key.endsWith('.next');
      const t = values[b.of];
      if (!t)
        throw cudaDiagnostic(
          'DY6103',
          `kernel '${k.name}': buffer '${b.name}' holds unknown value '${b.of}'`,
          ctx.span,
          ctx.file,
        );
      const kind = next ? 'temp' : isParam.has(b.of) ? 'param' : isResult.has(b.of) ? 'result' : 'temp';
      let count: string;
      if (b.role === 'values') {
        const layout = b.layout ?? 'csr';
        if (!isParam.has(b.of) && !(written.get(b.of)?.has(layout) ?? false))
          throw cudaDiagnostic(
            'DY6103',
            `kernel '${k.name}': sparse value '${b.of}' is read in ${layout} order but computed in ${[...(written.get(b.of) ?? [])].join(', ') || 'no'} order; the CUDA target does not permute sparse temporaries between layouts`,
            ctx.span,
            ctx.file,
          );
        count = `(size_t)b->${addSize(`nnz(${rootOf(b.of)})`)}`;
      } else count = product(dimsOf(t));
      storages.set(key, {
        key,
        c: fields.add(key),
        elem: b.elem,
        count,
        kind,
        of: b.of,
        what: next ? 'next value (double buffer)' : b.role === 'values' ? `${b.layout ?? 'csr'} values` : b.role,
      });
    }
    return key;
  };
  const ops: OpPlan[] = loops.map((f) => {
    const names = new FuncNames(f, ctx);
    const op = symbolPart(ctx, 'op', f.op);
    const code = new OpCode(f, names, `${kname}_${op}`);
    const variants = variantsOf(code);
    if (variants.length === 0)
      throw cudaDiagnostic(
        'DY6103',
        `kernel '${k.name}': op ${f.op} (${f.result}) has a loop nest no GPU schedule applies to`,
        ctx.span,
        ctx.file,
      );
    const syms = variants.map((v) => `${prefix}_${op}_${v.cname}`);
    for (const s of syms) {
      if (symbols.has(s))
        throw cudaDiagnostic(
          'DY6102',
          `kernel '${k.name}': the exported symbol '${s}' would be defined twice; rename the kernel`,
          ctx.span,
          ctx.file,
        );
      symbols.add(s);
    }
    const splittable = manifest.ops.find((m) => m.op === f.op)?.splittable ?? false;
    // The variants clamp the nest's top loop; the manifest's flag and that loop must be the same thing.
    if (splittable !== (topLoop(f) !== undefined))
      throw new Error(
        `cuda emitter: kernel ${k.name}: op ${f.op} is ${splittable ? '' : 'not '}splittable in the manifest but its nest says otherwise`,
      );
    // A variant's figures of the sparse operand (the entry count, the longest row) are size fields of the program.
    const ptr = f.buffers.find((x) => x.role === 'rowPtr' || x.role === 'colPtr');
    for (const e of variants.flatMap((v) => v.extra)) {
      if (!ptr) throw new Error(`cuda emitter: kernel ${k.name}: op ${f.op} takes ${e.name} but walks no pointers`);
      addSize(figureSize(e.figure, rootOf(ptr.of)));
    }
    return {
      f,
      code,
      variants,
      symbols: syms,
      storage: f.buffers.map(storageOf),
      sizes: f.sizes.map(addSize),
      splittable,
    };
  });
  for (const s of [`${prefix}_run`, `${prefix}_run_buffers`]) {
    if (symbols.has(s))
      throw cudaDiagnostic(
        'DY6102',
        `kernel '${k.name}': the exported symbol '${s}' would be defined twice; rename the kernel`,
        ctx.span,
        ctx.file,
      );
    symbols.add(s);
  }
  // Every param and result has storage even when no op reads it (the args struct is the kernel's signature).
  for (const p of [...k.params, ...k.results]) {
    const t = values[p.name]!;
    const kind = isParam.has(p.name) ? 'param' : 'result';
    if (t.format === 'dense') {
      if (!storages.has(p.name))
        storages.set(p.name, {
          key: p.name,
          c: fields.add(p.name),
          elem: t.dtype,
          count: product(t.shape),
          kind,
          of: p.name,
          what: t.shape.length === 0 ? 'scalar' : 'dense',
        });
    } else if (kind === 'result') {
      const key = `${p.name}.vals`;
      if (!storages.has(key))
        storages.set(key, {
          key,
          c: fields.add(key),
          elem: t.dtype,
          count: `(size_t)b->${addSize(`nnz(${rootOf(p.name)})`)}`,
          kind,
          of: p.name,
          what: 'csr values',
        });
    }
  }
  return { kernel: k, prefix, manifest, storages, sizes, ops };
}

/** What a pattern figure's size field holds (variant.ts figureSize), for the header. */
const FIGURE_NOTE: Record<string, string> = {
  nnz: ': stored entries',
  maxrow: ': the most entries in one row, or any larger figure; 0: not known (long rows then get their own pass)',
  maxcol: ': the most entries in one column, or any larger figure; 0: not known (long columns then get their own pass)',
};

/** `const T*` / `T*` declaration of a storage pointer. */
function ptrDecl(s: Storage, constant: boolean): string {
  return `${constant ? 'const ' : ''}${storageType(s.elem)}* ${s.c};`;
}

function typeText(t: WasmValueType): string {
  return `${t.format}<${t.dtype}>[${t.shape.join(', ')}]`;
}

export interface StubView {
  symbol: string;
  variant: string;
  note: string;
  signature: string;
  body: string[];
  doc: string[];
}

export interface KernelView {
  name: string;
  prefix: string;
  signature: string;
  device: string[];
  stubs: StubView[];
  buffersStruct: string[];
  argsStruct: string[];
  dispatch: string[];
  runBuffers: string[];
  run: string[];
  opTable: string[];
}

/** What an op writes of its out buffer when its rows are clamped (the manifest's splitWrites), for the stub's comment. */
function writesDoc(plan: KernelPlan, op: OpPlan): string {
  const m = manifestOp(plan, op);
  const out = op.code.names.buf(op.f.out).c;
  if (m.splitWrites === 'rows') return `it writes rows [dy_row_begin, dy_row_end) of ${out} and nothing else`;
  if (m.splitWrites === 'entries')
    return `it writes entries [ptr[dy_row_begin], ptr[dy_row_end]) of ${out} (ptr: the row pointers of ${m.balanceBy!.root}) and nothing else`;
  return `which elements of ${out} a range writes is not known, so it is not split across devices`;
}

export function manifestOp(plan: KernelPlan, op: OpPlan): WasmOp {
  const m = plan.manifest.ops.find((o) => o.op === op.f.op);
  if (!m) throw new Error(`cuda emitter: kernel ${plan.kernel.name}: op ${op.f.op} is not in the manifest`);
  return m;
}

function stubView(plan: KernelPlan, op: OpPlan, vi: number): StubView {
  const v = op.variants[vi]!;
  const params = [
    ...op.code.params(false),
    ...v.extra.map((e) => `${e.type} ${e.name}`),
    ...(op.splittable ? ['int dy_row_begin', 'int dy_row_end'] : []),
    'cudaStream_t stream',
  ];
  const signature = `int ${op.symbols[vi]!}(${params.join(', ')})`;
  const checks = op.f.sizes.map((s) => `if (${op.code.names.sizes.get(s)!} < 0) return DYPE_ERR_BAD_SIZE;`);
  const body = [...checks, ...v.launch, 'return dy_launch_status();'];
  const doc = [
    `${op.f.name}, ${v.name}: ${v.note}.`,
    `Buffers: ${op.f.buffers.map((b) => `${op.code.names.buf(b.name).c} (${b.role}${b.layout ? ` ${b.layout}` : ''} of ${b.of}, ${b.elem}${op.code.written.has(b.name) ? ', written' : ''})`).join(', ')}.`,
    `Sizes: ${op.f.sizes.map((s) => `${op.code.names.sizes.get(s)!} = ${s}`).join(', ') || 'none'}.${v.extra.map((e) => ` ${e.name}: ${e.doc}.`).join('')}`,
    ...(op.splittable
      ? [
          `Rows: only [dy_row_begin, dy_row_end) of the parallel loop over ${topLoop(op.f)!.var} run (dy_row_end < 0: to its end; 0, -1: all); ${writesDoc(plan, op)}.`,
        ]
      : []),
  ];
  return { symbol: op.symbols[vi]!, variant: v.name, note: v.note, signature, body, doc };
}

export function kernelView(plan: KernelPlan): KernelView {
  const { prefix, storages, sizes, ops, manifest } = plan;
  const device: string[] = [];
  const stubs: StubView[] = [];
  for (const op of ops) {
    device.push(
      `// ---- ${op.f.name} (op ${op.f.op}: ${op.f.result} -> ${op.f.out}); variants: ${op.variants.map((v) => v.name).join(', ')}`,
    );
    for (const v of op.variants) device.push(...v.device, '');
    op.variants.forEach((_, vi) => stubs.push(stubView(plan, op, vi)));
  }
  const all = [...storages.values()];
  const sizeFields = [...sizes.entries()].map(([s, c]) => `int ${c};  // ${s}${FIGURE_NOTE[s.split('(')[0]!] ?? ''}`);
  const buffersStruct = [
    ...all.map(
      (s) =>
        `${ptrDecl(s, false)}  // ${s.kind}: ${s.what} of ${s.of}, ${s.elem}, ${s.count.replace(/b->/g, '')} elements`,
    ),
    ...sizeFields,
  ];
  const argsStruct = [
    ...all
      .filter((s) => s.kind !== 'temp')
      .map(
        (s) =>
          `${ptrDecl(s, s.kind === 'param')}  // ${s.kind}: ${s.what} of ${s.of} (${typeText(manifest.values[s.of]!)})`,
      ),
    ...sizeFields,
  ];
  // Dispatch: one static function per op choosing the variant's stub.
  const dispatch: string[] = [];
  ops.forEach((op, n) => {
    dispatch.push(
      `static int dy_${prefix.slice('dype_'.length)}_op${n}(const ${prefix}_buffers* b, int variant, cudaStream_t stream) {`,
      '  switch (variant) {',
    );
    op.variants.forEach((v, vi) => {
      const args = [...op.storage.map((k) => `b->${storages.get(k)!.c}`), ...op.sizes.map((c) => `b->${c}`)];
      const ptr = op.f.buffers.find((x) => x.role === 'rowPtr' || x.role === 'colPtr');
      for (const e of v.extra) args.push(`b->${sizes.get(figureSize(e.figure, manifest.roots[ptr!.of]!))!}`);
      // The program runs every row.
      if (op.splittable) args.push('0', '-1');
      dispatch.push(`    case ${vi}: return ${op.symbols[vi]!}(${[...args, 'stream'].join(', ')});`);
    });
    dispatch.push('    default: return DYPE_ERR_BAD_VARIANT;', '  }', '}', '');
  });
  const opIndex = new Map(ops.map((op, n) => [op.f.op, n]));
  const steps = (list: readonly WasmStep[], ind: string, depth: number): string[] =>
    list.flatMap((s): string[] => {
      if (s.kind === 'repeat') {
        let count: string;
        if (typeof s.count === 'number') count = `${s.count}`;
        else {
          const c = sizes.get(s.count.param);
          if (c === undefined)
            throw cudaDiagnostic(
              'DY6103',
              `kernel '${plan.kernel.name}': repeat ${s.id} counts '${s.count.param}', which is not a dim the host knows`,
              plan.kernel.span,
            );
          count = `b->${c}`;
        }
        const it = `dy_it${depth}`;
        if (s.until) return untilLoop(s, s.until, it, count, ind, depth);
        return [
          `${ind}for (long long ${it} = 0; ${it} < ${count}; ++${it}) {`,
          ...steps(s.body, `${ind}  `, depth + 1),
          `${ind}}`,
        ];
      }
      const n = opIndex.get(s.op)!;
      const op = ops[n]!;
      const out = [
        `${ind}if ((dy_rc = dy_${prefix.slice('dype_'.length)}_op${n}(b, variants ? variants[${n}] : 0, stream)) != 0) return dy_rc;`,
      ];
      if (op.f.out.endsWith('.next')) {
        const from = storages.get(op.storage[op.f.buffers.findIndex((x) => x.name === op.f.out)]!)!;
        const to = storages.get(op.f.out.slice(0, -'.next'.length))!;
        if (!to)
          throw cudaDiagnostic(
            'DY6103',
            `kernel '${plan.kernel.name}': op ${op.f.op} writes ${op.f.out} but nothing holds ${op.f.out.slice(0, -5)}`,
            plan.kernel.span,
          );
        // The op writes all of X.next from X: the two swap roles (no copy per trip).
        swapped.set(to.c, to);
        out.push(
          `${ind}{ ${storageType(to.elem)}* dy_t = b->${to.c}; dy_l.${to.c} = b->${from.c}; dy_l.${from.c} = dy_t; }`,
        );
      }
      return out;
    });
  /**
   * A convergence loop: the watched value is copied aside on the device before each trip and
   * dy_until_change (program.cu's helpers) compares it there; the host reads back two doubles per
   * trip, never the value.
   */
  const untilLoop = (
    s: Extract<WasmStep, { kind: 'repeat' }>,
    u: { value: string; within?: number },
    it: string,
    count: string,
    ind: string,
    depth: number,
  ): string[] => {
    const v = storages.get(u.value);
    if (!v)
      throw cudaDiagnostic(
        'DY6103',
        `kernel '${plan.kernel.name}': repeat ${s.id} watches '${u.value}', which no device buffer holds`,
        plan.kernel.span,
      );
    const t = storageType(v.elem);
    const [prev, chg, h] = [`dy_prev${depth}`, `dy_chg${depth}`, `dy_h${depth}`];
    const stop = u.within === undefined ? `${h}[1] == 0` : `${h}[0] <= ${cDouble(u.within)}`;
    const i2 = `${ind}  `;
    return [
      `${ind}{  // ${s.id}: at most ${count} trips, until ${u.value} ${u.within === undefined ? 'stable' : `within ${u.within}`}`,
      `${i2}${t}* ${prev} = nullptr;`,
      `${i2}double* ${chg} = nullptr;`,
      `${i2}double ${h}[2] = {0, 0};`,
      `${i2}if ((dy_rc = (int)cudaMallocAsync((void**)&${prev}, (${v.count} > 0 ? ${v.count} : 1) * sizeof(${t}), stream)) != 0) return dy_rc;`,
      `${i2}if ((dy_rc = (int)cudaMallocAsync((void**)&${chg}, 2 * sizeof(double), stream)) != 0) return dy_rc;`,
      `${i2}for (long long ${it} = 0; ${it} < ${count}; ++${it}) {`,
      `${i2}  if ((dy_rc = (int)cudaMemcpyAsync(${prev}, b->${v.c}, ${v.count} * sizeof(${t}), cudaMemcpyDeviceToDevice, stream)) != 0) break;`,
      ...steps(s.body, `${i2}  `, depth + 1),
      `${i2}  DY_LAUNCH(dy_until_change<${t}>, 1, 32, stream, ${prev}, b->${v.c}, (long long)(${v.count}), ${chg});`,
      `${i2}  if ((dy_rc = dy_launch_status()) != 0) break;`,
      `${i2}  if ((dy_rc = (int)cudaMemcpyAsync(${h}, ${chg}, 2 * sizeof(double), cudaMemcpyDeviceToHost, stream)) != 0) break;`,
      `${i2}  if ((dy_rc = (int)cudaStreamSynchronize(stream)) != 0) break;`,
      `${i2}  if (${stop}) break;`,
      `${i2}}`,
      `${i2}{ int dy_f = (int)cudaFreeAsync(${prev}, stream); if (dy_rc == 0) dy_rc = dy_f; }`,
      `${i2}{ int dy_f = (int)cudaFreeAsync(${chg}, stream); if (dy_rc == 0) dy_rc = dy_f; }`,
      `${i2}if (dy_rc != 0) return dy_rc;`,
      `${ind}}`,
    ];
  };
  const swapped = new Map<string, Storage>();
  const body = steps(manifest.program, '', 0);
  // Swaps happen in a local copy of the buffers; an odd count leaves X in X.next's storage, copied home once.
  const runBuffers =
    swapped.size === 0
      ? ['int dy_rc = 0;', ...body, 'return 0;']
      : [
          'int dy_rc = 0;',
          `${prefix}_buffers dy_l = *b;`,
          `const ${prefix}_buffers* dy_in = b;`,
          'b = &dy_l;',
          ...body,
          ...[...swapped.values()].map(
            (to) =>
              `if (b->${to.c} != dy_in->${to.c} && (dy_rc = (int)cudaMemcpyAsync(dy_in->${to.c}, b->${to.c}, ${to.count.replace(/b->/g, 'dy_in->')} * sizeof(${storageType(to.elem)}), cudaMemcpyDeviceToDevice, stream)) != 0) return dy_rc;`,
          ),
          'return 0;',
        ];
  const temps = all.filter((s) => s.kind === 'temp');
  const run = [
    `${prefix}_buffers dy_b;`,
    'memset(&dy_b, 0, sizeof dy_b);',
    `${prefix}_buffers* b = &dy_b;`,
    ...all.filter((s) => s.kind !== 'temp').map((s) => `b->${s.c} = (${storageType(s.elem)}*)a->${s.c};`),
    ...[...sizes.values()].map((c) => `b->${c} = a->${c};`),
    ...[...sizes.values()].map((c) => `if (b->${c} < 0) return DYPE_ERR_BAD_SIZE;`),
    'int dy_rc = 0;',
    ...temps.map(
      (s) =>
        `if (dy_rc == 0) dy_rc = (int)cudaMallocAsync((void**)&b->${s.c}, (${s.count} > 0 ? ${s.count} : 1) * sizeof(${storageType(s.elem)}), stream);`,
    ),
    `if (dy_rc == 0) dy_rc = ${prefix}_run_buffers(b, variants, stream);`,
    ...temps.map(
      (s) => `if (b->${s.c}) { int dy_f = (int)cudaFreeAsync(b->${s.c}, stream); if (dy_rc == 0) dy_rc = dy_f; }`,
    ),
    'return dy_rc;',
  ];
  const opTable = ops.map(
    (op, n) =>
      `op ${n}: ${op.f.op} (${op.f.result} -> ${op.f.out}): ${op.variants.map((v, vi) => `${vi} = ${v.name}`).join(', ')}`,
  );
  return {
    name: plan.kernel.name,
    prefix,
    signature: `kernel ${plan.kernel.name}(${manifest.params.map((p) => `${p.name}: ${typeText(p.type)}`).join(', ')}) -> (${manifest.results.map((r) => `${r.name}: ${typeText(r.type)}`).join(', ')})`,
    device,
    stubs,
    buffersStruct,
    argsStruct,
    dispatch,
    runBuffers,
    run,
    opTable,
  };
}

/** A double literal C reads back to the same value (JavaScript's shortest round-trip form). */
export function cDouble(x: number): string {
  const t = String(x);
  return /[.e]/.test(t) ? t : `${t}.0`;
}

export { cType };
