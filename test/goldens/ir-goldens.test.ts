/**
 * IR goldens: every example after every stage of the default pipeline. Run
 * with DYPE_UPDATE_GOLDENS=1 (npm run test:update-goldens) to rewrite them,
 * then review the diff; never edit a golden by hand.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compileSource } from '../../frontend/compile.js';
import { printModule } from '../../ir/printer.js';
import { parseModule } from '../../ir/text-parser.js';
import { verifyModule } from '../../ir/verifier.js';
import { DEFAULT_PIPELINE, LOWER_STAGE, runPipeline } from '../../passes/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const goldenDir = join(here, 'ir');
const update = process.env['DYPE_UPDATE_GOLDENS'] === '1';
const examples = readdirSync(join(root, 'examples')).filter((f) => f.endsWith('.dy')).sort();
const stages = [LOWER_STAGE, ...DEFAULT_PIPELINE];

function dumps(file: string): Map<string, string> {
  const src = readFileSync(join(root, 'examples', file), 'utf8');
  const r = compileSource(src, `examples/${file}`);
  expect(r.diagnostics).toEqual([]);
  const out = new Map<string, string>();
  runPipeline(r.module!, { passes: DEFAULT_PIPELINE, printAfter: 'all', dump: (s, t) => out.set(s, t) });
  return out;
}

describe('IR goldens', () => {
  it('has an example for each kernel family', () => {
    expect(examples).toEqual(expect.arrayContaining(['attention.dy', 'gcn.dy', 'pagerank.dy', 'spmm.dy', 'spmv.dy', 'sssp.dy']));
  });
  for (const ex of examples) {
    describe(ex, () => {
      const got = dumps(ex);
      for (const stage of stages) {
        const name = `${ex.replace(/\.dy$/, '')}.${stage}.ir`;
        it(`matches ${name}`, () => {
          const text = got.get(stage);
          expect(text, `no dump after ${stage}`).toBeDefined();
          const path = join(goldenDir, name);
          if (update) {
            mkdirSync(goldenDir, { recursive: true });
            writeFileSync(path, text!);
          }
          expect(existsSync(path), `missing golden ${name}; run npm run test:update-goldens`).toBe(true);
          expect(text).toBe(readFileSync(path, 'utf8'));
        });
      }
    });
  }
});

describe('golden round trip and verification', () => {
  const files = existsSync(goldenDir) ? readdirSync(goldenDir).filter((f) => f.endsWith('.ir')).sort() : [];
  it('found goldens', () => expect(files.length).toBeGreaterThanOrEqual(examples.length * stages.length));
  for (const f of files) {
    it(`${f}: print(parse(text)) === text, and it verifies`, () => {
      const text = readFileSync(join(goldenDir, f), 'utf8');
      const m = parseModule(text, f);
      expect(printModule(m)).toBe(text);
      const typed = !f.includes(`.${LOWER_STAGE}.`);
      expect(verifyModule(m, { requireTypes: typed })).toEqual([]);
    });
  }
});
