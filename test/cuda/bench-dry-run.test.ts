/**
 * bench/gpu/run.sh --dry-run on a one-job work folder (the spmv project, a
 * real matrix, its input and reference, dype's pick of variant): it exits
 * non-zero, naming the piece, when a piece is missing (no build started); with every piece
 * present it builds every project and exits 0, or non-zero when a build
 * fails. `make` and `nvcc` are shims that log their calls (about a second);
 * the real nvcc build through the script (a minute on two cores) runs with
 * DYPE_SLOW_TESTS=1, and the same projects' nvcc builds are checked by
 * compile-examples.test.ts and project-build.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { emitCuda } from '../../codegen/cuda/emit.js';
import { denseMtx, exampleProgram, lcg, ROOT, writeProject } from './helpers.js';
import { have } from './nvcc.js';

const TOOLS = have('nvcc') && have('make');
const SCRIPT = join(ROOT, 'bench', 'gpu', 'run.sh');
const dir = mkdtempSync(join(tmpdir(), 'dype-bench-dry-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A work folder as prepare.ts lays it out, with one job. */
function work(): string {
  const w = join(dir, 'work');
  rmSync(w, { recursive: true, force: true });
  writeProject(join(w, 'spmv', 'cuda'), emitCuda(exampleProgram('spmv')));
  mkdirSync(join(w, 'matrices'), { recursive: true });
  mkdirSync(join(w, 'inputs'), { recursive: true });
  copyFileSync(join(ROOT, '..', 'shared', 'data', 'matrices', 'jazz.mtx'), join(w, 'matrices', 'jazz.mtx'));
  writeFileSync(join(w, 'inputs', 'x.mtx'), denseMtx(198, 1, lcg(1)));
  writeFileSync(join(w, 'inputs', 'y.mtx'), denseMtx(198, 1, lcg(2)));
  writeFileSync(
    join(w, 'jobs.txt'),
    'spmv jazz --input A=matrices/jazz.mtx --input x=inputs/x.mtx --ref y=inputs/y.mtx\n',
  );
  writeFileSync(join(w, 'picks.txt'), 'spmv jazz op0 adaptive-rows\n');
  return w;
}

/** A `make` (and `nvcc`) on PATH that log their arguments and exit with `status`: the script's control flow, not a build. */
function shims(status: number): string {
  const bin = join(dir, `bin${status}`);
  mkdirSync(bin, { recursive: true });
  for (const tool of ['make', 'nvcc']) {
    writeFileSync(join(bin, tool), `#!/bin/sh\necho "${tool} $*" >> "${join(bin, 'calls')}"\nexit ${status}\n`);
    chmodSync(join(bin, tool), 0o755);
  }
  rmSync(join(bin, 'calls'), { force: true });
  return bin;
}

function dryRun(w: string, bin?: string): { status: number; out: string } {
  const r = spawnSync('bash', [SCRIPT, '--dry-run', w, join(dir, 'out')], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, JOB_TIMEOUT: '50', ...(bin ? { PATH: `${bin}:${process.env['PATH']}` } : {}) },
  });
  return { status: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}

describe('bench/gpu/run.sh --dry-run', () => {
  it('exits non-zero, naming it, when a piece is missing', () => {
    const w = work();
    rmSync(join(w, 'inputs', 'x.mtx'));
    const r = dryRun(w, shims(0));
    expect(r.status).toBe(1);
    expect(r.out).toMatch(/spmv jazz: missing --input file .*inputs\/x\.mtx/);
    expect(r.out).not.toContain('building');
    // The variant dype picks for each job is a piece too (reported beside the fastest).
    writeFileSync(join(w, 'inputs', 'x.mtx'), denseMtx(198, 1, lcg(1)));
    writeFileSync(join(w, 'picks.txt'), 'spmv other op0 adaptive-rows\n');
    const unpicked = dryRun(w, shims(0));
    expect(unpicked.status).toBe(1);
    expect(unpicked.out).toContain('spmv jazz: no pick in');
    rmSync(join(w, 'picks.txt'));
    expect(dryRun(w, shims(0)).out).toContain('no picks in');
    const none = dryRun(join(dir, 'nowhere'), shims(0));
    expect(none.status).toBe(1);
    expect(none.out).toContain('no work folder');
  });

  it('builds every project (make with the ARCH flags) and exits 0, or non-zero when a build fails', () => {
    const w = work();
    const ok = shims(0);
    const r = dryRun(w, ok);
    expect(r.status, r.out).toBe(0);
    expect(r.out).toContain('dry run: every project built');
    expect(readFileSync(join(ok, 'calls'), 'utf8')).toBe(
      `make -B -C ${join(w, 'spmv', 'cuda')} ARCHS=-gencode arch=compute_90,code=sm_90\n`,
    );
    const bad = dryRun(w, shims(2));
    expect(bad.status).toBe(1);
    expect(bad.out).toContain('build of spmv failed');
  });

  it('takes jobs on generated matrices (gen/) only with their generated.txt, which needs NumPy and SciPy', () => {
    const w = work();
    const gen = 'spmv rmat20 --input A=gen/rmat20.csr --input x=gen/rmat20-x.npy --ref y=gen/rmat20-y.npy\n';
    writeFileSync(join(w, 'jobs.txt'), readFileSync(join(w, 'jobs.txt'), 'utf8') + gen);
    writeFileSync(join(w, 'picks.txt'), 'spmv jazz op0 adaptive-rows\nspmv rmat20 op0 merge-path\n');
    const orphan = dryRun(w, shims(0));
    expect(orphan.status).toBe(1);
    expect(orphan.out).toContain('spmv rmat20: gen/rmat20.csr is generated, but');
    writeFileSync(join(w, 'generated.txt'), 'rmat20 rmat 20:10000000:100000,300000,1000000 2 16,32,128\n');
    const python = spawnSync('python3', ['-c', 'import numpy, scipy.sparse']).status === 0;
    const r = dryRun(w, shims(0));
    if (python) {
      // The dry run generates nothing: the gen/ files are written on the GPU machine, beside the builds.
      expect(r.status, r.out).toBe(0);
      expect(r.out).toContain('dry run: every project built');
    } else {
      expect(r.status).toBe(1);
      expect(r.out).toContain('cannot import NumPy and SciPy');
    }
  });

  // The real build: what compile-examples.test.ts and project-build.test.ts already do with nvcc, through this script.
  it.skipIf(!TOOLS || process.env['DYPE_SLOW_TESTS'] !== '1')(
    'builds the project with the real nvcc (DYPE_SLOW_TESTS=1)',
    () => {
      const r = dryRun(work());
      expect(r.status, r.out).toBe(0);
    },
    300_000,
  );
});
