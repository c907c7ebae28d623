/**
 * Two host threads on one (device, stream), as the runtime's overlapping stream() calls launch on the
 * null stream: a call using the stream's workspace (adaptive-rows' long-row queue, merge-path's scratch)
 * while another on the other thread grows it (fixtures/workspace-race.cpp, on the CPU emulation, under
 * AddressSanitizer where g++ has it). Before each stub held the workspace's slot over its launches, the
 * grow freed the buffer under the first call's kernel: heap-use-after-free, segfaults and wrong results.
 * Skipped, saying so, without g++.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { emitCuda } from '../../codegen/cuda/emit.js';
import { exampleProgram, ROOT, writeProject } from './helpers.js';
import { have, run } from './nvcc.js';

const GXX = have('g++');
if (!GXX) console.warn('test/cuda/workspace-race: g++ not found; skipping the two-thread workspace test');
const dir = mkdtempSync(join(tmpdir(), 'dype-cuda-race-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Leak checks are not what this test is about, and LeakSanitizer fails under some tracers. */
const ASAN_ENV = { ...process.env, ASAN_OPTIONS: 'detect_leaks=0' };

/** Whether g++ builds and runs a program with -fsanitize=address here (the runtime library may be missing). */
async function asan(): Promise<boolean> {
  writeFileSync(join(dir, 'asan.cpp'), 'int main() { return 0; }\n');
  const built = await run('g++', ['-fsanitize=address', '-o', 'asan', 'asan.cpp'], dir);
  return built.status === 0 && (await run('./asan', [], dir, 30_000, ASAN_ENV)).status === 0;
}

describe.skipIf(!GXX)('the stream workspace shared by two host threads (CPU emulation)', () => {
  it('is never freed under a call using it, and both calls give the results they give alone', async () => {
    const sanitize = await asan();
    if (!sanitize) console.warn('test/cuda/workspace-race: no AddressSanitizer; checking the results only');
    for (const ex of ['spmv', 'spmm']) {
      const files = emitCuda(exampleProgram(ex));
      const wanted = [`${ex}.cu`, `${ex}_cuda.h`, 'emu/cuda_runtime_api.h', 'dype_abi.h'];
      writeProject(dir, new Map(wanted.map((f) => [f, files.get(f)!])));
    }
    const flags = ['-std=c++17', '-O1', '-g', '-pthread', '-DDYPE_CUDA_EMU', '-Iemu', '-I.'];
    const src = join(ROOT, 'test/cuda/fixtures/workspace-race.cpp');
    const built = await run('g++', [...flags, ...(sanitize ? ['-fsanitize=address'] : []), '-o', 'race', src], dir);
    expect(built.status, built.output).toBe(0);
    const r = await run('./race', [], dir, 120_000, ASAN_ENV);
    expect(r.output).not.toContain('AddressSanitizer');
    expect(r.status, r.output).toBe(0);
    expect(r.output).toContain('0 failures');
    expect(r.output.match(/grows, \d+ times: rc 0, wrong elements 0 and 0\n/g)).toHaveLength(4);
  }, 240_000);

  it('runs under AddressSanitizer without false reports on the fibers\u2019 reused stacks', async () => {
    if (!(await asan())) {
      console.warn('test/cuda/workspace-race: no AddressSanitizer; skipping the fiber-stack check');
      return;
    }
    const src = join(ROOT, 'test/cuda/fixtures/emu-asan.cpp');
    const emu = join(ROOT, 'codegen/cuda/emu');
    const built = await run(
      'g++',
      ['-std=c++17', '-O1', '-DDYPE_CUDA_EMU', `-I${emu}`, '-fsanitize=address', '-o', 'emu-asan', src],
      dir,
    );
    expect(built.status, built.output).toBe(0);
    const r = await run('./emu-asan', [], dir, 30_000, ASAN_ENV);
    expect(r.output).not.toContain('AddressSanitizer');
    expect(r.status, r.output).toBe(0);
    expect(r.output).toContain('ok');
  }, 60_000);
});
