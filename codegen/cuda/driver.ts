/**
 * The per-kernel part of dype_check (templates/check.cu.hbs holds the rest):
 * load each parameter from its Matrix Market file (sparse ones in CSR and
 * CSC), bind dims, fill the buffers struct, and compare every result with
 * its reference.
 */
import { cString } from './names.js';
import { storageType } from './cprint.js';
import type { KernelPlan } from './host.js';

function dimBind(dim: string | number, value: string, what: string): string {
  return typeof dim === 'number' ? `expect(${dim}, ${value}, ${cString(what)});` : `bind(dims, ${cString(dim)}, ${value}, ${cString(what)});`;
}

export function checkBody(plan: KernelPlan): string[] {
  const { kernel, manifest, storages, sizes, prefix } = plan;
  const out: string[] = [];
  const dimNames = [...sizes.keys()].filter((s) => !s.startsWith('nnz('));
  out.push(`Dims dims = dims_of(cli, {${dimNames.map(cString).join(', ')}});`);
  const host = new Map<string, string>();
  kernel.params.forEach((p, n) => {
    const t = manifest.params[n]!.type;
    const v = `in${n}`;
    host.set(p.name, v);
    if (t.format !== 'dense') {
      out.push(`const Sparse ${v} = load_sparse(cli, ${cString(p.name)});`);
      out.push(dimBind(t.shape[0]!, `${v}.rows`, `rows of ${p.name}`), dimBind(t.shape[1]!, `${v}.cols`, `columns of ${p.name}`));
    } else if (t.shape.length === 0) {
      out.push(`const std::vector<double> ${v}(1, scalar_param(cli, ${cString(p.name)}));`);
    } else {
      out.push(`const Dense ${v}d = load_dense(cli, ${cString(p.name)});`, `const std::vector<double>& ${v} = ${v}d.v;`);
      if (t.shape.length === 2) out.push(dimBind(t.shape[0]!, `${v}d.rows`, `rows of ${p.name}`), dimBind(t.shape[1]!, `${v}d.cols`, `columns of ${p.name}`));
      else if (t.shape.length === 1) out.push(dimBind(t.shape[0]!, `${v}d.rows * ${v}d.cols`, `length of ${p.name}`));
      else out.push(`(void)${v}d;`);
    }
  });
  out.push(`${prefix}_buffers bs;`, 'std::memset(&bs, 0, sizeof bs);', `${prefix}_buffers* b = &bs;`);
  for (const [s, c] of sizes) {
    const nnz = /^nnz\((.*)\)$/.exec(s);
    if (nnz) out.push(`b->${c} = (int)${host.get(nnz[1]!)!}.nnz();`);
    else out.push(`b->${c} = dim(dims, ${cString(s)});`);
  }
  out.push('Arena arena;');
  const part: Record<string, string> = { rowPtr: 'rowPtr', colIdx: 'colIdx', colPtr: 'colPtr', rowIdx: 'rowIdx' };
  for (const s of storages.values()) {
    const T = storageType(s.elem);
    const what = cString(`${s.of} ${s.what}`);
    if (s.kind === 'param') {
      const v = host.get(s.of)!;
      const t = manifest.values[s.of]!;
      const suffix = s.key.slice(s.of.length + 1);
      let src: string;
      if (t.format === 'dense') src = v;
      else if (part[suffix] !== undefined) src = `${v}.${part[suffix]!}`;
      else src = suffix === 'cscVals' ? `${v}.cscVals` : `${v}.vals`;
      out.push(`b->${s.c} = arena.upload<${T}>(${src}, ${s.count}, ${what});`);
    } else out.push(`b->${s.c} = arena.alloc<${T}>(${s.count});`);
  }
  out.push('Checker chk(cli);', 'auto compare = [&](const std::string& label) {', '  std::string s = "ok";');
  for (const r of manifest.results) {
    const t = r.type;
    const key = t.format === 'dense' ? r.name : `${r.name}.vals`;
    const st = storages.get(key)!;
    const rtol = `(cli.rtol >= 0 ? cli.rtol : ${t.dtype === 'f64' ? '1e-9' : '1e-4'})`;
    const pattern = t.format === 'dense' ? 'nullptr' : `&${host.get(manifest.roots[r.name]!)!}`;
    out.push(`  { const std::string r = chk.compare(label + ${cString(` ${r.name}`)}, ${cString(r.name)}, download(b->${st.c}, ${st.count}), ${pattern}, ${rtol}); if (r == "MISMATCH" || (r == "no-ref" && s == "ok")) s = r; }`);
  }
  out.push('  return s;', '};');
  out.push(`check_and_time<${prefix}_buffers>(${cString(kernel.name)}, b, ${prefix}_run_buffers, ${prefix}_op, ${prefix}_op_count(), ${prefix}_variant_count, ${prefix}_variant_name, ${prefix}_op_name, compare, chk, csv, cli, stream);`);
  out.push('return chk.failures;');
  return out.map((l) => `  ${l}`);
}
