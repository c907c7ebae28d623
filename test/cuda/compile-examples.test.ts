/**
 * Every example's generated CUDA (and the shapes fixture's), kernels and ABI
 * file, compiles with nvcc for sm_90 with all warnings as errors, and each
 * program's dype_check and dype_abi_check drivers (host -Wall -Werror too) link against it. To keep the time down on two cores, the programs are
 * compiled as one translation unit (the generated files allow it) while the
 * drivers compile beside it. Skipped, saying so, where nvcc is not installed.
 * Nothing here runs on a GPU.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { emitCuda } from '../../codegen/cuda/emit.js';
import { exampleProgram, fixtureProgram, ROOT, writeProject } from './helpers.js';
import { have, pool, run, type Run } from './nvcc.js';

const NVCC = have('nvcc');
if (!NVCC) console.warn('test/cuda: nvcc not found on PATH; skipping the CUDA compile tests');

const examples = readdirSync(join(ROOT, 'examples'))
  .filter((f) => f.endsWith('.dy'))
  .map((f) => f.slice(0, -3))
  .sort();
const dir = mkdtempSync(join(tmpdir(), 'dype-cuda-nvcc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FLAGS = ['-std=c++17', '-Werror', 'all-warnings'];
/** The drivers are host code: the host compiler's warnings too (a program without a convergence loop once left a helper unused). */
const DRIVER_FLAGS = [...FLAGS, '-Xcompiler', '-Wall,-Werror'];

describe.skipIf(!NVCC)('generated CUDA compiles (nvcc -arch=sm_90) and the drivers link', () => {
  it('for every example and the shapes fixture', async () => {
    const programs = [
      ...examples.map((e) => ({ name: e, p: exampleProgram(e) })),
      { name: 'shapes', p: fixtureProgram('shapes') },
    ];
    for (const { name, p } of programs) {
      const d = join(dir, name);
      mkdirSync(d, { recursive: true });
      writeProject(d, emitCuda(p));
    }
    // The kernels and the ABI files (host code over the stubs, each in its own namespace) of every program.
    writeFileSync(
      join(dir, 'all.cu'),
      programs.map(({ name, p }) => `#include "${name}/${p.name}.cu"\n#include "${name}/${p.name}_abi.cu"\n`).join(''),
    );
    const jobs: (() => Promise<Run>)[] = [
      () => run('nvcc', ['-c', '-arch=sm_90', '-O1', ...FLAGS, 'all.cu', '-o', 'all.o'], dir),
      ...programs.map(
        ({ name }) =>
          () =>
            run('nvcc', ['-c', '-O0', ...DRIVER_FLAGS, 'dype_check.cpp', '-o', 'check.o'], join(dir, name)),
      ),
      ...programs.map(
        ({ name }) =>
          () =>
            run('nvcc', ['-c', '-O0', ...DRIVER_FLAGS, 'dype_abi_check.cpp', '-o', 'abi_check.o'], join(dir, name)),
      ),
    ];
    const compiled = await pool(jobs, 2);
    for (const r of compiled) expect(r.status, `${r.cmd}\n${r.output}`).toBe(0);
    const linked = await pool(
      programs.flatMap(({ name }) => [
        () => run('nvcc', ['-arch=sm_90', 'check.o', join(dir, 'all.o'), '-o', 'dype_check'], join(dir, name)),
        () => run('nvcc', ['-arch=sm_90', 'abi_check.o', join(dir, 'all.o'), '-o', 'dype_abi_check'], join(dir, name)),
      ]),
      2,
    );
    for (const r of linked) expect(r.status, `${r.cmd}\n${r.output}`).toBe(0);
    expect(programs.map((p) => p.name)).toEqual([...examples, 'shapes']);
  }, 300_000);
});
