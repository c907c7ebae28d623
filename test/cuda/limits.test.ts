/**
 * Launch limits and index widths on the CPU emulation (fixtures/limits.cpp):
 * the emulation refuses launches a GPU refuses (grid.y and grid.z over 65535,
 * grid.x over 2^31 - 1, more than 1024 threads a block), and the generated
 * kernels give the right last rows of launches where 32-bit arithmetic would
 * wrap: SpMV over 2^27 + 64 rows (a warp per row: 2^32 threads), SpMM and
 * the GCN's dense product with 2^31 + 256 output elements, the tiled product
 * over 65537 row tiles. DYPE_EMU_LAST_BLOCKS=1 runs only each grid's last
 * block and large buffers are mapped lazily, so this takes seconds and a few
 * MiB of memory. Skipped, saying so, without g++.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildEmuFixture } from './helpers.js';
import { have, run } from './nvcc.js';

const GXX = have('g++');
if (!GXX) console.warn('test/cuda/limits: g++ not found; skipping the emulated launch-limit tests');
const dir = mkdtempSync(join(tmpdir(), 'dype-cuda-limits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!GXX)('launch limits and 64-bit indices (CPU emulation)', () => {
  it('refuses what a GPU refuses, and computes the last rows past 2^27 rows and 2^31 elements', async () => {
    const built = await buildEmuFixture(dir, ['spmv', 'spmm', 'gcn'], 'limits.cpp', 'limits');
    expect(built.status, built.output).toBe(0);
    const limits = await run('./limits', ['limits'], dir, 60_000);
    expect(limits.status, limits.output).toBe(0);
    const wide = await run('./limits', ['wide'], dir, 60_000, { ...process.env, DYPE_EMU_LAST_BLOCKS: '1' });
    expect(wide.status, wide.output.slice(0, 3000)).toBe(0);
    expect(wide.output).toContain('0 failures');
  }, 240_000);
});
