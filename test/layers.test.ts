/**
 * Layers depend one way (docs/ARCHITECTURE.md, "Layers"): every top-level
 * folder of the repository has a rule here, a new folder fails until it gets
 * one, and every import of a project file is checked against it: static
 * `import ... from`, `export ... from`, side-effect `import '...'`,
 * `require('...')` and dynamic `import('...')`. A dynamic import of a
 * computed path cannot be checked, so each one is listed with its reason.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

const LIBRARY = ['ir', 'frontend', 'passes', 'codegen', 'interp', 'runtime', 'eval', 'cli'];

/** What each folder's sources may import (besides themselves and packages). Folders holding no code may import nothing. */
export const LAYERS: Record<string, readonly string[]> = {
  ir: [],
  frontend: ['ir'],
  // The partition and build-guards passes wrap the runtime's planner, catalogue and system model.
  passes: ['ir', 'runtime'],
  codegen: ['ir', 'passes', 'runtime'],
  // The interpreter reads and writes runtime tensors.
  interp: ['ir', 'runtime'],
  runtime: [],
  eval: ['ir', 'passes', 'frontend', 'codegen', 'runtime'],
  cli: ['ir', 'frontend', 'passes', 'codegen', 'interp', 'runtime', 'eval'],
  bench: LIBRARY,
  test: [...LIBRARY, 'bench'],
  // examples/app imports only the runtime its own `dype compile` wrote (examples/app/out).
  examples: [],
  docs: [],
  systems: [],
  'hls-templates': [],
  '.ci': [],
};

/** Dynamic imports of a computed path, by file: what they load. */
const COMPUTED_IMPORTS: Record<string, string> = {
  'bench/calibrate-refit.ts': "another build's runtime/plan/calibrate-fit.js, the dist folder --against names",
  'bench/convert-scale.ts': "another build's runtime/io/convert.js, the dist folder --against names",
  'bench/decision-stream.ts':
    "another build's runtime classes (chooser, decider, policy, memo), the dist folder --against names",
  'bench/features-after-kernel.ts': "another build's runtime/features/quick.js, the dist folder --against names",
  'bench/features-sampled.ts': "another build's runtime/features/quick.js, the dist folder --against names",
  'bench/power-law-picks.ts': "another build's runtime/features/quick.js, the dist folder --against names",
  'frontend/chevrotain.ts': "chevrotain's ESM build, found beside its package entry in node_modules",
  'test/runtime-gen/api-inputs.test.ts':
    "a compiled project's generated runtime, its import rewritten to this checkout's runtime entry, in the test's temporary folder",
  'test/runtime-gen/names.test.ts':
    "a compiled project's generated runtime (kernels named guarded and runtime), its import rewritten to this checkout's runtime entry, in the test's temporary folder",
  'test/exec/in-place-values.test.ts':
    "the typed runtime a compiled project generates, written to the test's temporary folder",
  'test/layers.test.ts': "the sample source of the extractor's own test, in strings",
  'test/native/cpu.test.ts':
    "this checkout's dist runtime (the native CPU executor, the generated matrices), from a child process's script held to one core, in a string",
};

export interface ImportRef {
  spec: string;
  kind: 'static' | 'dynamic' | 'require' | 'computed';
}

/** Every import in a source text (comments stripped first, so a commented-out import does not count). */
export function importsOf(text: string): ImportRef[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const out: ImportRef[] = [];
  for (const m of code.matchAll(/^\s*(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/gm))
    out.push({ spec: m[1]!, kind: 'static' });
  for (const m of code.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm)) out.push({ spec: m[1]!, kind: 'static' });
  for (const m of code.matchAll(/\bimport\s*\(/g)) {
    // The argument runs to the parenthesis that closes this call.
    let depth = 1;
    let end = m.index + m[0].length;
    for (; end < code.length && depth > 0; end++) depth += code[end] === '(' ? 1 : code[end] === ')' ? -1 : 0;
    const arg = code.slice(m.index + m[0].length, end - 1).trim();
    const lit = /^['"`]([^'"`$]+)['"`]$/.exec(arg);
    out.push(lit ? { spec: lit[1]!, kind: 'dynamic' } : { spec: arg, kind: 'computed' });
  }
  for (const m of code.matchAll(/\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push({ spec: m[1]!, kind: 'require' });
  return out;
}

const tracked = spawnSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' })
  .stdout.split('\n')
  .filter((f) => f.length > 0);
const folders = [...new Set(tracked.filter((f) => f.includes('/')).map((f) => f.split('/')[0]!))].sort();
const code = (folder: string): string[] =>
  tracked.filter(
    (f) => f.startsWith(`${folder}/`) && /\.(ts|mts|cts|js|mjs|cjs)$/.test(f) && !f.startsWith('test/goldens/'),
  );

describe('layering', () => {
  it('every top-level folder has a rule', () => {
    expect(folders.length).toBeGreaterThan(10);
    expect(folders.filter((f) => !(f in LAYERS))).toEqual([]);
  });

  it("every rule has its row in docs/ARCHITECTURE.md's layer table", () => {
    const doc = readFileSync(join(root, 'docs', 'ARCHITECTURE.md'), 'utf8');
    const table = doc.slice(doc.indexOf('## Layers'), doc.indexOf('\n## ', doc.indexOf('## Layers') + 1));
    const rows = table.split('\n').filter((l) => l.startsWith('| `'));
    expect(Object.keys(LAYERS).filter((f) => !rows.some((r) => r.split('|')[1]!.includes(`\`${f}/\``)))).toEqual([]);
  });

  it('finds static, side-effect, dynamic, required and computed imports, and skips comments', () => {
    const src = [
      "import { a } from '../ir/a.js';",
      'import {\n  b,\n  c,\n} from "../runtime/b.js";',
      "export * from './c.js';",
      "import '../passes/side.js';",
      "const d = await import('../codegen/d.js');",
      'const e = (await import(`../cli/e.js`)).e;',
      'const f = await import(new URL(x).href);',
      "const g = require('../eval/g.js');",
      "// import { h } from '../interp/h.js';",
      "/* const i = await import('../bench/i.js'); */",
    ].join('\n');
    expect(importsOf(src)).toEqual([
      { spec: '../ir/a.js', kind: 'static' },
      { spec: '../runtime/b.js', kind: 'static' },
      { spec: './c.js', kind: 'static' },
      { spec: '../passes/side.js', kind: 'static' },
      { spec: '../codegen/d.js', kind: 'dynamic' },
      { spec: '../cli/e.js', kind: 'dynamic' },
      { spec: 'new URL(x).href', kind: 'computed' },
      { spec: '../eval/g.js', kind: 'require' },
    ]);
  });

  for (const [layer, ok] of Object.entries(LAYERS)) {
    it(`${layer}/ imports only ${ok.length > 0 ? ok.join(', ') : 'itself'}`, () => {
      const bad: string[] = [];
      for (const file of code(layer)) {
        for (const ref of importsOf(readFileSync(join(root, file), 'utf8'))) {
          if (ref.kind === 'computed') {
            if (!(file in COMPUTED_IMPORTS)) bad.push(`${file}: import(${ref.spec}) of a computed path`);
            continue;
          }
          if (!ref.spec.startsWith('.')) continue;
          const target = relative(root, join(root, file, '..', ref.spec)).split(/[\\/]/)[0]!;
          if (target !== layer && !ok.includes(target)) bad.push(`${file} -> ${ref.spec} (${ref.kind})`);
        }
      }
      expect(bad).toEqual([]);
    });
  }
});
