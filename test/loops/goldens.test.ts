/**
 * Goldens of the loop IR of every example (test/goldens/loops/NAME.loops),
 * after the default pipeline plus lower-kernels. Run with
 * DYPE_UPDATE_GOLDENS=1 to rewrite them, then review the diff. Also checks
 * that lowering and printing are deterministic and that the pass leaves the
 * graph IR text unchanged.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compileSource } from '../../frontend/compile.js';
import { printLoops } from '../../ir/loops-printer.js';
import { lowerKernelLoops } from '../../ir/loops-lower.js';
import { cloneModule, type Module } from '../../ir/module.js';
import { printModule } from '../../ir/printer.js';
import { DEFAULT_PIPELINE, runPipeline } from '../../passes/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const goldenDir = join(here, '..', 'goldens', 'loops');
const update = process.env['DYPE_UPDATE_GOLDENS'] === '1';
const examples = readdirSync(join(root, 'examples'))
  .filter((f) => f.endsWith('.dy'))
  .sort();

function typed(file: string): Module {
  const r = compileSource(readFileSync(join(root, 'examples', file), 'utf8'), `examples/${file}`);
  expect(r.diagnostics).toEqual([]);
  return runPipeline(r.module!, { passes: DEFAULT_PIPELINE });
}

describe('loop IR goldens', () => {
  for (const ex of examples) {
    const name = `${ex.replace(/\.dy$/, '')}.loops`;
    it(`matches ${name}`, () => {
      const text = printLoops(runPipeline(typed(ex), { passes: ['lower-kernels'] }));
      const path = join(goldenDir, name);
      if (update) {
        mkdirSync(goldenDir, { recursive: true });
        writeFileSync(path, text);
      }
      expect(existsSync(path), `missing golden ${name}; run with DYPE_UPDATE_GOLDENS=1`).toBe(true);
      expect(text).toBe(readFileSync(path, 'utf8'));
    });
  }
});

describe('determinism', () => {
  for (const ex of examples) {
    it(`${ex}: two independent lowerings print the same text and equal data`, () => {
      const a = runPipeline(typed(ex), { passes: ['lower-kernels'] });
      const b = runPipeline(typed(ex), { passes: ['lower-kernels'] });
      expect(printLoops(a)).toBe(printLoops(b));
      expect(a.kernels.map((k) => k.loops)).toEqual(b.kernels.map((k) => lowerKernelLoops(k)));
      // Loops survive cloning (passes clone their input) and print the same.
      expect(printLoops(cloneModule(a))).toBe(printLoops(a));
    });
    it(`${ex}: lower-kernels leaves the graph IR text unchanged and covers every tensor op`, () => {
      const m = typed(ex);
      const l = runPipeline(m, { passes: ['lower-kernels'] });
      expect(printModule(l)).toBe(printModule(m));
      for (const k of l.kernels) expect(k.loops!.map((f) => f.op).length).toBeGreaterThan(0);
    });
  }
});
