/**
 * `dype hls` and the hls target of `dype compile` through the built CLI:
 * the same project either way, usage and program errors leave nothing behind.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { example, runCli } from '../helpers/cli.js';

const work = mkdtempSync(join(tmpdir(), 'dype-hls-cli-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('dype hls', () => {
  it('writes the same project as dype compile --targets hls', () => {
    const a = join(work, 'a');
    const b = join(work, 'b');
    const r1 = runCli(['hls', example('pagerank.dy'), '-o', a]);
    expect(r1.stderr).toBe('');
    expect(r1.status).toBe(0);
    expect(r1.stdout).toMatch(/^wrote \d+ files to /);
    const r2 = runCli(['compile', example('pagerank.dy'), '-o', b, '--targets', 'hls']);
    expect(r2.status).toBe(0);
    for (const f of ['Makefile', 'connectivity.cfg', 'README.md', 'estimates.json', 'host/pagerank_host.cpp', 'pagerank_op2/pagerank_op2.cpp', 'csim/ap_int.h']) {
      expect(readFileSync(join(b, 'hls', f), 'utf8')).toBe(readFileSync(join(a, f), 'utf8'));
    }
    const est = JSON.parse(readFileSync(join(a, 'estimates.json'), 'utf8')) as { kernels: Record<string, { design: string; ii: number; resources: { dsp: number } }> };
    expect(est.kernels['pagerank_op2']!.design).toBe('spmv');
    expect(est.kernels['pagerank_op2']!.ii).toBe(1);
    expect(est.kernels['pagerank_op2']!.resources.dsp).toBeGreaterThan(0);
    expect(readFileSync(join(a, 'connectivity.cfg'), 'utf8')).toContain('sp=pagerank_op2_1.nz_0:HBM[0]');
  });

  it('needs -o (usage, exit 2)', () => {
    const r = runCli(['hls', example('spmv.dy')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('dype hls needs -o DIR');
  });

  it('a bad program is one error, exit 1, and no output folder', () => {
    const bad = join(work, 'bad.dy');
    writeFileSync(bad, 'kernel k(A: csr<f32>[n, n], x: dense<f32>[n]) -> (y: dense<f32>[n]) {\n  y[i] = A[i, j] * z[j];\n}\n');
    const out = join(work, 'bad-out');
    const r = runCli(['hls', bad, '-o', out]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/bad\.dy:2:\d+: error DY\d{4}/);
    expect(existsSync(out) ? readdirSync(out) : []).toEqual([]);
  });
});
