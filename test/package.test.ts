/**
 * What `npm pack` puts in the package (the `files` list of package.json),
 * read from `npm pack --dry-run --json` on the current build (scripts
 * skipped: `npm test` has just built dist/). The package must hold what
 * `dype check | run | compile` and the `dype/runtime` import read at run
 * time, and no tests, benches or goldens. Installing the packed tarball in
 * an empty folder is `.ci/pack-check` (too slow for every run).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helpers/cli.js';

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));

describe('npm pack', () => {
  const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  const files: string[] = r.status === 0 ? JSON.parse(r.stdout)[0].files.map((f: { path: string }) => f.path) : [];

  it('lists the package files', () => {
    expect(r.stderr.replace(/npm (warn|notice).*\n/g, '')).toBe('');
    expect(r.status).toBe(0);
    expect(files.length).toBeGreaterThan(100);
  });

  it('holds the command, the runtime entry and what the compiler reads at run time', () => {
    const needed = [
      pkg.bin.dype.replace(/^\.\//, ''),
      pkg.exports['./runtime'].default.replace(/^\.\//, ''),
      pkg.exports['./runtime'].types.replace(/^\.\//, ''),
      'dist/frontend/parser.js',
      'codegen/cuda/templates/program.cu.hbs',
      'codegen/cuda/emu/cuda_runtime_api.h',
      'codegen/native/dype_abi.h',
      'hls-templates/kernel/sparse_rows.cpp.hbs',
      'systems/README.md',
      'systems/this-machine.json',
      'examples/gcn.dy',
      'eval/programs/spmv-chain.dy',
      'package.json',
      'README.md',
    ];
    for (const f of needed) expect(files, f).toContain(f);
  });

  it('holds no tests, benches, goldens, TypeScript sources or source maps', () => {
    const stray = files.filter(
      (f) =>
        /(^|\/)(test|bench|goldens|__goldens__|fixtures)\//.test(f) ||
        /\.test\.|\.map$/.test(f) ||
        (f.endsWith('.ts') && !f.endsWith('.d.ts')) ||
        f.startsWith('examples/app/') ||
        f.startsWith('.'),
    );
    expect(stray).toEqual([]);
  });
});
