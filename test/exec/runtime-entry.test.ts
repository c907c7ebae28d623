/**
 * What the docs tell an application to construct (`new X(...)` in docs/RUNTIME.md and docs/COST-MODEL.md) is
 * exported from the package's one runtime entry, `dype/runtime` (runtime/engine/index.ts): an application cannot
 * reach a deep path (package.json `exports` names only that entry).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as entry from '../../runtime/engine/index.js';
import { REPO_ROOT } from '../helpers/cli.js';

/** Globals the docs construct too (typed arrays): not the package's to export. */
const GLOBAL = new Set(['Float64Array', 'Float32Array', 'Int32Array', 'Map', 'Set']);

describe('the runtime entry', () => {
  it('exports every class the docs construct', () => {
    const named = new Set<string>();
    for (const doc of ['docs/RUNTIME.md', 'docs/COST-MODEL.md', 'examples/app/README.md'])
      for (const m of readFileSync(join(REPO_ROOT, doc), 'utf8').matchAll(/\bnew ([A-Z]\w*)\(/g))
        if (!GLOBAL.has(m[1]!)) named.add(m[1]!);
    expect([...named]).toContain('HistoryLog');
    for (const n of named) expect(typeof (entry as Record<string, unknown>)[n], n).toBe('function');
  });
});
