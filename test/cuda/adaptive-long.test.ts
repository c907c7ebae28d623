/**
 * adaptive-rows queues its long-row pass (a memset and a second launch, 5.4 us a call on an H200) only
 * where the caller's longest-row figure lets a row exceed what a group keeps, and gives the same results
 * whatever the figure (fixtures/adaptive-long.cpp, on the CPU emulation, which counts the stream
 * operations). Skipped, saying so, without g++.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildEmuFixture } from './helpers.js';
import { have, run } from './nvcc.js';

const GXX = have('g++');
if (!GXX) console.warn('test/cuda/adaptive-long: g++ not found; skipping the emulated long-row pass tests');
const dir = mkdtempSync(join(tmpdir(), 'dype-cuda-long-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!GXX)("adaptive-rows' long-row pass (CPU emulation)", () => {
  it('is queued only where the longest row can be long, and the results never depend on the figure', async () => {
    const built = await buildEmuFixture(dir, ['spmv', 'spmm'], 'adaptive-long.cpp', 'long');
    expect(built.status, built.output).toBe(0);
    const r = await run('./long', [], dir, 60_000);
    expect(r.status, r.output).toBe(0);
    expect(r.output).toContain('0 failures');
    // Both forms, both matrices, three figures each.
    expect(r.output.match(/queued \d+ \(want \d+\)/g)).toHaveLength(12);
  }, 120_000);
});
