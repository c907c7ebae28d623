/**
 * `dype compile`: the artifacts (docs/CLI.md) that every build has
 * (IR after each stage, wasm kernels with manifests), and the all-or-nothing
 * rule for bad programs, bad options and unwritable output directories.
 */
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseModule } from '../../ir/text-parser.js';
import { printModule } from '../../ir/printer.js';
import { programName } from '../../codegen/project.js';
import { writeProject } from '../../cli/project-writer.js';
import { cleanup, example, freshDir, REPO_ROOT, runCliAsync } from '../helpers/cli.js';

const dirs: string[] = [];
const tmp = (): string => {
  const d = freshDir('dype-compile-');
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach(cleanup));

function walk(dir: string, base = ''): string[] {
  return readdirSync(join(dir, base), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? walk(dir, join(base, e.name)) : [join(base, e.name)]))
    .sort();
}

describe('dype compile --targets wasm', () => {
  it('writes the IR after every stage and a validated wasm module with its manifest per kernel', async () => {
    const out = join(tmp(), 'out');
    const r = await runCliAsync(['compile', example('gcn.dy'), '--targets', 'wasm', '-o', out]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const files = walk(out);
    expect(files).toContain('wasm/gcn.wasm');
    expect(files).toContain('wasm/gcn.manifest.json');
    expect(files).toContain('ir/final.ir');
    expect(files.filter((f) => f.startsWith('ir/') && f.endsWith('.ir')).length).toBeGreaterThanOrEqual(5);
    expect(files.some((f) => f.endsWith('lower-kernels.loops'))).toBe(true);
    const bin = readFileSync(join(out, 'wasm/gcn.wasm'));
    expect(WebAssembly.validate(bin)).toBe(true);
    const manifest = JSON.parse(readFileSync(join(out, 'wasm/gcn.manifest.json'), 'utf8'));
    expect(manifest.kernel).toBe('gcn');
    expect(manifest.ops.map((o: { op: string }) => o.op)).toEqual(['op0', 'op1', 'op2', 'op3']);
    // Every graph-IR dump round-trips through the IR text parser.
    for (const f of files.filter((x) => x.endsWith('.ir'))) {
      const text = readFileSync(join(out, f), 'utf8');
      expect(printModule(parseModule(text))).toBe(text);
    }
    expect(files.some((f) => f.includes('.dype-staging'))).toBe(false);
  });

  it('rejects an unknown target and a missing -o as usage errors, writing nothing', async () => {
    const d = tmp();
    const out = join(d, 'out');
    const a = await runCliAsync(['compile', example('spmv.dy'), '--targets', 'wasm,vhdl', '-o', out]);
    expect(a.status).toBe(2);
    expect(a.stderr).toMatch(/unknown target 'vhdl'/);
    const b = await runCliAsync(['compile', example('spmv.dy')]);
    expect(b.status).toBe(2);
    expect(b.stderr).toMatch(/-o DIR/);
    expect(existsSync(out)).toBe(false);
  });

  it('a bad program fails with its diagnostic, exit 1, and leaves the output directory empty', async () => {
    const d = tmp();
    const src = join(d, 'bad.dy');
    writeFileSync(
      src,
      'kernel k(A: csr<f32>[n, n], x: dense<f32>[n]) -> (y: dense<f32>[n]) {\n  y[i] = A[i, j] * z[j];\n}\n',
    );
    const out = join(d, 'out');
    const r = await runCliAsync(['compile', src, '--targets', 'wasm', '-o', out]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/bad\.dy:2:\d+: error DY2\d{3}/);
    expect(existsSync(out) ? walk(out) : []).toEqual([]);
  });

  it('an unwritable output directory is one clear error and no partial files', async () => {
    if (process.getuid?.() === 0) {
      // root ignores permission bits; use a path whose parent is a file instead.
      const d = tmp();
      writeFileSync(join(d, 'file'), 'x');
      const r = await runCliAsync(['compile', example('spmv.dy'), '--targets', 'wasm', '-o', join(d, 'file', 'out')]);
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/cannot create the output directory/);
      return;
    }
    const d = tmp();
    chmodSync(d, 0o500);
    const r = await runCliAsync(['compile', example('spmv.dy'), '--targets', 'wasm', '-o', join(d, 'out')]);
    chmodSync(d, 0o700);
    expect(r.status).toBe(1);
  });
});

describe('dype compile --profile (all targets)', () => {
  it('writes every target, plan.json and report.html with its plots at the top of the output directory', async () => {
    const out = join(tmp(), 'out');
    const m = (f: string): string => join(REPO_ROOT, '..', 'shared', 'data', 'matrices', f);
    const r = await runCliAsync(
      [
        'compile',
        example('spmv.dy'),
        '-o',
        out,
        '--profile',
        `A=${m('cora.cites')}`,
        '--profile',
        `A=${m('ca-GrQc.mtx')}`,
      ],
      { timeoutMs: 120_000 },
    );
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/targets: wasm, cuda, hls, runtime, report/);
    const files = walk(out);
    for (const f of ['plan.json', 'report.html', 'runtime/spmv.runtime.ts', 'cuda/spmv.cu', 'wasm/spmv.wasm'])
      expect(files).toContain(f);
    expect(files.some((f) => f.startsWith('hls/'))).toBe(true);
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).not.toMatch(/<script|(src|href)="?https?:/i);
    // Pareto front, a decision map per objective and timeline, each a non-empty SVG.
    const svgs = html.match(/<svg[\s\S]*?<\/svg>/g) ?? [];
    expect(svgs.length).toBeGreaterThanOrEqual(5);
    for (const svg of svgs) expect(svg).toMatch(/<(rect|circle|polyline|line)\b/);
    expect(html).toMatch(/Decision maps: the guards of each objective/);
    for (const o of ['throughput, initial', 'energy', 'latency']) expect(html).toContain(`partition picked (${o})`);
    expect(html).toMatch(/<th class="l">guards of<\/th>/);
    // The guards' held-out figures beside the training ones, in the report and in plan.json.
    expect(html).toMatch(/Guards: training and held-out/);
    expect(html).toMatch(/held out: 5-fold nested cross-validation/);
    expect(html).toMatch(/profile A=\S*cora\.cites left out/);
    const guards = JSON.parse(readFileSync(join(out, 'plan.json'), 'utf8')).kernels.spmv.guards.throughput;
    expect(guards.heldOut).toMatchObject({
      folds: 5,
      meanLossPct: expect.any(Number),
      withinTolerance: expect.any(Number),
      treeOnly: expect.any(Object),
    });
    expect(guards.heldOut.byProfile).toHaveLength(2);
    expect(guards.model.grid.length).toBeGreaterThan(1);
    expect(guards.partitions).toHaveLength(guards.model.partitions);
  });
});

describe('project writer and program names', () => {
  it('refuses paths outside the project and writes nothing then', () => {
    const d = tmp();
    expect(() =>
      writeProject(
        d,
        new Map([
          ['a.txt', 'a'],
          ['../escape.txt', 'x'],
        ]),
      ),
    ).toThrow(/not inside the project/);
    expect(readdirSync(d)).toEqual([]);
  });
  it('writes nested files and keeps existing ones', () => {
    const d = tmp();
    writeFileSync(join(d, 'keep.txt'), 'k');
    writeProject(
      d,
      new Map<string, string | Uint8Array>([
        ['x/y/z.txt', 'z'],
        ['b.bin', new Uint8Array([1, 2, 3])],
      ]),
    );
    expect(walk(d)).toEqual(['b.bin', 'keep.txt', 'x/y/z.txt']);
    expect([...readFileSync(join(d, 'b.bin'))]).toEqual([1, 2, 3]);
  });
  it('makes program names C identifiers', () => {
    expect(programName('examples/gcn.dy')).toBe('gcn');
    expect(programName('a/my-prog.v2.dy')).toBe('my_prog_v2');
    expect(programName('3d.dy')).toBe('p_3d');
  });
});
