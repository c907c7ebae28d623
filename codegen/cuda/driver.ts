/**
 * The per-kernel part of dype_check (templates/check.cpp.hbs holds the
 * rest): load each parameter from its Matrix Market file (sparse ones in CSR
 * and CSC), bind dims, fill the buffers struct, and compare every result
 * with its reference. The loading is shared with dype_abi_check (abi-check.ts).
 */
import { cString } from './names.js';
import { storageType } from './cprint.js';
import type { KernelPlan, Storage } from './host.js';

function dimBind(dim: string | number, value: string, what: string): string {
  return typeof dim === 'number'
    ? `expect(${dim}, ${value}, ${cString(what)});`
    : `bind_dim(dims, ${cString(dim)}, ${value}, ${cString(what)});`;
}

/** A pattern figure's size symbol (variant.ts figureSize), named as the Sparse method that gives it. */
const FIGURE = /^(nnz|maxrow|maxcol)\((.*)\)$/;

/** The host variable holding each kernel parameter (`in<n>`: a Sparse, a Dense's values, or a scalar's one value). */
export type HostInputs = Map<string, string>;

/**
 * Lines that load every parameter from its --input file (or --param) and
 * bind the dims (`loads`), and lines that set the sizes through `b->` (the
 * buffers struct, or any struct with the same size fields).
 */
export function inputLines(plan: KernelPlan): { loads: string[]; sizes: string[]; host: HostInputs } {
  const { kernel, manifest, sizes } = plan;
  const out: string[] = [];
  const dimNames = [...sizes.keys()].filter((s) => !FIGURE.test(s));
  out.push(`Dims dims = dims_of(cli, {${dimNames.map(cString).join(', ')}});`);
  const host: HostInputs = new Map();
  kernel.params.forEach((p, n) => {
    const t = manifest.params[n]!.type;
    const v = `in${n}`;
    host.set(p.name, v);
    if (t.format !== 'dense') {
      out.push(`const Sparse ${v} = load_sparse(cli, ${cString(p.name)});`);
      out.push(
        dimBind(t.shape[0]!, `${v}.rows`, `rows of ${p.name}`),
        dimBind(t.shape[1]!, `${v}.cols`, `columns of ${p.name}`),
      );
    } else if (t.shape.length === 0) {
      out.push(`const std::vector<double> ${v}(1, scalar_param(cli, ${cString(p.name)}));`);
    } else {
      out.push(
        `const Dense ${v}d = load_dense(cli, ${cString(p.name)});`,
        `const std::vector<double>& ${v} = ${v}d.v;`,
      );
      if (t.shape.length === 2)
        out.push(
          dimBind(t.shape[0]!, `${v}d.rows`, `rows of ${p.name}`),
          dimBind(t.shape[1]!, `${v}d.cols`, `columns of ${p.name}`),
        );
      else if (t.shape.length === 1) out.push(dimBind(t.shape[0]!, `${v}d.rows * ${v}d.cols`, `length of ${p.name}`));
      else out.push(`(void)${v}d;`);
    }
  });
  const set = [...sizes].map(([s, c]) => {
    const fig = FIGURE.exec(s);
    return fig ? `b->${c} = (int)${host.get(fig[2]!)!}.${fig[1]!}();` : `b->${c} = dim(dims, ${cString(s)});`;
  });
  return { loads: out, sizes: set, host };
}

const PART: Record<string, string> = { rowPtr: 'rowPtr', colIdx: 'colIdx', colPtr: 'colPtr', rowIdx: 'rowIdx' };

/** The host vector a parameter's storage is filled from (a Sparse's array, or the Dense values). */
export function hostSource(plan: KernelPlan, host: HostInputs, s: Storage): string {
  const v = host.get(s.of)!;
  const t = plan.manifest.values[s.of]!;
  const suffix = s.key.slice(s.of.length + 1);
  if (t.format === 'dense') return v;
  if (PART[suffix] !== undefined) return `${v}.${PART[suffix]!}`;
  return suffix === 'cscVals' ? `${v}.cscVals` : `${v}.vals`;
}

/**
 * The buffer holding a sparse result's values when the kernel is done: the one the last op writing it wrote,
 * in its pattern source's layout (`R.vals`, CSR order, or `R.cscVals`, CSC order); `R.vals` where no op writes it.
 */
export function sparseResultValues(plan: KernelPlan, result: string): string {
  const writes = plan.ops.map((o) => o.f.out).filter((b) => b === `${result}.vals` || b === `${result}.cscVals`);
  return writes[writes.length - 1] ?? `${result}.vals`;
}

export function checkBody(plan: KernelPlan): string[] {
  const { kernel, manifest, storages, prefix } = plan;
  const { loads, sizes, host } = inputLines(plan);
  const out = [
    ...loads,
    `${prefix}_buffers bs;`,
    'std::memset(&bs, 0, sizeof bs);',
    `${prefix}_buffers* b = &bs;`,
    ...sizes,
    'Arena arena;',
  ];
  for (const s of storages.values()) {
    const T = storageType(s.elem);
    const what = cString(`${s.of} ${s.what}`);
    if (s.kind === 'param')
      out.push(`b->${s.c} = arena.upload<${T}>(${hostSource(plan, host, s)}, ${s.count}, ${what});`);
    else out.push(`b->${s.c} = arena.alloc<${T}>(${s.count});`);
  }
  out.push('Checker chk(cli);', 'auto compare = [&](const std::string& label) {', '  std::string s = "ok";');
  for (const r of manifest.results) {
    const t = r.type;
    const key = t.format === 'dense' ? r.name : sparseResultValues(plan, r.name);
    const st = storages.get(key)!;
    const rtol = `(cli.rtol >= 0 ? cli.rtol : ${t.dtype === 'f64' ? '1e-9' : '1e-4'})`;
    const pattern = t.format === 'dense' ? 'nullptr' : `&${host.get(manifest.roots[r.name]!)!}`;
    const csc = key.endsWith('.cscVals') ? ', true' : '';
    out.push(
      `  { const std::string r = chk.compare(label + ${cString(` ${r.name}`)}, ${cString(r.name)}, download(b->${st.c}, ${st.count}), ${pattern}, ${rtol}${csc}); if (r == "MISMATCH" || (r == "no-ref" && s == "ok")) s = r; }`,
    );
  }
  out.push('  return s;', '};');
  // The same buffers with every longest-row figure 0 (not known): adaptive-rows then queues its long-row pass
  // whatever the rows, and the two timings' difference is what the pass's queued operations cost.
  const longest = [...plan.sizes].filter(([s]) => /^max(row|col)\(/.test(s)).map(([, c]) => c);
  if (longest.length > 0)
    out.push(`${prefix}_buffers unknown_longest = *b;`, ...longest.map((c) => `unknown_longest.${c} = 0;`));
  out.push(
    `check_and_time<${prefix}_buffers>(${cString(kernel.name)}, b, ${longest.length > 0 ? '&unknown_longest' : 'nullptr'}, ${prefix}_run_buffers, ${prefix}_op, ${prefix}_op_count(), ${prefix}_variant_count, ${prefix}_variant_name, ${prefix}_op_name, compare, chk, csv, cli, stream);`,
  );
  out.push('return chk.failures;');
  return out.map((l) => `  ${l}`);
}
