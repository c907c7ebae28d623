/**
 * `dype hls` and the hls target of `dype compile` through the built CLI:
 * the same project either way, usage and program errors leave nothing behind.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
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
    for (const f of [
      'Makefile',
      'connectivity_pagerank.cfg',
      'README.md',
      'estimates.json',
      'host/pagerank_host.cpp',
      'pagerank_op2/pagerank_op2.cpp',
      'csim/ap_int.h',
    ]) {
      expect(readFileSync(join(b, 'hls', f), 'utf8')).toBe(readFileSync(join(a, f), 'utf8'));
    }
    const est = JSON.parse(readFileSync(join(a, 'estimates.json'), 'utf8')) as {
      kernels: Record<string, { design: string; ii: number; resources: { dsp: number } }>;
    };
    expect(est.kernels['pagerank_op2']!.design).toBe('spmv');
    expect(est.kernels['pagerank_op2']!.ii).toBe(1);
    expect(est.kernels['pagerank_op2']!.resources.dsp).toBeGreaterThan(0);
    expect(readFileSync(join(a, 'connectivity_pagerank.cfg'), 'utf8')).toContain('sp=pagerank_op2_1.nz_0:HBM[0]');
  });

  it('--kernel names the kernel the Makefile builds and runs by default; every kernel is in the project', () => {
    const two = join(work, 'two.dy');
    writeFileSync(
      two,
      [
        'kernel first(A: csr<f32>[m, n], x: dense<f32>[n]) -> (y: dense<f32>[m]) {',
        '  y[i] = A[i, j] * x[j];',
        '}',
        'kernel second(A: csr<f32>[m, n], x: dense<f32>[n]) -> (y: dense<f32>[m]) {',
        '  y[i] = max(j: A[i, j] + x[j]);',
        '}',
        '',
      ].join('\n'),
    );
    const plain = join(work, 'two-plain');
    const chosen = join(work, 'two-second');
    const r1 = runCli(['hls', two, '-o', plain]);
    const r2 = runCli(['hls', two, '-o', chosen, '--kernel', 'second']);
    for (const r of [r1, r2]) expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(join(plain, 'Makefile'), 'utf8')).toMatch(/^KERNEL \?= first$/m);
    expect(readFileSync(join(chosen, 'Makefile'), 'utf8')).toMatch(/^KERNEL \?= second$/m);
    expect(r2.stdout).toMatch(/\(kernel second; KERNEL=NAME for another of first, second\)/);
    for (const f of ['host/first_host.cpp', 'host/second_host.cpp']) expect(existsSync(join(chosen, f))).toBe(true);
    // make csim builds and runs the chosen kernel's host.
    const dry = spawnSync('make', ['-n', '-C', chosen, 'csim', 'INPUTS=A=a.mtx x=x.mtx', 'OUTPUTS=y=y.mtx'], {
      encoding: 'utf8',
    });
    expect(dry.stdout).toMatch(/-o build\/csim\/second_host host\/second_host\.cpp /);
    expect(dry.stdout).toMatch(/^build\/csim\/second_host --in A=\S*a\.mtx --in x=\S*x\.mtx --out y=\S*y\.mtx/m);
    // The Vitis flow links one kernel's ops with that kernel's connectivity alone, takes the target from the build
    // folder's last part wherever BUILD is, and keeps every .xo (hours of synthesis) rather than deleting it.
    const cfg = (k: string): string => readFileSync(join(chosen, `connectivity_${k}.cfg`), 'utf8');
    expect(cfg('second')).toMatch(/^nk=second_op0:1:second_op0_1$/m);
    expect(cfg('second')).not.toMatch(/first_op/);
    expect(cfg('first')).not.toMatch(/second_op/);
    const hw = spawnSync('make', ['-n', '-C', chosen, 'hw_emu', 'BUILD=out/b'], { encoding: 'utf8' });
    expect(hw.stdout).toMatch(/^v\+\+ -c -t hw_emu .* -o out\/b\/hw_emu\/second_op0\.xo /m);
    expect(hw.stdout).toMatch(
      /^v\+\+ -l -t hw_emu .*--config connectivity_second\.cfg -o out\/b\/hw_emu\/second\.xclbin out\/b\/hw_emu\/second_op0\.xo$/m,
    );
    expect(hw.stdout).not.toMatch(/^rm /m);
    // An unknown kernel is DY2030 naming the kernels, and nothing is written.
    const bad = join(work, 'two-bad');
    const r3 = runCli(['hls', two, '-o', bad, '--kernel', 'third']);
    expect(r3.status).toBe(1);
    expect(r3.stderr).toMatch(/two\.dy:1:1: error DY2030: no kernel 'third' in this file; it defines first, second/);
    expect(existsSync(bad)).toBe(false);
  });

  it('needs -o (usage, exit 2)', () => {
    const r = runCli(['hls', example('spmv.dy')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('dype hls needs -o DIR');
  });

  it('a bad program is one error, exit 1, and no output folder', () => {
    const bad = join(work, 'bad.dy');
    writeFileSync(
      bad,
      'kernel k(A: csr<f32>[n, n], x: dense<f32>[n]) -> (y: dense<f32>[n]) {\n  y[i] = A[i, j] * z[j];\n}\n',
    );
    const out = join(work, 'bad-out');
    const r = runCli(['hls', bad, '-o', out]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/bad\.dy:2:\d+: error DY\d{4}/);
    expect(existsSync(out) ? readdirSync(out) : []).toEqual([]);
  });
});
