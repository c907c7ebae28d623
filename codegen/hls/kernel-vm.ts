/**
 * Builds the view model of one FPGA kernel (one loop function) for the
 * design match.ts chose: kernel arguments with HBM bundles and banks, the
 * streams, arrays and loops of the emitted code (what legality.ts checks),
 * the printed C++ fragments, the launch function (host-side packing and the
 * call, csim or XRT), a reference loop nest for the testbench, and the
 * estimates (runtime/plan/fpga-designs.ts).
 */
import type { LBuffer, LElem, LExpr, LStmt, LoopFunc } from '../../ir/loops.js';
import { loadsFrom, walkLExpr } from '../../ir/loops-walk.js';
import type { WasmOp } from '../../runtime/wasm/manifest.js';
import {
  FOLD_PES_PER_CYCLE,
  FPGA_DESIGN_DEFAULTS,
  SPARSE_ROW_STREAMS,
  fpgaDesignResources,
  type FpgaDesignConfig,
  type FpgaDesignName,
} from '../../runtime/plan/fpga-designs.js';
import { CppPrinter, cppType, ident, loopLabeler, printStmts, type Names } from './cpp-expr.js';
import { firstLoadIndex } from '../c/walk.js';
import {
  matchDesign,
  type GemmMatch,
  type SddmmMatch,
  type SparseRowsMatch,
  type StreamMatch,
  type TermOperand,
} from './match.js';
import type { ArrayDecl, KernelArg, KernelVM, LoopDecl, StreamDecl } from './view-model.js';

/** Loop-IR names of the row range of a clamped top loop (not identifiers, so no program's names can meet them). */
const ROW_LO = '@row_lo';
const ROW_HI = '@row_hi';

/** Largest trip count assumed for a data-dependent loop (a row's entries, a window's stream). */
const MAX_TRIP = 1 << 20;

export const bufName = (b: string): string => `b_${ident(b)}`;
export const varName = (v: string): string => `v_${ident(v)}`;
const scalarName = (b: string): string => `s_${ident(b)}`;
/** A second port on a dense input, for a process other than the one reading it through its own (ep_ never begins a b_, v_ or s_ name). */
const epName = (b: string): string => `ep_${ident(b)}`;

function baseNames(f: LoopFunc, locals: Map<string, LElem>): Names & { bufs: Map<string, LBuffer> } {
  const bufs = new Map(f.buffers.map((b) => [b.name, b]));
  return {
    bufs,
    load(buf: string, index: LExpr): string {
      const b = bufs.get(buf);
      if (b?.role === 'scalar' && buf !== f.out) return scalarName(buf);
      return `${bufName(buf)}[${new CppPrinter(this).as(index, 'index')}]`;
    },
    variable: (v: string) => varName(v),
    bufElem: (b: string) => bufs.get(b)?.elem ?? 'f32',
    varElem: (v: string) => locals.get(v) ?? 'index',
  };
}

/** A scalar operand, passed to a kernel by value; a scalar result is a one-element buffer the kernel writes. */
function isScalarIn(f: LoopFunc, b: LBuffer): boolean {
  return b.role === 'scalar' && b.name !== f.out;
}

function elemOf(b: LBuffer): string {
  return cppType(b.elem);
}

/** Launch-function parameters: every loop-IR buffer as a pointer, every size, the driving pattern's shape. */
export function launchParams(f: LoopFunc, extraDims: readonly string[]): string[] {
  return [
    ...f.buffers.map((b) => `${b.name === f.out ? '' : 'const '}${elemOf(b)}* ${bufName(b.name)}`),
    ...f.sizes.map((s) => `int32_t ${varName(s)}`),
    ...extraDims.map((s) => `int32_t ${varName(s)}`),
    'int32_t sp_rows',
    'int32_t sp_cols',
    'int32_t sp_nnz',
  ];
}

/** The loop nest itself as a plain C++ function body (testbench reference and generic kernels). */
function plainBody(
  f: LoopFunc,
  pragmas: (loop: Extract<LStmt, { k: 'for' }>, innermost: boolean, label: string) => string[],
  extraVars: Record<string, string> = {},
): string[] {
  const locals = new Map<string, LElem>();
  for (const s of f.sizes) locals.set(s, 'index');
  for (const v of Object.keys(extraVars)) locals.set(v, 'index');
  const base = baseNames(f, locals);
  const names = { ...base, variable: (v: string) => extraVars[v] ?? base.variable(v) };
  return printStmts(new CppPrinter(names), f.body, locals, names, { loopPragmas: pragmas, label: loopLabeler() }, '  ');
}

/** The testbench's reference: the plain loop nest, with scalar operands read from their one-element buffers as the kernels receive them. */
function referenceBody(f: LoopFunc): string[] {
  const scalars = f.buffers
    .filter((b) => isScalarIn(f, b))
    .map((b) => `  const ${elemOf(b)} ${scalarName(b.name)} = ${bufName(b.name)}[0];`);
  return [...scalars, ...plainBody(f, () => [])];
}

/** Loops of a printed loop nest, with trip counts for those whose bounds are loaded from memory. */
function nestLoops(f: LoopFunc): LoopDecl[] {
  const out: LoopDecl[] = [];
  // In printStmts' order, so each loop gets the label it is printed with.
  const label = loopLabeler();
  const visit = (ss: readonly LStmt[]): void => {
    for (const s of ss) {
      if (s.k === 'for') {
        const dd = JSON.stringify([s.lo, s.hi]).includes('"k":"load"');
        out.push({
          label: label(s.var),
          dataDependent: dd,
          ...(dd ? { tripcount: { min: 0, max: MAX_TRIP, avg: 16 } } : {}),
        });
        visit(s.body);
      } else if (s.k === 'if') {
        visit(s.then);
        visit(s.else ?? []);
      }
    }
  };
  visit(f.body);
  return out;
}

function tripPragma(l: LoopDecl | undefined): string[] {
  return l?.tripcount
    ? [`#pragma HLS LOOP_TRIPCOUNT min=${l.tripcount.min} max=${l.tripcount.max} avg=${l.tripcount.avg}`]
    : [];
}

/** Arguments for the loop-IR buffers and sizes, each pointer in its own bundle and bank from `firstBank`. */
function plainArgs(f: LoopFunc, firstBank: number): KernelArg[] {
  let bank = firstBank;
  const args: KernelArg[] = [];
  for (const b of f.buffers) {
    if (isScalarIn(f, b)) {
      args.push({
        name: scalarName(b.name),
        cType: elemOf(b),
        kind: 'scalar',
        host: `${bufName(b.name)}[0]`,
        output: false,
      });
      continue;
    }
    const n = bufName(b.name);
    args.push({
      name: n,
      cType: `${b.name === f.out ? '' : 'const '}${elemOf(b)}*`,
      kind: 'ptr',
      bundle: `gmem${bank}`,
      bank,
      host: n,
      hostCount: `n_${n}`,
      elemType: elemOf(b),
      output: b.name === f.out,
    });
    bank++;
  }
  for (const s of f.sizes)
    args.push({ name: varName(s), cType: 'int32_t', kind: 'scalar', host: varName(s), output: false });
  return args;
}

/**
 * Elements an m_axi port's co-simulation model holds (depth=): without it
 * C/RTL co-simulation cannot size the port's memory and stalls. Sized for
 * the MAX_TRIP bound the loops declare; a co-simulation of a larger input
 * needs it raised (synthesis and hardware ignore it).
 */
export const COSIM_DEPTH = MAX_TRIP;

function interfaceLines(args: KernelArg[]): string[] {
  const out = args.map((a) =>
    a.kind === 'ptr'
      ? `#pragma HLS INTERFACE mode=m_axi port=${a.name} bundle=${a.bundle} offset=slave depth=${COSIM_DEPTH}${a.wide ? ' max_widen_bitwidth=512' : ''}`
      : `#pragma HLS INTERFACE mode=s_axilite port=${a.name}`,
  );
  out.push('#pragma HLS INTERFACE mode=s_axilite port=return');
  return out;
}

function arrayLines(a: ArrayDecl, isStatic: boolean): string[] {
  const out = [`${isStatic ? 'static ' : ''}${a.type} ${a.name}${a.dims.map((d) => `[${d}]`).join('')};`];
  for (const p of a.partitions)
    out.push(
      p.kind === 'complete'
        ? `#pragma HLS ARRAY_PARTITION variable=${a.name} dim=${p.dim} type=complete`
        : `#pragma HLS ARRAY_PARTITION variable=${a.name} dim=${p.dim} type=${p.kind} factor=${p.factor}`,
    );
  if (a.storage)
    out.push(
      `#pragma HLS BIND_STORAGE variable=${a.name} type=ram_2p impl=${a.storage}${a.latency !== undefined ? ` latency=${a.latency}` : ''}`,
    );
  return out;
}

function estimates(design: FpgaDesignName, c: FpgaDesignConfig, cycles: string): KernelVM['estimates'] {
  return {
    design,
    pes: design === 'gemm' ? c.pesPerChannel * c.lanes : c.channels * c.pesPerChannel,
    ii: c.ii,
    clockMHz: c.clockMHz,
    cycles,
    resources: fpgaDesignResources(design, c),
  };
}

/** Counts of every pointer argument the launch function passes (host element counts). */
function countDecls(f: LoopFunc, sizeOf: (b: LBuffer) => string): string[] {
  return f.buffers.filter((b) => !isScalarIn(f, b)).map((b) => `const size_t n_${bufName(b.name)} = ${sizeOf(b)};`);
}

/**
 * The rows [r_lo, r_hi) a launch computes (dype::LaunchAt clamped to the top
 * loop's [first, last)), and the elements of the out buffer that range
 * writes, [w_lo, w_hi) (the XRT path reads back only those, so that launches
 * of other ranges into the same buffer are not overwritten). An op whose
 * manifest entry is not splittable runs whole only.
 */
function rangeDecls(f: LoopFunc, op: WasmOp, first: string, last: string): string[] {
  const out = f.buffers.find((b) => b.name === f.out)!;
  const n = `n_${bufName(out.name)}`;
  if (!op.splittable)
    return [
      `dype::whole_only(at, "${f.name}");`,
      ...(first ? [`const int32_t r_lo = ${first};`, `const int32_t r_hi = ${last};`] : []),
      `const size_t w_lo = 0;`,
      `const size_t w_hi = ${n};`,
    ];
  const decls = [
    `const int32_t r_lo = dype::range_begin(at, ${first}, ${last});`,
    `const int32_t r_hi = dype::range_end(at, ${first}, ${last});`,
  ];
  const ptr = f.buffers.find((b) => b.role === 'rowPtr' || b.role === 'colPtr');
  if (op.splitWrites === 'rows') {
    const w = `(${n} / size_t(std::max<int32_t>(1, ${last})))`;
    return [...decls, `const size_t w_lo = size_t(r_lo) * ${w};`, `const size_t w_hi = size_t(r_hi) * ${w};`];
  }
  if (op.splitWrites === 'entries' && ptr)
    return [
      ...decls,
      `const size_t w_lo = size_t(${bufName(ptr.name)}[r_lo]);`,
      `const size_t w_hi = size_t(${bufName(ptr.name)}[r_hi]);`,
    ];
  return [...decls, `const size_t w_lo = 0;`, `const size_t w_hi = ${n};`];
}

export interface BuildContext {
  kernel: string;
  /** The op's manifest entry: whether its top loop may be clamped to a row range, and what a clamped run writes. */
  manifestOp(f: LoopFunc): WasmOp;
  /** Dims the buffers' shapes use beyond the loop function's sizes (the launch function sizes buffers by them). */
  extraDims(f: LoopFunc): string[];
  /** Host-side element count of a loop-IR buffer, as a C++ expression over sizes and sp_rows/sp_cols. */
  sizeOf(f: LoopFunc, b: LBuffer): string;
  /** Testbench: C++ declarations making every buffer and size of `f`, and the arguments of the launch call. */
  testbench(f: LoopFunc): KernelVM['testbench'];
}

// ---------------------------------------------------------------- sparse rows (Serpens / Sextans)

function sparseRowsVM(f: LoopFunc, m: SparseRowsMatch, ctx: BuildContext): KernelVM {
  const design: FpgaDesignName = m.colLoop ? 'spmm' : 'spmv';
  const c = FPGA_DESIGN_DEFAULTS[design];
  const CH = c.channels;
  const PE = c.pesPerChannel;
  const LANES = CH * PE;
  const KT = design === 'spmm' ? c.lanes : 1;
  // Result rows written a cycle: a 512-bit word of KT-wide rows.
  const YW = c.yPerCycle;
  if (YW * KT * 32 > 512 || LANES % YW !== 0)
    throw new Error(
      `hls: ${design} writes ${YW} rows of ${KT} lanes a cycle; expected at most 512 bits dividing ${LANES} lanes`,
    );
  const N = f.name;
  const locals = new Map<string, LElem>();
  for (const s of f.sizes) locals.set(s, 'index');
  locals.set(m.acc.var, m.acc.type);
  locals.set('__part', m.acc.type);
  const names = baseNames(f, locals);
  const winName = (b: string): string => `win_${ident(b)}`;
  const kVar = m.colLoop?.var;
  // Long rows shared over the lanes need their partial sums merged: only where the accumulation is a ⊕ b.
  const mergeExpr = mergeOf(m);
  const SHARE = mergeExpr ? c.sharedRows : 0;
  if (PE % FOLD_PES_PER_CYCLE !== 0)
    throw new Error(`hls: ${design} folds ${FOLD_PES_PER_CYCLE} PE parts a cycle; expected it to divide ${PE} PEs`);
  const rename = (
    base: Names,
    vars: Record<string, string>,
    load?: (buf: string, index: LExpr) => string | undefined,
  ): Names => ({
    ...base,
    load: (buf, index) => load?.(buf, index) ?? base.load.call(rename(base, vars, load), buf, index),
    variable: (v) => vars[v] ?? base.variable(v),
  });
  const vars: Record<string, string> = { [m.jVar]: 'gcol', [m.rowLoop.var]: 'row', [m.acc.var]: 'a' };
  if (kVar) vars[kVar] = 'kcol';
  const termNames = rename(names, vars, (buf, index) => {
    if (m.vals && buf === m.vals.name) return 'val';
    // The half of the window buffer the current window streams from (rd, in words of XW columns).
    if (m.windows.some((w) => w.name === buf)) return `${winName(buf)}[l][rd + col / ${N}_XW][kk].v[col % ${N}_XW]`;
    void index;
    return undefined;
  });
  const combine = new CppPrinter(termNames).as(m.combine, m.acc.type);
  const identity = new CppPrinter(names).as(m.acc.init, m.acc.type);
  // The write-back process reads the epilogue's dense operands; one that is also a window (SSSP's min(d[i], acc))
  // is read there through a port of its own (epName), since in a dataflow region one m_axi port serves one process.
  const windowNames = new Set(m.windows.map((w) => w.name));
  if (windowNames.has(f.out))
    throw new Error(`hls: ${N} reads its output '${f.out}' as a window; expected the result in a buffer of its own`);
  const epilogueReads = new Set<string>();
  walkLExpr(m.store.value, (e) => {
    if (e.k === 'load' && names.bufs.get(e.buf)?.role === 'dense') epilogueReads.add(e.buf);
  });
  const outNames: Names = rename(names, { ...vars, [m.acc.var]: 'acc_v' }, (buf, index) =>
    windowNames.has(buf) ? `${epName(buf)}[${new CppPrinter(outNames).as(index, 'index')}]` : undefined,
  );
  const outP = new CppPrinter(outNames);
  const store = `${outNames.load(m.store.buf, m.store.index)} = ${outP.as(m.store.value, names.bufElem(m.store.buf))}`;
  const loadNames = rename(names, vars);
  // Window words hold XW consecutive columns: a load cycle fills one on every lane.
  const XW = c.xPerCycle;
  if (c.colWindow % XW !== 0 || (XW & (XW - 1)) !== 0)
    throw new Error(
      `hls: ${design} loads ${XW} window columns a cycle; expected a power of two dividing ${c.colWindow}`,
    );
  const windowLoads = m.windows.map((w, i) => ({
    array: winName(w.name),
    word: `${N}_${winName(w.name)}_t`,
    tmp: `wv${i}`,
    type: elemOf(w),
    load: new CppPrinter(loadNames).expr({ k: 'load', buf: w.name, index: windowIndex(m, w.name) }),
  }));

  // Kernel arguments: one stream source per channel (HBM banks 0..CH-1), the meta table, then the dense operands.
  const args: KernelArg[] = [];
  for (let ch = 0; ch < CH; ch++)
    args.push({
      name: `nz_${ch}`,
      cType: `const ${N}_pack_t*`,
      kind: 'ptr',
      bundle: `hbm${ch}`,
      bank: ch,
      host: `reinterpret_cast<const ${N}_pack_t*>(pk.words[${ch}].data())`,
      hostCount: `pk.words[${ch}].size() / ${PE}`,
      elemType: `${N}_pack_t`,
      output: false,
      packed: { part: 'words', channel: ch },
    });
  args.push({
    name: 'meta',
    cType: 'const int32_t*',
    kind: 'ptr',
    bundle: 'hbm_meta',
    bank: CH,
    host: 'pk.meta.data()',
    hostCount: 'pk.meta.size()',
    elemType: 'int32_t',
    output: false,
    packed: { part: 'meta' },
  });
  let bank = CH + 1;
  // Which process takes each pointer (one m_axi port serves one dataflow process): the loader the windows, the
  // write-back the output and the epilogue's operands; every process takes every scalar.
  const loadPtrs: KernelArg[] = [];
  const writePtrs: KernelArg[] = [];
  const scalars: KernelArg[] = [];
  const ptrArg = (b: LBuffer, name: string, bundle: string): KernelArg => ({
    name,
    cType: `${b.name === f.out ? '' : 'const '}${elemOf(b)}*`,
    kind: 'ptr',
    bundle,
    bank: bank++,
    host: bufName(b.name),
    hostCount: `n_${bufName(b.name)}`,
    elemType: elemOf(b),
    output: b.name === f.out,
    // The write-back stores every row of the range and every column (L_out): unread, it need not go to the card.
    writeOnly: b.name === f.out && !loadsFrom(f.body, b.name),
    wide: true,
  });
  const epPorts: KernelArg[] = [];
  for (const b of f.buffers) {
    if (b.role === 'rowPtr' || b.role === 'colIdx' || b.role === 'values') continue;
    if (isScalarIn(f, b)) {
      const a: KernelArg = {
        name: scalarName(b.name),
        cType: elemOf(b),
        kind: 'scalar',
        host: `${bufName(b.name)}[0]`,
        output: false,
      };
      args.push(a);
      scalars.push(a);
      continue;
    }
    const a = ptrArg(b, bufName(b.name), `hbm_${ident(b.name)}`);
    args.push(a);
    if (windowNames.has(b.name)) loadPtrs.push(a);
    else if (b.name === f.out || epilogueReads.has(b.name)) writePtrs.push(a);
    if (windowNames.has(b.name) && epilogueReads.has(b.name))
      epPorts.push(ptrArg(b, epName(b.name), `hbmep_${ident(b.name)}`));
  }
  args.push(...epPorts);
  writePtrs.push(...epPorts);
  for (const sz of f.sizes) {
    const a: KernelArg = { name: varName(sz), cType: 'int32_t', kind: 'scalar', host: varName(sz), output: false };
    args.push(a);
    scalars.push(a);
  }
  // The host packs only rows [r_lo, r_hi) (tiles relative to r_lo); the kernel adds row_lo back and writes rows below n_rows = r_hi.
  const dims = ['row_lo', 'n_rows', 'n_cols', 'n_k', 'n_tiles', 'n_ktiles', 'n_wins'];
  const kExpr = m.colLoop ? new CppPrinter(names).as(m.colLoop.hi, 'index') : '1';
  const lastRow = new CppPrinter(names).as(m.rowLoop.hi, 'index');
  const hostDims: Record<string, string> = {
    row_lo: 'r_lo',
    n_rows: 'r_hi',
    n_cols: 'sp_cols',
    n_k: kExpr,
    n_tiles: 'pk.n_tiles',
    n_ktiles: `(${kExpr} + ${KT - 1}) / ${KT}`,
    n_wins: 'pk.n_wins',
  };
  for (const d of dims) {
    const a: KernelArg = { name: d, cType: 'int32_t', kind: 'scalar', host: hostDims[d]!, output: false };
    args.push(a);
    scalars.push(a);
  }
  const params = (as: KernelArg[]): string => as.map((a) => `${a.cType} ${a.name}`).join(', ');
  const argList = (as: KernelArg[]): string => as.map((a) => a.name).join(', ');

  const S = SPARSE_ROW_STREAMS;
  const hasWindows = m.windows.length > 0;
  const compute = (ch: number): string => `${N}_compute<${ch}>`;
  const streams: StreamDecl[] = [];
  const perChannel = (
    name: string,
    type: string,
    depth: number,
    from: (ch: number) => string,
    to: (ch: number) => string,
  ): void => {
    for (let ch = 0; ch < CH; ch++)
      streams.push({ name: `${name}[${ch}]`, type, depth, producers: [from(ch)], consumers: [to(ch)] });
  };
  perChannel(
    'rd_s',
    `${N}_range_t`,
    S.range,
    () => `${N}_meta`,
    (ch) => `${N}_read_${ch}`,
  );
  perChannel('nz_s', `${N}_pack_t`, S.words, (ch) => `${N}_read_${ch}`, compute);
  perChannel('len_s', 'int32_t', S.len, () => `${N}_meta`, compute);
  perChannel('res_s', `${N}_slot_t`, S.slot, compute, () => `${N}_write`);
  if (hasWindows) perChannel('xw_s', `${N}_xw_t`, S.window, () => `${N}_load`, compute);
  if (SHARE > 0) {
    perChannel('share_s', 'int32_t', S.share, () => `${N}_meta`, compute);
    perChannel('part_s', `${N}_row_t`, S.part, compute, () => `${N}_write`);
    streams.push({
      name: 'share_w',
      type: 'int32_t',
      depth: S.share,
      producers: [`${N}_meta`],
      consumers: [`${N}_write`],
    });
  }
  // Each channel's PEs: their accumulators and their copy of each window (arrays of the channel's process).
  const arrays: ArrayDecl[] = [
    {
      name: 'acc',
      type: cppType(m.acc.type),
      dims: [PE, c.rowSlots + SHARE, KT],
      partitions: [
        { dim: 1, kind: 'complete', factor: PE },
        ...(KT > 1 ? [{ dim: 3, kind: 'complete' as const, factor: KT }] : []),
      ],
      unrolledBy: [{ dim: 1, factor: PE }, ...(KT > 1 ? [{ dim: 3, factor: KT }] : [])],
      storage: 'uram',
      latency: c.accReadLatency,
    },
    // Two halves a window (double-buffered: the next window loads into one while the other streams),
    // in words of XW columns.
    ...m.windows.map((w): ArrayDecl => ({
      name: winName(w.name),
      type: `${N}_${winName(w.name)}_t`,
      dims: [PE, (2 * c.colWindow) / XW, KT],
      partitions: [
        { dim: 1, kind: 'complete', factor: PE },
        ...(KT > 1 ? [{ dim: 3, kind: 'complete' as const, factor: KT }] : []),
      ],
      unrolledBy: [{ dim: 1, factor: PE }, ...(KT > 1 ? [{ dim: 3, factor: KT }] : [])],
      storage: c.windowStorage,
    })),
  ];
  const loops: LoopDecl[] = [
    { label: 'L_tile', dataDependent: true, tripcount: { min: 1, max: 64, avg: 1 } },
    { label: 'L_ktile', dataDependent: true, tripcount: { min: 1, max: 64, avg: 1 } },
    { label: 'L_win', dataDependent: true, tripcount: { min: 1, max: 1024, avg: 4 } },
    { label: 'L_nz', dataDependent: true, tripcount: { min: 0, max: MAX_TRIP, avg: 4096 } },
    { label: 'L_read', dataDependent: true, tripcount: { min: 0, max: MAX_TRIP, avg: 4096 } },
    { label: 'L_ld', dataDependent: true, tripcount: { min: 1, max: c.colWindow / XW, avg: c.colWindow / XW } },
    // L_init and L_send: the tile's slots.
    { label: 'L_init', dataDependent: true, tripcount: { min: 1, max: c.rowSlots, avg: c.rowSlots } },
    { label: 'L_out', dataDependent: true, tripcount: { min: 1, max: (LANES * c.rowSlots) / YW, avg: 4096 } },
    ...(SHARE > 0
      ? [
          { label: 'L_share_init', dataDependent: true, tripcount: { min: 0, max: SHARE, avg: 1 } },
          { label: 'L_fold', dataDependent: true, tripcount: { min: 0, max: SHARE, avg: c.addLatency } },
          // L_fold_send and L_merge: the tile's shared rows.
          { label: 'L_fold_send', dataDependent: true, tripcount: { min: 0, max: SHARE, avg: 1 } },
        ]
      : []),
  ];
  const readers = Array.from({ length: CH }, (_, ch) => `${N}_read_${ch}`);
  const computes = Array.from({ length: CH }, (_, ch) => compute(ch));
  const processes = [`${N}_meta`, ...readers, ...(hasWindows ? [`${N}_load`] : []), ...computes, `${N}_write`];
  const functions = [{ name: N, calls: processes }, ...processes.map((p) => ({ name: p, calls: [] }))];
  const trip = (label: string): string => tripPragma(loops.find((l) => l.label === label))[0] ?? '';
  const valType = m.vals ? elemOf(m.vals) : 'float';
  const prepare = [...countDecls(f, (b) => ctx.sizeOf(f, b)), ...rangeDecls(f, ctx.manifestOp(f), '0', lastRow)];
  const pack = {
    lines: [
      `static dype::PackCache pack_cache;`,
      `dype::RowPack pk = dype::cached_pack(pack_cache, ${bufName(m.ptr.name)} + r_lo, ${bufName(m.idx.name)}, r_hi - r_lo, sp_cols, ${CH}, ${PE}, ${c.rowSlots}, ${c.colWindow}, ${N}_ADD_LATENCY, ${N}_SHARE);`,
      ...(m.vals ? [`dype::fill_values(pk, ${bufName(m.vals.name)});`] : []),
    ],
    note: [
      `dype::note_cycles("${N}", pk.cycles * ((${kExpr} + ${KT - 1}) / ${KT}), pk.fold_cycles * ((${kExpr} + ${KT - 1}) / ${KT}), pk.nnz);`,
    ],
    from: [m.ptr, m.idx, ...(m.vals ? [m.vals] : [])].map((b) => f.buffers.findIndex((x) => x.name === b.name)),
  };
  // The design as this kernel builds it: rows stay on their lanes where partial sums cannot be merged.
  const cfg: FpgaDesignConfig = SHARE > 0 ? c : { ...c, longRows: 'lane', sharedRows: 0 };
  const stream =
    SHARE > 0
      ? `max(nnz/${LANES}, longest unshared row*${c.addLatency}) + fold(rows shared, at most ${SHARE} a tile)`
      : `max(nnz/${LANES}, rowLenMax*${c.addLatency})`;
  const pass = `ceil(rows/${LANES * c.rowSlots}) * (${c.rowSlots} + ceil(cols/${c.colWindow}) * ${c.colWindow})`;
  const cycles = design === 'spmm' ? `ceil(k/${KT}) * (${stream} + ${pass})` : `${stream} + ${pass}`;
  return {
    name: N,
    kernel: ctx.kernel,
    op: f.op,
    design,
    template: 'sparse_rows.cpp.hbs',
    config: cfg,
    args,
    streams,
    arrays,
    loops,
    functions,
    code: {
      signature: args.map((a) => `${a.cType} ${a.name}`).join(', '),
      interfaces: interfaceLines(args),
      computeParams: params(scalars),
      loadParams: params([...loadPtrs, ...scalars]),
      loadArgs: argList([...loadPtrs, ...scalars]),
      writeParams: params([...writePtrs, ...scalars]),
      writeArgs: argList([...writePtrs, ...scalars]),
      windows: hasWindows ? 'windows' : '',
      computeCalls: Array.from(
        { length: CH },
        (_, ch) =>
          `${compute(ch)}(len_s[${ch}]${SHARE > 0 ? `, share_s[${ch}]` : ''}, nz_s[${ch}]${hasWindows ? `, xw_s[${ch}]` : ''}, res_s[${ch}]${SHARE > 0 ? `, part_s[${ch}]` : ''}, ${argList(scalars)});`,
      ),
      readerCalls: Array.from(
        { length: CH },
        (_, ch) => `${N}_read_${ch}(nz_${ch}, rd_s[${ch}], nz_s[${ch}], n_tiles * n_ktiles * n_wins);`,
      ),
      readerDefs: Array.from(
        { length: CH },
        (_, ch) =>
          `static void ${N}_read_${ch}(const ${N}_pack_t* nz, hls::stream<${N}_range_t>& rd, hls::stream<${N}_pack_t>& out, int32_t n_steps) { ${N}_read_words(nz, rd, out, n_steps); }`,
      ),
      arrays: arrays.flatMap((a) => arrayLines(a, true)),
      accType: cppType(m.acc.type),
      valType,
      identity,
      combine,
      share: SHARE > 0 ? 'shared rows' : '',
      merge: mergeExpr
        ? new CppPrinter(rename(names, { [m.acc.var]: 'a', __part: 'b' })).as(mergeExpr, m.acc.type)
        : '',
      windowIndependence: m.windows.flatMap((w) => [
        '          // Written in one half, read in the other: no dependence between them within a step.',
        `#pragma HLS DEPENDENCE variable=${winName(w.name)} type=inter direction=RAW dependent=false`,
      ]),
      tripShareInit: trip('L_share_init'),
      tripFold: trip('L_fold'),
      tripFoldOut: trip('L_fold_send'),
      store,
      windowLoads: windowLoads.flatMap((w) => [
        `${w.word} ${w.tmp};`,
        `for (int32_t u = 0; u < ${N}_XW; u++) {`,
        '#pragma HLS UNROLL',
        '  const int32_t gcol = g0 + u;',
        `  ${w.tmp}.v[u] = in && q * ${N}_XW + u < n_ld ? ${w.load} : ${w.type}(0);`,
        '}',
        `xw.${w.array}[kk] = ${w.tmp};`,
      ]),
      windowStores: windowLoads.map((w) => `${w.array}[l][c][kk] = xw.${w.array}[kk];`),
      tripLoad: trip('L_ld'),
      tripTile: trip('L_tile'),
      tripKtile: trip('L_ktile'),
      tripWin: trip('L_win'),
      tripNz: trip('L_nz'),
      tripInit: trip('L_init'),
      tripOut: trip('L_out'),
      bindAdd: isFloatAdd(m.combine, m.acc.type)
        ? `#pragma HLS BIND_OP variable=sum op=fadd impl=fulldsp latency=${N}_FADD_LATENCY`
        : `// ${m.acc.type} ${combineKind(m.combine)}: no floating-point adder to pin; its chain is shorter than ${N}_FADD_LATENCY`,
      tripRead: trip('L_read'),
      // One pragma a stream array (it sets every channel's stream).
      streamPragmas: [...new Map(streams.map((st) => [st.name.replace(/\[\d+\]$/, ''), st.depth])).entries()].map(
        ([name, depth]) => `#pragma HLS STREAM variable=${name} depth=${depth}`,
      ),
      constants: [
        `#define ${N}_CH ${CH}`,
        `#define ${N}_PE ${PE}`,
        `#define ${N}_LANES ${LANES}`,
        `#define ${N}_ROW_SLOTS ${c.rowSlots}`,
        `#define ${N}_COL_WIN ${c.colWindow}`,
        `#define ${N}_KT ${KT}`,
        `#define ${N}_FADD_LATENCY ${c.faddLatency}`,
        `#define ${N}_ACC_READ_LATENCY ${c.accReadLatency}`,
        "// The read-add-write chain of one accumulator slot: the dependence distance, and the host packer's spacing.",
        `#define ${N}_ADD_LATENCY (${N}_ACC_READ_LATENCY + ${N}_FADD_LATENCY + 1)`,
        `#define ${N}_YW ${YW}`,
        '// Window columns a window word holds and a load cycle fills (one 64-bit word a lane and dense lane).',
        `#define ${N}_XW ${XW}`,
        '// Long rows a row tile may share over all lanes (accumulator slots ROW_SLOTS + j), folded after its stream.',
        `#define ${N}_SHARE ${SHARE}`,
        "// PE parts of a shared row a channel folds a cycle (the host's dype_share.h FOLD_W).",
        `#define ${N}_FOLD_W ${FOLD_PES_PER_CYCLE}`,
      ],
      types: [
        `struct ${N}_pack_t {`,
        `  ap_uint<64> e[${PE}];`,
        '};',
        `struct ${N}_range_t {`,
        '  int32_t lo;',
        '  int32_t hi;',
        '};',
        ...windowLoads.flatMap((w) => [`struct ${w.word} {`, `  ${w.type} v[${XW}];`, '};']),
        ...(hasWindows
          ? [
              '// A window word of every window and dense lane, from the loader to a channel.',
              `struct ${N}_xw_t {`,
              ...windowLoads.map((w) => `  ${w.word} ${w.array}[${KT}];`),
              '};',
            ]
          : []),
        "// One slot's sums of a channel's PEs (PE consecutive rows of a tile's slot), to the write-back.",
        `struct ${N}_slot_t {`,
        `  ${cppType(m.acc.type)} v[${PE}][${KT}];`,
        '};',
        "// A channel's sum of one shared row, to the write-back.",
        `struct ${N}_row_t {`,
        `  ${cppType(m.acc.type)} v[${KT}];`,
        '};',
      ],
    },
    launch: { params: launchParams(f, ctx.extraDims(f)), prepare, call: '', pack },
    reference: { params: launchParams(f, ctx.extraDims(f)), body: referenceBody(f) },
    testbench: ctx.testbench(f),
    estimates: estimates(design, cfg, cycles),
  };
}

/**
 * The accumulation a ⊕ x of partial sums (a, __part), where the combine is
 * a ⊕ term with ⊕ a binary operator or a two-argument call on the
 * accumulator; undefined for any other form (its rows stay on their lanes).
 */
function mergeOf(m: SparseRowsMatch): LExpr | undefined {
  const c = m.combine;
  const isAcc = (e: LExpr | undefined): boolean => e?.k === 'var' && e.name === m.acc.var;
  if ((c.k === 'bin' && isAcc(c.lhs)) || (c.k === 'call' && c.args.length === 2 && isAcc(c.args[0])))
    return combineWith(c, '__part');
  return undefined;
}

/** Whether an accumulation is an f32 addition (the adder BIND_OP pins). */
function isFloatAdd(combine: LExpr, acc: LElem): boolean {
  return acc === 'f32' && combine.k === 'bin' && combine.op === '+';
}

function combineKind(combine: LExpr): string {
  return combine.k === 'bin' ? `'${combine.op}'` : combine.k === 'call' ? combine.fn : combine.k;
}

/** The index the term reads window `buf` at (every read of a window is at its row j: match.ts). */
function windowIndex(m: SparseRowsMatch, buf: string): LExpr {
  const found = firstLoadIndex(m.combine, buf);
  if (!found) throw new Error(`hls: window '${buf}' not read by the term`);
  return found;
}

// ---------------------------------------------------------------- GEMM and SDDMM

function renamed(
  base: Names,
  vars: Record<string, string>,
  load?: (buf: string, index: LExpr) => string | undefined,
): Names {
  const self: Names = {
    ...base,
    load: (buf, index) => load?.(buf, index) ?? base.load.call(self, buf, index),
    variable: (v) => vars[v] ?? base.variable(v),
  };
  return self;
}

/** Whether the read of `buf` at `index` is one of the operands (compared by index: one matrix can be both). */
const isOperand = (ops: readonly TermOperand[], buf: string, index: LExpr): boolean =>
  ops.some((o) => o.b.name === buf && JSON.stringify(o.index) === JSON.stringify(index));

/** combine(a, x) with the term replaced by `x` (merging partial results). */
function combineWith(c: LExpr, x: string): LExpr {
  const v: LExpr = { k: 'var', name: x };
  if (c.k === 'bin') return { ...c, rhs: v };
  if (c.k === 'call') return { ...c, args: [c.args[0]!, v] };
  throw new Error('hls: not a combine');
}

function denseArgs(f: LoopFunc, skip: (b: LBuffer) => boolean, firstBank: number): KernelArg[] {
  let bank = firstBank;
  const out: KernelArg[] = [];
  for (const b of f.buffers) {
    if (skip(b)) continue;
    if (isScalarIn(f, b))
      out.push({
        name: scalarName(b.name),
        cType: elemOf(b),
        kind: 'scalar',
        host: `${bufName(b.name)}[0]`,
        output: false,
      });
    else
      out.push({
        name: bufName(b.name),
        cType: `${b.name === f.out ? '' : 'const '}${elemOf(b)}*`,
        kind: 'ptr',
        bundle: `gmem${bank}`,
        bank: bank++,
        host: bufName(b.name),
        hostCount: `n_${bufName(b.name)}`,
        elemType: elemOf(b),
        output: b.name === f.out,
      });
  }
  for (const sz of f.sizes)
    out.push({ name: varName(sz), cType: 'int32_t', kind: 'scalar', host: varName(sz), output: false });
  return out;
}

function gemmVM(f: LoopFunc, m: GemmMatch, ctx: BuildContext): KernelVM {
  const c = FPGA_DESIGN_DEFAULTS.gemm;
  const N = f.name;
  const [TI, TK, IL, MAX] = [c.pesPerChannel, c.lanes, c.addLatency, c.maxInner];
  const locals = new Map<string, LElem>();
  for (const sz of f.sizes) locals.set(sz, 'index');
  locals.set(m.red.acc.var, m.red.acc.type);
  const names = baseNames(f, locals);
  const [i, k, j] = [m.rowLoop.var, m.colLoop.var, m.red.loop.var];
  const vars = { [i]: 'row', [k]: 'kcol', [m.red.acc.var]: 'a' };
  // tile_ begins no other name of the kernel (b_, v_, s_, ep_, n_): b_t_W was also the buffer of a tensor t_W.
  const aT = (b: string): string => `tile_a_${ident(b)}`;
  const bT = (b: string): string => `tile_b_${ident(b)}`;
  const termNames = renamed(names, vars, (buf, index) =>
    isOperand(m.left, buf, index)
      ? `${aT(buf)}[s][ii][${varName(j)}]`
      : isOperand(m.right, buf, index)
        ? `${bT(buf)}[${varName(j)}][kk]`
        : undefined,
  );
  const loadNames = renamed(names, vars);
  const outNames = renamed(names, { ...vars, [m.red.acc.var]: 'acc_v' });
  const P = (n: Names): CppPrinter => new CppPrinter(n);
  const args = denseArgs(f, () => false, 0);
  const hp = P(names);
  // Row tiles start at row_lo: a launch over rows [r_lo, r_hi) computes and writes only those.
  const dims: [string, string][] = [
    ['row_lo', 'r_lo'],
    ['n_rows', 'r_hi'],
    ['n_cols', hp.as(m.colLoop.hi, 'index')],
    ['n_inner', hp.as(m.red.loop.hi, 'index')],
  ];
  for (const [d, h] of dims) args.push({ name: d, cType: 'int32_t', kind: 'scalar', host: h, output: false });
  const arrays: ArrayDecl[] = [
    ...m.left.map(({ b }): ArrayDecl => ({
      name: aT(b.name),
      type: elemOf(b),
      dims: [IL, TI, MAX],
      partitions: [{ dim: 2, kind: 'complete', factor: TI }],
      unrolledBy: [{ dim: 2, factor: TI }],
      storage: 'bram',
    })),
    ...m.right.map(({ b }): ArrayDecl => ({
      name: bT(b.name),
      type: elemOf(b),
      dims: [MAX, TK],
      partitions: [{ dim: 2, kind: 'complete', factor: TK }],
      unrolledBy: [{ dim: 2, factor: TK }],
      storage: 'bram',
    })),
    {
      name: 'acc',
      type: cppType(m.red.acc.type),
      dims: [IL, TI, TK],
      partitions: [
        { dim: 2, kind: 'complete', factor: TI },
        { dim: 3, kind: 'complete', factor: TK },
      ],
      unrolledBy: [
        { dim: 2, factor: TI },
        { dim: 3, factor: TK },
      ],
    },
  ];
  const loops: LoopDecl[] = [
    { label: 'L_i0', dataDependent: true, tripcount: { min: 1, max: 1 << 16, avg: 64 } },
    { label: 'L_k0', dataDependent: true, tripcount: { min: 1, max: 1 << 10, avg: 4 } },
    { label: 'L_ldaj', dataDependent: true, tripcount: { min: 1, max: MAX, avg: 64 } },
    { label: 'L_ldb', dataDependent: true, tripcount: { min: 1, max: MAX, avg: 64 } },
    { label: 'L_mac', dataDependent: true, tripcount: { min: 1, max: MAX, avg: 64 } },
  ];
  const trip = (l: string): string => tripPragma(loops.find((x) => x.label === l))[0]!;
  return {
    name: N,
    kernel: ctx.kernel,
    op: f.op,
    design: 'gemm',
    template: 'gemm.cpp.hbs',
    config: c,
    args,
    streams: [],
    arrays,
    loops,
    functions: [{ name: N, calls: [] }],
    code: {
      signature: args.map((a) => `${a.cType} ${a.name}`).join(', '),
      interfaces: interfaceLines(args),
      arrays: arrays.flatMap((a) => arrayLines(a, true)),
      j: ident(j),
      accType: cppType(m.red.acc.type),
      identity: hp.as(m.red.acc.init, m.red.acc.type),
      combine: P(termNames).as(m.red.combine, m.red.acc.type),
      store: `${outNames.load(m.store.buf, m.store.index)} = ${P(outNames).as(m.store.value, names.bufElem(m.store.buf))}`,
      leftLoads: m.left.map(
        ({ b, index }) =>
          `${aT(b.name)}[s][ii][${varName(j)}] = row < n_rows ? ${loadNames.load(b.name, index)} : ${elemOf(b)}(0);`,
      ),
      rightLoads: m.right.map(
        ({ b, index }) =>
          `${bT(b.name)}[${varName(j)}][kk] = kcol < n_cols ? ${loadNames.load(b.name, index)} : ${elemOf(b)}(0);`,
      ),
      tripOuter: trip('L_i0'),
      tripInner: trip('L_mac'),
      constants: [
        `#define ${N}_TI ${TI}`,
        `#define ${N}_TK ${TK}`,
        `#define ${N}_IL ${IL}`,
        `#define ${N}_MAX_INNER ${MAX}`,
      ],
      types: [],
    },
    launch: {
      params: launchParams(f, ctx.extraDims(f)),
      prepare: [
        ...countDecls(f, (b) => ctx.sizeOf(f, b)),
        ...rangeDecls(f, ctx.manifestOp(f), '0', hp.as(m.rowLoop.hi, 'index')),
        `if (${dims[3]![1]} > ${MAX}) dype::fail("kernel ${N}: the inner dimension is " + std::to_string(${dims[3]![1]}) + "; the GEMM design holds at most ${MAX} on chip");`,
      ],
      call: '',
    },
    reference: { params: launchParams(f, ctx.extraDims(f)), body: referenceBody(f) },
    testbench: ctx.testbench(f),
    estimates: estimates('gemm', c, `ceil(rows/${TI}) * ceil(cols/${TK}) * (inner + 100)`),
  };
}

function sddmmVM(f: LoopFunc, m: SddmmMatch, ctx: BuildContext): KernelVM {
  const c = FPGA_DESIGN_DEFAULTS.sddmm;
  const N = f.name;
  const [LANES, MAX] = [c.lanes, c.maxInner];
  const locals = new Map<string, LElem>();
  for (const sz of f.sizes) locals.set(sz, 'index');
  locals.set(m.red.acc.var, m.red.acc.type);
  locals.set('__part', m.red.acc.type);
  const names = baseNames(f, locals);
  const [i, j, k, p] = [m.rowLoop.var, m.jVar, m.red.loop.var, m.nzLoop.var];
  const qT = (b: string): string => `q_t_${ident(b)}`;
  const kT = (b: string): string => `k_t_${ident(b)}`;
  // The stream holds the entries of rows [r_lo, r_hi) only; pos = nz_lo + q is the entry's position in the whole pattern.
  const vars = { [i]: 'row', [j]: 'gcol', [p]: 'pos', [m.red.acc.var]: 'a', __part: 'part[u]' };
  const termNames = renamed(names, vars, (buf, index) =>
    isOperand(m.rowOps, buf, index)
      ? `${qT(buf)}[${varName(k)}]`
      : isOperand(m.colOps, buf, index)
        ? `${kT(buf)}[${varName(k)}]`
        : undefined,
  );
  const loadNames = renamed(names, vars);
  const outNames = renamed(names, { ...vars, [m.red.acc.var]: 'acc_v' }, (buf) =>
    m.vals && buf === m.vals.name ? 'val' : undefined,
  );
  const P = (n: Names): CppPrinter => new CppPrinter(n);
  const args: KernelArg[] = [
    {
      name: 'nz',
      cType: `const ${N}_nz_t*`,
      kind: 'ptr',
      bundle: 'hbm0',
      bank: 0,
      host: 'nzs.data()',
      hostCount: 'nzs.size()',
      elemType: `${N}_nz_t`,
      output: false,
    },
  ];
  const rest = denseArgs(
    f,
    (b) => b.role === 'rowPtr' || b.role === 'colIdx' || (b.role === 'values' && b.name !== f.out),
    1,
  );
  const hp = P(names);
  const dims: [string, string][] = [
    ['nz_lo', 'q_lo'],
    ['nnz', 'q_hi - q_lo'],
    ['n_inner', hp.as(m.red.loop.hi, 'index')],
  ];
  for (const [d, h] of dims) rest.push({ name: d, cType: 'int32_t', kind: 'scalar', host: h, output: false });
  args.push(...rest);
  const valType = m.vals ? elemOf(m.vals) : 'float';
  const arrays: ArrayDecl[] = [
    ...m.rowOps.map(({ b }) => ({ b, n: qT(b.name) })),
    ...m.colOps.map(({ b }) => ({ b, n: kT(b.name) })),
  ].map(({ b, n }): ArrayDecl => ({
    name: n,
    type: elemOf(b),
    dims: [MAX],
    partitions: [{ dim: 1, kind: 'cyclic', factor: LANES }],
    unrolledBy: [{ dim: 1, factor: LANES }],
    storage: 'bram',
  }));
  const loops: LoopDecl[] = [
    { label: 'L_read', dataDependent: true, tripcount: { min: 0, max: MAX_TRIP, avg: 4096 } },
    { label: 'L_nz', dataDependent: true, tripcount: { min: 0, max: MAX_TRIP, avg: 4096 } },
    { label: 'L_ldq', dataDependent: true, tripcount: { min: 1, max: MAX, avg: 64 } },
    { label: 'L_ldk', dataDependent: true, tripcount: { min: 1, max: MAX, avg: 64 } },
    { label: 'L_dot', dataDependent: true, tripcount: { min: 1, max: MAX / LANES, avg: 1 } },
  ];
  const trip = (l: string): string => tripPragma(loops.find((x) => x.label === l))[0]!;
  const readVals = m.vals ? bufName(m.vals.name) : undefined;
  return {
    name: N,
    kernel: ctx.kernel,
    op: f.op,
    design: 'sddmm',
    template: 'sddmm.cpp.hbs',
    config: c,
    args,
    streams: [{ name: 'nz_s', type: `${N}_nz_t`, depth: 64, producers: [`${N}_read`], consumers: [`${N}_compute`] }],
    arrays,
    loops,
    functions: [
      { name: N, calls: [`${N}_read`, `${N}_compute`] },
      { name: `${N}_read`, calls: [] },
      { name: `${N}_compute`, calls: [] },
    ],
    code: {
      signature: args.map((a) => `${a.cType} ${a.name}`).join(', '),
      interfaces: interfaceLines(args),
      computeParams: rest.map((a) => `${a.cType} ${a.name}`).join(', '),
      computeArgs: rest.map((a) => a.name).join(', '),
      arrays: arrays.flatMap((a) => arrayLines(a, true)),
      k: ident(k),
      accType: cppType(m.red.acc.type),
      valType,
      identity: hp.as(m.red.acc.init, m.red.acc.type),
      combine: P(termNames).as(m.red.combine, m.red.acc.type),
      merge: P(termNames).as(combineWith(m.red.combine, '__part'), m.red.acc.type),
      store: `${outNames.load(m.store.buf, { k: 'var', name: p })} = ${P(outNames).as(m.store.value, names.bufElem(m.store.buf))}`,
      rowLoads: m.rowOps.map(({ b, index }) => `${qT(b.name)}[${varName(k)}] = ${loadNames.load(b.name, index)};`),
      colLoads: m.colOps.map(({ b, index }) => `${kT(b.name)}[${varName(k)}] = ${loadNames.load(b.name, index)};`),
      tripNz: trip('L_nz'),
      tripInner: trip('L_ldq'),
      tripDot: trip('L_dot'),
      constants: [`#define ${N}_LANES ${LANES}`, `#define ${N}_MAX_INNER ${MAX}`],
      types: [`struct ${N}_nz_t {`, '  int32_t row;', '  int32_t col;', `  ${valType} val;`, '};'],
    },
    launch: {
      params: launchParams(f, ctx.extraDims(f)),
      prepare: [
        ...countDecls(f, (b) => ctx.sizeOf(f, b)),
        ...rangeDecls(f, ctx.manifestOp(f), '0', hp.as(m.rowLoop.hi, 'index')),
        `if (${dims[2]![1]} > ${MAX}) dype::fail("kernel ${N}: the inner dimension is " + std::to_string(${dims[2]![1]}) + "; the SDDMM design holds at most ${MAX} on chip");`,
        `const int32_t q_lo = ${bufName(m.ptr.name)}[r_lo];`,
        `const int32_t q_hi = ${bufName(m.ptr.name)}[r_hi];`,
        `std::vector<${N}_nz_t> nzs(static_cast<size_t>(q_hi - q_lo));`,
        `for (int32_t r = r_lo; r < r_hi; r++)`,
        `  for (int32_t q = ${bufName(m.ptr.name)}[r]; q < ${bufName(m.ptr.name)}[r + 1]; q++) nzs[size_t(q - q_lo)] = {r, ${bufName(m.idx.name)}[q], ${readVals ? `${readVals}[q]` : `${valType}(0)`}};`,
      ],
      call: '',
    },
    reference: { params: launchParams(f, ctx.extraDims(f)), body: referenceBody(f) },
    testbench: ctx.testbench(f),
    estimates: estimates('sddmm', c, `nnz * ceil(k/${LANES}) + rows * k`),
  };
}

// ---------------------------------------------------------------- stream and generic loop nests

function loopNestVM(f: LoopFunc, m: StreamMatch | undefined, ctx: BuildContext): KernelVM {
  const design: FpgaDesignName = m ? 'stream' : 'generic';
  const c = FPGA_DESIGN_DEFAULTS[design];
  const args = plainArgs(f, 0);
  const loops = nestLoops(f);
  // A splittable op's top loop runs over [row_lo, row_hi), which the host clamps to the loop's own bounds.
  const op = ctx.manifestOp(f);
  const top = op.splittable && f.body[0]?.k === 'for' ? f.body[0] : undefined;
  const host = new CppPrinter(baseNames(f, new Map(f.sizes.map((s) => [s, 'index' as LElem]))));
  const [first, last] = top ? [host.as(top.lo, 'index'), host.as(top.hi, 'index')] : ['', ''];
  if (top)
    for (const [name, h] of [
      ['row_lo', 'r_lo'],
      ['row_hi', 'r_hi'],
    ] as const)
      args.push({ name, cType: 'int32_t', kind: 'scalar', host: h, output: false });
  const printed: LoopFunc = top
    ? { ...f, body: [{ ...top, lo: { k: 'var', name: ROW_LO }, hi: { k: 'var', name: ROW_HI } }] }
    : f;
  const body = plainBody(
    printed,
    (loop, innermost, label) => {
      const decl = loops.find((l) => l.label === label);
      const p: string[] = [];
      if (innermost) p.push('#pragma HLS PIPELINE II=1');
      if (m && loop.var === m.loop.var && c.lanes > 1) p.push(`#pragma HLS UNROLL factor=${c.lanes}`);
      return [...p, ...tripPragma(decl)];
    },
    { [ROW_LO]: 'row_lo', [ROW_HI]: 'row_hi' },
  );
  const cycles = m ? `ceil(items/${c.lanes})` : 'sum over the loop nest of its innermost trip counts (II=1)';
  return {
    name: f.name,
    kernel: ctx.kernel,
    op: f.op,
    design,
    template: 'loop_nest.cpp.hbs',
    config: c,
    args,
    streams: [],
    arrays: [],
    loops,
    functions: [{ name: f.name, calls: [] }],
    code: {
      signature: args.map((a) => `${a.cType} ${a.name}`).join(', '),
      interfaces: interfaceLines(args),
      body,
      constants: [],
      types: [],
    },
    launch: {
      params: launchParams(f, ctx.extraDims(f)),
      prepare: [...countDecls(f, (b) => ctx.sizeOf(f, b)), ...rangeDecls(f, op, first, last)],
      call: '',
    },
    reference: { params: launchParams(f, ctx.extraDims(f)), body: referenceBody(f) },
    testbench: ctx.testbench(f),
    estimates: estimates(design, c, cycles),
  };
}

export function buildKernelVM(f: LoopFunc, ctx: BuildContext): KernelVM {
  const m = matchDesign(f);
  const vm =
    m.kind === 'sparse-rows'
      ? sparseRowsVM(f, m, ctx)
      : m.kind === 'gemm'
        ? gemmVM(f, m, ctx)
        : m.kind === 'sddmm'
          ? sddmmVM(f, m, ctx)
          : loopNestVM(f, m.kind === 'stream' ? m : undefined, ctx);
  vm.launch.call = `${vm.name}(${vm.args.map((a) => a.host).join(', ')});`;
  return vm;
}
