/**
 * `dype compile examples/gcn.dy --targets cuda -o DIR` (the built CLI, so the
 * templates are found from dist/) writes a project that builds with `make`
 * (sm_80, sm_90 and PTX) and with CMake (one architecture, to keep the test
 * short), including the dype_check driver, and that its CPU emulation
 * builds with g++ alone, both ways. A hostile kernel name fails with
 * DY6101 and writes nothing. Skipped where nvcc (or cmake) is missing.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import koffi from 'koffi';
import { afterAll, describe, expect, it } from 'vitest';
import { abiPrefix } from '../../runtime/native/abi.js';
import { runCli } from '../helpers/cli.js';
import { ROOT } from './helpers.js';
import { have, run } from './nvcc.js';

const NVCC = have('nvcc');
const CMAKE = have('cmake') && have('make');
const GXX = have('g++');
if (!NVCC || !CMAKE)
  console.warn(`test/cuda: ${!NVCC ? 'nvcc' : 'cmake or make'} not found; skipping the CUDA project build tests`);

const dir = mkdtempSync(join(tmpdir(), 'dype-cuda-project-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('dype compile --targets cuda', () => {
  it('rejects a kernel name that cannot be a C symbol with DY6101 and writes nothing', () => {
    const src = join(dir, 'evil.dy');
    writeFileSync(
      src,
      'kernel bad__name(A: csr<f32>[n, n], x: dense<f32>[n]) -> (y: dense<f32>[n]) { y[i] = A[i, j] * x[j]; }\n',
    );
    const out = join(dir, 'evil-out');
    const r = runCli(['compile', src, '--targets', 'cuda', '-o', out]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/evil\.dy:1:\d+: error DY6101: kernel 'bad__name'/);
    expect(existsSync(out)).toBe(false);
  });

  it.skipIf(!NVCC || !CMAKE)(
    'writes a gcn project that builds with make and with cmake',
    async () => {
      const out = join(dir, 'gcn');
      const r = runCli(['compile', join(ROOT, 'examples', 'gcn.dy'), '--targets', 'cuda', '-o', out]);
      expect(r.status, r.stderr).toBe(0);
      const cuda = join(out, 'cuda');
      expect(readdirSync(cuda).sort()).toEqual([
        'CMakeLists.txt',
        'Makefile',
        'README.md',
        'dype_abi.h',
        'dype_abi_check.cpp',
        'dype_check.cpp',
        'dype_check_common.h',
        'emu',
        'gcn.cu',
        'gcn_abi.cu',
        'gcn_cuda.h',
      ]);
      const make = await run('make', ['-C', cuda], ROOT);
      expect(make.status, make.output).toBe(0);
      expect(existsSync(join(cuda, 'libgcn_cuda.so'))).toBe(true);
      expect(existsSync(join(cuda, 'dype_check'))).toBe(true);
      expect(existsSync(join(cuda, 'dype_abi_check'))).toBe(true);
      const build = join(out, 'build');
      const conf = await run('cmake', ['-S', cuda, '-B', build, '-DCMAKE_CUDA_ARCHITECTURES=90'], ROOT);
      expect(conf.status, conf.output).toBe(0);
      const b = await run('cmake', ['--build', build, '-j', '2'], ROOT);
      expect(b.status, b.output).toBe(0);
      expect(existsSync(join(build, 'dype_check'))).toBe(true);
      expect(existsSync(join(build, 'dype_abi_check'))).toBe(true);
    },
    300_000,
  );

  it.skipIf(!GXX || !CMAKE)(
    'writes a gcn project whose CPU emulation builds with g++ alone (make emu, cmake -DDYPE_EMU=ON)',
    async () => {
      const out = join(dir, 'gcn-emu');
      const r = runCli(['compile', join(ROOT, 'examples', 'gcn.dy'), '--targets', 'cuda', '-o', out]);
      expect(r.status, r.stderr).toBe(0);
      const cuda = join(out, 'cuda');
      // NVCC points nowhere: nothing of the emulated build may need it.
      const make = await run('make', ['-C', cuda, 'emu', 'NVCC=/nonexistent/nvcc'], ROOT);
      expect(make.status, make.output).toBe(0);
      const build = join(out, 'build-emu');
      const conf = await run('cmake', ['-S', cuda, '-B', build, '-DDYPE_EMU=ON'], ROOT);
      expect(conf.status, conf.output).toBe(0);
      const b = await run('cmake', ['--build', build, '-j', '2'], ROOT);
      expect(b.status, b.output).toBe(0);
      expect(existsSync(join(cuda, 'dype_abi_check_emu'))).toBe(true);
      expect(existsSync(join(build, 'dype_abi_check_emu'))).toBe(true);
      for (const lib of [join(cuda, 'libgcn_cuda_emu.so'), join(build, 'libgcn_cuda_emu.so')]) {
        const backend = koffi.load(lib).func(`const char* ${abiPrefix('gcn', 'cuda')}backend(void)`);
        expect(backend()).toBe('cuda-emu');
      }
    },
    300_000,
  );
});
