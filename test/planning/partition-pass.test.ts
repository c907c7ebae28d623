import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tensorOps } from '../../ir/module.js';
import { printModule } from '../../ir/printer.js';
import { parseModule } from '../../ir/text-parser.js';
import { verifyModule } from '../../ir/verifier.js';
import { DEFAULT_PIPELINE, runPipeline } from '../../passes/index.js';
import { partitionPass } from '../../passes/partition.js';
import { features } from '../../runtime/features/index.js';
import { toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { loadSystemFile } from '../../runtime/system/load.js';
import { implsOf, lower } from '../helpers/compile.js';
import { goal } from '../helpers/goal.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('partition pass', () => {
  it('records the best mapping on every op of pagerank, keeping the repeat region on one stage', () => {
    const A = toCsr(loadMatrix(join(root, '..', 'shared', 'data', 'matrices', 'cage8.mtx')));
    const src = `kernel pagerank(A: csr<f32>[n, n], r0: dense<f32>[n], d: f32) -> (r: dense<f32>[n]) {
      r[i] = r0[i];
      repeat 20 { t[i] = A[i, j] * r[j]; r[i] = (1 - d) / n + d * t[i]; u[i] = r[i] * 2; }
    }`;
    const pass = partitionPass({
      system: loadSystemFile(join(root, 'systems', 'paper-1g1f.json')),
      binding: {
        sparse: new Map([['A', features(A, 2)]]),
        dims: new Map([['n', A.rows]]),
        scalars: new Map([['d', 0.85]]),
      },
      ...goal('latency'),
      kernel: 'pagerank',
      impls: implsOf(src, 'pagerank.dy'),
    });
    const m = runPipeline(lower(src), { passes: [...DEFAULT_PIPELINE, pass] });
    const ops = tensorOps(m.kernels[0]!.body);
    for (const op of ops) {
      expect(typeof op.attrs['stage']).toBe('number');
      expect((op.attrs['devices'] as string[]).length).toBeGreaterThan(0);
      expect(typeof op.attrs['variant']).toBe('string');
    }
    const inLoop = ops.slice(1);
    expect(new Set(inLoop.map((o) => o.attrs['stage'])).size).toBe(1);
    const text = printModule(m);
    expect(printModule(parseModule(text))).toBe(text);
    expect(verifyModule(parseModule(text), { requireTypes: true })).toEqual([]);
  });
});
