/**
 * The dense schedules: tiled (16 x 16 output tiles over shared-memory tiles
 * of a contraction) and elementwise. See variants.ts for the schedules together.
 */
import type { LStmt } from '../../ir/loops.js';
import { cType, StmtPrinter, type LLoad } from './cprint.js';
import { exprVars, freeVars, isConst0, isSparseOp, loads, onlySizes, reductionAt, topLoop, type For } from './nest.js';
import {
  type Variant,
  OpCode,
  indent,
  kernelHead,
  launchLine,
  RANGE_PARAMS,
  RANGE_ARGS,
  clampLines,
} from './variant.js';

// ---------------------------------------------------------------- tiled

export function tiled(o: OpCode): Variant | undefined {
  const f = o.f;
  const top = topLoop(f);
  if (!top || isSparseOp(f) || !onlySizes(top.lo, f) || !onlySizes(top.hi, f)) return undefined;
  if (top.body.length !== 1 || top.body[0]!.k !== 'for') return undefined;
  const kl = top.body[0] as For;
  if (!isConst0(kl.lo) || !onlySizes(kl.hi, f)) return undefined;
  if (kl.body.length < 2) return undefined;
  const red = reductionAt(kl.body, 1);
  if (!red || kl.body[0] !== red.init) return undefined;
  const jl = red.loop;
  if (!isConst0(jl.lo) || !onlySizes(jl.hi, f) || jl.body.length !== 1 || jl.body[0]!.k !== 'set') return undefined;
  if (
    ![...freeVars(jl.body)].every(
      (v) => v === top.var || v === kl.var || v === jl.var || v === red.init.var || f.sizes.includes(v),
    )
  )
    return undefined;
  const [iv, kv, jv] = [top.var, kl.var, jl.var];
  const set = jl.body[0] as Extract<LStmt, { k: 'set' }>;
  // Loads of the dot-product body that depend on (i, j) or (j, k) only go through tiles.
  const tileA: LLoad[] = [];
  const tileB: LLoad[] = [];
  for (const e of loads(set.value)) {
    if (loads(e.index).length > 0) continue;
    const vs = exprVars(e.index);
    const nonSize = [...vs].filter((v) => !f.sizes.includes(v));
    if (!nonSize.includes(jv)) continue;
    if (nonSize.every((v) => v === iv || v === jv)) tileA.push(e);
    else if (nonSize.every((v) => v === kv || v === jv)) tileB.push(e);
  }
  if (tileA.length + tileB.length === 0) return undefined;
  const p = o.p;
  const name = `${o.base}_tiled`;
  const [I, Kc, J] = [p.var(iv), p.var(kv), p.var(jv)];
  const acc = p.var(red.init.var);
  const T = cType(red.init.type);
  const hook = new Map<LLoad, string>();
  const shared: string[] = [];
  const fills: string[] = [];
  tileA.forEach((e, n) => {
    const c = `dy_ta${n}`;
    const elem = p.names.buf(e.buf).elem;
    shared.push(`__shared__ ${elem === 'bool' ? 'int' : cType(elem)} ${c}[16][17];`);
    hook.set(e, `${c}[dy_ty][dy_t]`);
    fills.push(
      `    { const int ${I} = min(dy_i0 + dy_ty, dy_hi - 1); const int ${J} = min(dy_jb + dy_tx, dy_J - 1); ${c}[dy_ty][dy_tx] = ${p.load(e)}; }`,
    );
  });
  tileB.forEach((e, n) => {
    const c = `dy_tb${n}`;
    const elem = p.names.buf(e.buf).elem;
    shared.push(`__shared__ ${elem === 'bool' ? 'int' : cType(elem)} ${c}[16][17];`);
    hook.set(e, `${c}[dy_t][dy_tx]`);
    fills.push(
      `    { const int ${Kc} = min(dy_k0 + dy_tx, dy_K - 1); const int ${J} = min(dy_jb + dy_ty, dy_J - 1); ${c}[dy_ty][dy_tx] = ${p.load(e)}; }`,
    );
  });
  const tp = p.with(new Map(), (e) => hook.get(e));
  const rest = new StmtPrinter(p).block(kl.body.slice(2), '    ');
  const device = [
    `${kernelHead(o, name, 256, RANGE_PARAMS)} {`,
    ...indent(shared, '  '),
    '  const int dy_tx = (int)threadIdx.x, dy_ty = (int)threadIdx.y;',
    `  const int dy_K = ${o.host(kl.hi)}, dy_J = ${o.host(jl.hi)};`,
    '  const int dy_i0 = dy_lo + (int)blockIdx.x * 16, dy_k0 = (int)blockIdx.y * 16;',
    '  const bool dy_act = dy_i0 + dy_ty < dy_hi && dy_k0 + dy_tx < dy_K;',
    `  const int ${I} = min(dy_i0 + dy_ty, dy_hi - 1);`,
    `  const int ${Kc} = min(dy_k0 + dy_tx, dy_K - 1);`,
    `  ${T} ${acc} = ${p.as(red.init.value, red.init.type)};`,
    '  for (int dy_jb = 0; dy_jb < dy_J; dy_jb += 16) {',
    ...fills,
    '    __syncthreads();',
    '    for (int dy_t = 0, dy_n = min(16, dy_J - dy_jb); dy_t < dy_n; ++dy_t) {',
    `      const int ${J} = dy_jb + dy_t;`,
    `      (void)${J};`,
    `      ${acc} = ${tp.as(set.value, red.init.type)};`,
    '    }',
    '    __syncthreads();',
    '  }',
    '  if (dy_act) {',
    ...rest,
    '  }',
    '}',
  ];
  const launch = [
    ...clampLines(o, top),
    `const long long dy_rows = (long long)dy_hi - dy_lo, dy_cols = ${o.host(kl.hi)};`,
    'if (dy_rows <= 0 || dy_cols <= 0) return 0;',
    '// Row tiles on x, whose limit is 2^31 - 1 blocks (y allows 65535).',
    'if ((dy_rows + 15) / 16 > 2147483647LL || (dy_cols + 15) / 16 > 65535LL) return DYPE_ERR_TOO_LARGE;',
    launchLine(name, 'dim3((unsigned)((dy_rows + 15) / 16), (unsigned)((dy_cols + 15) / 16))', 'dim3(16, 16)', [
      ...o.args(),
      ...RANGE_ARGS,
    ]),
  ];
  return {
    name: 'tiled',
    cname: 'tiled',
    note: `16 x 16 output tiles; ${tileA.length + tileB.length} operand(s) of the dense reduction staged in shared-memory tiles`,
    device,
    launch,
    extra: [],
  };
}

// ---------------------------------------------------------------- elementwise

export function elementwise(o: OpCode): Variant | undefined {
  const f = o.f;
  const top = topLoop(f);
  if (!top || isSparseOp(f)) return undefined;
  const nest: For[] = [top];
  let inner = top.body;
  while (inner.length === 1 && inner[0]!.k === 'for') {
    nest.push(inner[0] as For);
    inner = (inner[0] as For).body;
  }
  let hasLoop = false;
  for (const s of inner) if (s.k === 'for' || s.k === 'if') hasLoop = true;
  if (hasLoop) return undefined;
  if (!nest.every((l) => onlySizes(l.lo, f) && onlySizes(l.hi, f))) return undefined;
  const name = `${o.base}_elementwise`;
  const p = o.p;
  // The top loop runs over the clamped range [dy_lo, dy_hi); the inner ones over their whole ranges.
  const ext = nest.map((l, n) =>
    n === 0
      ? 'const long long dy_n0 = (long long)dy_hi - dy_lo;'
      : `const long long dy_n${n} = (long long)(${o.host(l.hi)}) - (${o.host(l.lo)});`,
  );
  const decode: string[] = ['    long long dy_r = dy_e;'];
  for (let n = nest.length - 1; n >= 0; n--) {
    const l = nest[n]!;
    if (n === 0) decode.push(`    const int ${p.var(l.var)} = dy_lo + (int)dy_r;`);
    else
      decode.push(
        `    const int ${p.var(l.var)} = (${o.host(l.lo)}) + (int)(dy_r % dy_n${n});`,
        `    dy_r /= dy_n${n};`,
      );
  }
  const total = nest.map((_, n) => `dy_n${n}`).join(' * ');
  const device = [
    `${kernelHead(o, name, 256, RANGE_PARAMS)} {`,
    ...ext.map((l) => `  ${l}`),
    `  const long long dy_total = ${total};`,
    '  for (long long dy_e = (long long)blockIdx.x * blockDim.x + threadIdx.x; dy_e < dy_total; dy_e += (long long)gridDim.x * blockDim.x) {',
    ...decode,
    ...new StmtPrinter(p).block(inner, '    '),
    '  }',
    '}',
  ];
  const launch = [
    ...clampLines(o, top),
    ...ext,
    `if (${nest.map((_, n) => `dy_n${n} <= 0`).join(' || ')}) return 0;`,
    `const long long dy_total = ${total};`,
    'const long long dy_blocks = (dy_total + 255) / 256 < 1048576LL ? (dy_total + 255) / 256 : 1048576LL;',
    launchLine(name, '(unsigned)dy_blocks', '256', [...o.args(), ...RANGE_ARGS]),
  ];
  return {
    name: 'elementwise',
    cname: 'elementwise',
    note: `one thread per element of the ${nest.length}-deep dense nest (grid-stride, innermost index fastest)`,
    device,
    launch,
    extra: [],
  };
}
