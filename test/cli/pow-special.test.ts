/**
 * pow's special cases are the reference's (JavaScript's Math.pow) on every
 * backend that prints C: a NaN exponent gives NaN, and so does (+-1)^(+-inf),
 * where C's pow gives 1 (codegen/cpu `dy_pow`, CUDA `dy_pow`, HLS
 * `dype_pow`). reference, wasm and native through `dype run`, and the FPGA
 * project's C simulation, in f64 and f32. Native is skipped without a C
 * compiler, the C simulation without g++.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveCompiler } from '../helpers/cc.js';
import { cleanup, freshDir, runCli, runCliAsync, writeLines } from '../helpers/cli.js';
import { HAVE_GXX } from '../hls/example-data.js';

const BACKENDS = haveCompiler() ? ['reference', 'wasm', 'native'] : ['reference', 'wasm'];
const X = ['1', '1', '-1', '-1', '4', '0', '2'];
const Y = ['inf', '-inf', 'inf', '-inf', '0.5', '-1', '10'];
// z = pow(x, y); q = pow(x, y - y): NaN exponents where y is infinite.
const WANT = {
  z: ['nan', 'nan', 'nan', 'nan', '2', 'inf', '1024'],
  q: ['nan', 'nan', 'nan', 'nan', '1', '1', '1'],
};

let dir: string;
beforeAll(() => {
  dir = freshDir('dype-pow-');
});
afterAll(() => cleanup(dir));

const values = (file: string): string[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('%'))
    .slice(1);

function inputs(t: 'f32' | 'f64'): { prog: string; x: string; y: string } {
  const vec = (name: string, v: string[]): string =>
    writeLines(dir, `${name}.mtx`, ['%%MatrixMarket matrix array real general', `${v.length} 1`, ...v]);
  const prog = writeLines(dir, `pow_${t}.dy`, [
    `kernel k(x: dense<${t}>[n], y: dense<${t}>[n]) -> (z: dense<${t}>[n], q: dense<${t}>[n]) {`,
    '  z[i] = pow(x[i], y[i]);',
    '  q[i] = pow(x[i], y[i] - y[i]);',
    '}',
  ]);
  return { prog, x: vec('x', X), y: vec('y', Y) };
}

describe('pow of NaN and infinite exponents', () => {
  for (const t of ['f64', 'f32'] as const) {
    it(`${t}: every CPU backend gives the reference's values`, () => {
      const { prog, x, y } = inputs(t);
      for (const backend of BACKENDS) {
        const outs = ['z', 'q'].flatMap((o) => ['--out', `${o}=${join(dir, `${t}-${backend}-${o}.mtx`)}`]);
        const r = runCli(['run', prog, '--input', `x=${x}`, '--input', `y=${y}`, '--backend', backend, ...outs]);
        expect(r.status, `${backend}: ${r.stderr}`).toBe(0);
        for (const o of ['z', 'q'] as const)
          expect(values(join(dir, `${t}-${backend}-${o}.mtx`)), `${t} ${o} on ${backend}`).toEqual(WANT[o]);
      }
    });
  }

  it.skipIf(!HAVE_GXX)("f64: the FPGA project's C simulation", { timeout: 300_000 }, async () => {
    const { prog, x, y } = inputs('f64');
    const project = join(dir, 'hls');
    const r = await runCliAsync(['hls', prog, '-o', project]);
    expect(r.status, r.stderr).toBe(0);
    execFileSync('make', ['-s', '-C', project, 'build/csim/k_host'], { timeout: 300_000 });
    const outs = ['z', 'q'].flatMap((o) => ['--out', `${o}=${join(dir, `csim-${o}.mtx`)}`]);
    const run = spawnSync(join(project, 'build', 'csim', 'k_host'), ['--in', `x=${x}`, '--in', `y=${y}`, ...outs], {
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).toBe(0);
    for (const o of ['z', 'q'] as const) expect(values(join(dir, `csim-${o}.mtx`)), o).toEqual(WANT[o]);
  });
});
