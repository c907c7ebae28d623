/**
 * HLS goldens: the generated kernel of the SSSP relaxation (the min-plus
 * semiring on the Serpens-style design, epilogue fused) and the file tree of
 * the GCN project. Rewritten with DYPE_UPDATE_GOLDENS=1; never by hand.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compileProgram } from '../../cli/compile.js';
import { emitHlsProject } from '../../codegen/hls/project.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const goldenDir = join(here, '..', 'goldens', 'hls');
const update = process.env['DYPE_UPDATE_GOLDENS'] === '1';

function golden(name: string, got: string): void {
  const path = join(goldenDir, name);
  if (update || !existsSync(path)) {
    if (!update) throw new Error(`missing golden ${name}; run with DYPE_UPDATE_GOLDENS=1`);
    mkdirSync(goldenDir, { recursive: true });
    writeFileSync(path, got);
  }
  expect(got).toBe(readFileSync(path, 'utf8'));
}

describe('HLS goldens', () => {
  it('the min-plus SpMV kernel of sssp', async () => {
    const { program } = compileProgram(join(root, 'examples', 'sssp.dy'));
    const files = await emitHlsProject({ ...program, file: 'examples/sssp.dy' });
    golden('sssp_op2.cpp', String(files.get('sssp_op2/sssp_op2.cpp')));
    golden('sssp_op2.h', String(files.get('sssp_op2/sssp_op2.h')));
  });

  it('the project tree of gcn', async () => {
    const { program } = compileProgram(join(root, 'examples', 'gcn.dy'));
    const files = await emitHlsProject({ ...program, file: 'examples/gcn.dy' });
    golden('gcn.tree', `${[...files.keys()].sort().join('\n')}\n`);
    // The ABI header ships verbatim: the contract is codegen/native/dype_abi.h.
    expect(files.get('host/dype_abi.h')).toBe(readFileSync(join(root, 'codegen', 'native', 'dype_abi.h'), 'utf8'));
  });
});
