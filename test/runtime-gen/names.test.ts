/**
 * Names the runtime target derives from the program (codegen/runtime/names.ts):
 * kernels named as the runtime library's own exports (`guarded` gave a local
 * createGuardedRuntime beside the imported one, `runtime` a RuntimeInputs)
 * load and run; names that would clash are DY6304 before anything is built,
 * with no output folder: two kernels with one Pascal name (`foo_bar`,
 * `fooBar`), a sparse parameter named as the guards' dim or scalar keys
 * (`dim`: its features were read as dims and dropped), and two features
 * with one C++ member (`dim_x.rows`, `dim.x_rows`).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { closeBackends } from '../../runtime/exec/index.js';
import { toCsr } from '../../runtime/io/convert.js';
import { loadMatrix } from '../../runtime/io/load.js';
import { openProject } from '../../runtime/native/project.js';
import type { SystemSpec } from '../../runtime/system/types.js';
import type { DenseTensor } from '../../runtime/tensor.js';
import { cleanup, cpuRuntimeCompileArgs, freshDir, REPO_ROOT, runCliAsync } from '../helpers/cli.js';

const M = join(REPO_ROOT, '..', 'shared', 'data', 'matrices');
const HAVE_DATA = existsSync(M);
const dir = freshDir('dype-runtime-names-');
afterAll(() => cleanup(dir));

const SPMV = (name: string, a = 'A', n = 'n'): string =>
  `kernel ${name}(${a}: csr<f32>[${n}, ${n}], x: dense<f32>[${n}]) -> (y: dense<f32>[${n}]) { y[i] = ${a}[i, j] * x[j]; }\n`;

async function compile(name: string, src: string, profile: string) {
  const file = join(dir, `${name}.dy`);
  writeFileSync(file, src);
  const out = join(dir, name);
  const r = await runCliAsync(cpuRuntimeCompileArgs(file, out, [join(M, 'karate.mtx')], { param: profile }), {
    timeoutMs: 120_000,
  });
  return { ...r, out };
}

describe.skipIf(!HAVE_DATA)('names the generated runtime derives from the program', () => {
  it('kernels named guarded and runtime load and run (the library is imported under names no kernel takes)', async () => {
    const c = await compile('lib', SPMV('guarded') + SPMV('runtime'), 'A');
    expect(c.status, c.stderr).toBe(0);
    const src = readFileSync(join(c.out, 'runtime', 'lib.runtime.ts'), 'utf8').replace(
      "from 'dype/runtime'",
      `from ${JSON.stringify(join(REPO_ROOT, 'runtime', 'engine', 'index.ts'))}`,
    );
    writeFileSync(join(c.out, 'lib.local.runtime.ts'), src);
    type Create = (o: object) => { run(i: object): Promise<{ outputs: { y: DenseTensor } }>; close(): void };
    const mod = (await import(join(c.out, 'lib.local.runtime.ts'))) as Record<string, Create>;
    expect(Object.keys(mod)).toEqual(expect.arrayContaining(['createGuardedRuntime', 'createRuntimeRuntime']));
    const system = (JSON.parse(readFileSync(join(c.out, 'plan.json'), 'utf8')) as { system: SystemSpec }).system;
    const A = toCsr(loadMatrix(join(M, 'karate.mtx')));
    const x: DenseTensor = { format: 'dense', shape: [A.cols], data: new Float64Array(A.cols).fill(1) };
    for (const kernel of ['guarded', 'runtime']) {
      const backends = await openProject(c.out, system, { emulate: false, kernel });
      try {
        const rt = mod[`create${kernel[0]!.toUpperCase()}${kernel.slice(1)}Runtime`]!({ system, backends });
        const y = (await rt.run({ A, x })).outputs.y.data;
        // Each row's sum of entries: karate's rows hold ones.
        expect(Array.from(y.slice(0, 3))).toEqual([
          A.rowPtr[1]! - A.rowPtr[0]!,
          A.rowPtr[2]! - A.rowPtr[1]!,
          A.rowPtr[3]! - A.rowPtr[2]!,
        ]);
        rt.close();
      } finally {
        closeBackends(backends);
      }
    }
  });

  it.each([
    [
      'pascal',
      SPMV('foo_bar') + SPMV('fooBar'),
      'A',
      /pascal\.dy:2:8: error DY6304: kernels foo_bar and fooBar have the same Pascal name FooBar/,
    ],
    [
      'upper',
      SPMV('foo') + SPMV('FOO'),
      'A',
      /upper\.dy:2:8: error DY6304: kernels foo and FOO have the same (Pascal|upper-case) name/,
    ],
    [
      'dimparam',
      SPMV('g', 'dim'),
      'dim',
      /dimparam\.dy:1:10: error DY6304: sparse parameter 'dim' of kernel g: .*read as dims/,
    ],
    [
      'scalarparam',
      SPMV('g', 'scalar'),
      'scalar',
      /scalarparam\.dy:1:10: error DY6304: sparse parameter 'scalar' .*read as scalars/,
    ],
    [
      'member',
      SPMV('k', 'dim_x', 'x_rows'),
      'dim_x',
      /member\.dy:1:8: error DY6304: kernel k: features dim_x\.rows and dim\.x_rows would both be the member dim_x_rows/,
    ],
  ])('%s: DY6304, exit 1, nothing written', async (name, src, profile, message) => {
    const c = await compile(name, src, profile);
    expect(c.status).toBe(1);
    expect(c.stderr).toMatch(message);
    expect(existsSync(c.out)).toBe(false);
  });
});
