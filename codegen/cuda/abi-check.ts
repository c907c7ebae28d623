/**
 * The per-kernel part of dype_abi_check (templates/abi_check.cpp.hbs holds
 * the rest): the kernel described as data for a driver that knows nothing
 * but the native ABI. Its storages (with the host contents of the
 * parameters), its ops as the manifest states them (buffers and sizes in
 * order, the pattern figures, splittable, the split range, splitWrites, the
 * out buffer and its row width, the pointers a split balances by), its
 * results, and its program order with repeats and `X.next` copy-backs.
 */
import type { LElem } from '../../ir/loops.js';
import { cString } from './names.js';
import { storageType } from './cprint.js';
import { hostSource, inputLines, sparseResultValues } from './driver.js';
import { cDouble, manifestOp, type KernelPlan } from './host.js';
import type { WasmStep } from '../../runtime/wasm/manifest.js';

const ELEM: Record<LElem, string> = {
  f32: 'Elem::F32',
  f64: 'Elem::F64',
  i64: 'Elem::I64',
  i32: 'Elem::I32',
  index: 'Elem::I32',
  bool: 'Elem::I32',
};

export function abiCheckBody(plan: KernelPlan): string[] {
  const { kernel, manifest, storages, sizes, ops } = plan;
  const { loads, sizes: setSizes, host } = inputLines(plan);
  const out = [...loads];
  // The size fields of the buffers struct, so that the storages' counts read as they do there.
  out.push(
    `struct Sizes { ${[...sizes.values()].map((c) => `int ${c};`).join(' ')} } bs;`,
    'Sizes* b = &bs;',
    ...setSizes,
  );
  const index = new Map([...storages.keys()].map((k, n) => [k, n]));
  const at = (key: string): number => {
    const n = index.get(key);
    if (n === undefined) throw new Error(`cuda emitter: kernel ${kernel.name}: no storage '${key}'`);
    return n;
  };
  const size = (d: string | number): string => (typeof d === 'number' ? `${d}LL` : `(long long)b->${sizes.get(d)!}`);
  out.push('AbiProgram P;', `P.kernel = ${cString(kernel.name)};`, 'P.storages = {');
  for (const s of storages.values()) {
    const init =
      s.kind === 'param'
        ? `host_bytes<${storageType(s.elem)}>(${hostSource(plan, host, s)}, ${s.count}, ${cString(`${s.of} ${s.what}`)})`
        : 'std::vector<unsigned char>()';
    out.push(`  {${cString(s.key)}, ${ELEM[s.elem]}, ${s.count}, ${init}},`);
  }
  out.push('};', 'P.ops = {');
  for (const op of ops) {
    const f = op.f;
    const m = manifestOp(plan, op);
    const ptr = f.buffers.find((x) => x.role === 'rowPtr' || x.role === 'colPtr');
    const root = ptr ? host.get(manifest.roots[ptr.of]!)! : undefined;
    const figures = root
      ? `{(long long)${root}.rows, (long long)${root}.cols, ${root}.nnz(), ${root}.maxrow(), ${root}.maxcol()}`
      : '{0, 0, 0, 0, 0}';
    const rows = m.splitRange === undefined ? '-1LL' : size(m.splitRange);
    const writes =
      m.splitWrites === 'rows' ? 'Writes::Rows' : m.splitWrites === 'entries' ? 'Writes::Entries' : 'Writes::Unknown';
    const shape = manifest.values[f.result]!.shape;
    const width = shape.length <= 1 ? '1LL' : shape.slice(1).map(size).join(' * ');
    const bal = m.balanceBy
      ? `&${host.get(m.balanceBy.root)!}.${m.balanceBy.layout === 'csr' ? 'rowPtr' : 'colPtr'}`
      : 'nullptr';
    const outAt = at(op.storage[f.buffers.findIndex((x) => x.name === f.out)]!);
    out.push(
      `  {${cString(f.op)}, {${op.storage.map(at).join(', ')}}, {${op.sizes.map((c) => `(long long)b->${c}`).join(', ')}}, ${figures}, ${m.splittable}, ${rows}, ${writes}, ${outAt}, ${width}, ${bal}},`,
    );
  }
  out.push('};', 'P.results = {');
  for (const r of manifest.results) {
    const key = r.type.format === 'dense' ? r.name : sparseResultValues(plan, r.name);
    const pattern = r.type.format === 'dense' ? 'nullptr' : `&${host.get(manifest.roots[r.name]!)!}`;
    out.push(
      `  {${cString(r.name)}, ${at(key)}, ${pattern}, (cli.rtol >= 0 ? cli.rtol : ${r.type.dtype === 'f64' ? '1e-9' : '1e-4'}), ${key.endsWith('.cscVals')}},`,
    );
  }
  out.push('};');
  const opIndex = new Map(ops.map((op, n) => [op.f.op, n]));
  const steps = (list: readonly WasmStep[], ind: string, depth: number): string[] =>
    list.flatMap((s): string[] => {
      if (s.kind === 'repeat') {
        const count = typeof s.count === 'number' ? `${s.count}` : `b->${sizes.get(s.count.param)!}`;
        const it = `dy_it${depth}`;
        if (s.until) {
          // The host reads the watched value back after every trip and stops as the runtime does.
          const v = at(s.until.value);
          const within = s.until.within === undefined ? '-1.0' : cDouble(s.until.within);
          const [prev, cur] = [`dy_prev${depth}`, `dy_cur${depth}`];
          return [
            `${ind}{  // ${s.id}: at most ${count} trips, until ${s.until.value} ${s.until.within === undefined ? 'stable' : `within ${s.until.within}`}`,
            `${ind}  std::vector<double> ${prev}, ${cur};`,
            `${ind}  if ((rc = R.value(${v}, ${prev})) != 0) return rc;`,
            `${ind}  for (long long ${it} = 0; ${it} < ${count}; ++${it}) {`,
            ...steps(s.body, `${ind}    `, depth + 1),
            `${ind}    if ((rc = R.value(${v}, ${cur})) != 0) return rc;`,
            `${ind}    if (abi_converged(${prev}, ${cur}, ${within})) break;`,
            `${ind}    ${prev}.swap(${cur});`,
            `${ind}  }`,
            `${ind}}`,
          ];
        }
        return [
          `${ind}for (long long ${it} = 0; ${it} < ${count}; ++${it}) {`,
          ...steps(s.body, `${ind}  `, depth + 1),
          `${ind}}`,
        ];
      }
      const n = opIndex.get(s.op)!;
      const op = ops[n]!;
      const lines = [`${ind}if ((rc = R.op(${n})) != 0) return rc;`];
      if (op.f.out.endsWith('.next')) {
        const from = at(op.storage[op.f.buffers.findIndex((x) => x.name === op.f.out)]!);
        lines.push(`${ind}if ((rc = R.copy_back(${from}, ${at(op.f.out.slice(0, -'.next'.length))})) != 0) return rc;`);
      }
      return lines;
    });
  out.push(
    'P.program = [&](AbiRun& R) -> int {',
    '  int rc = 0;',
    ...steps(manifest.program, '  ', 0),
    '  return rc;',
    '};',
  );
  out.push('return run_abi_checks(P, cli);');
  return out.map((l) => `  ${l}`);
}
