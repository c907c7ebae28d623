/**
 * The C-simulation host (hls-templates/host: dype_mtx.h reads, dype_host.h binds) checks its inputs as `dype run`
 * does (docs/HLS.md): values past what the size line announces, a NaN in an array, a value its parameter's dtype
 * does not hold, a parameter the kernel lacks, a dim that disagrees with the inputs, a repeat count out of i32 are
 * each one error naming the file or PARAMS, exit 1, and no output written. Built with g++ through the projects'
 * Makefiles (skipped without g++).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, example, freshDir, runCli } from '../helpers/cli.js';

const HAVE_GXX = spawnSync('g++', ['--version']).status === 0;
const dir = freshDir('dype-hls-host-inputs-');
afterAll(() => cleanup(dir));

const file = (name: string, text: string): string => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const coord = (n: number, entries: string[], field = 'real'): string =>
  `%%MatrixMarket matrix coordinate ${field} general\n${n} ${n} ${entries.length}\n${entries.join('\n')}\n`;
const array = (values: string[], field = 'real'): string =>
  `%%MatrixMarket matrix array ${field} general\n${values.length} 1\n${values.join('\n')}\n`;

/** Builds program `src`'s C-simulation host; its path. */
function host(name: string, src: string, kernel: string): string {
  const proj = join(dir, name);
  const w = runCli(['hls', src, '-o', proj]);
  if (w.status !== 0) throw new Error(w.stderr);
  const m = spawnSync('make', ['-s', '-C', proj, `build/csim/${kernel}_host`], { encoding: 'utf8', timeout: 200_000 });
  if (m.status !== 0) throw new Error(m.stderr);
  return join(proj, 'build', 'csim', `${kernel}_host`);
}

describe.skipIf(!HAVE_GXX)('the C-simulation host checks its inputs as dype run does', () => {
  let spmv = '';
  let counted = '';
  beforeAll(() => {
    spmv = host('spmv', example('spmv.dy'), 'spmv');
    const src = file(
      'counted.dy',
      'kernel counted(A: csr<i32>[m, n], x: dense<i32>[n], t: i32) -> (y: dense<i32>[m]) {\n  y[i] = 0;\n  repeat t { y[i] = y[i] + A[i, j] * x[j]; }\n}\n',
    );
    counted = host('counted', src, 'counted');
  }, 400_000);

  const run = (bin: string, args: string[]): { status: number | null; err: string; wrote: boolean } => {
    const out = join(dir, 'y.mtx');
    const r = spawnSync(bin, [...args, '--out', `y=${out}`], { encoding: 'utf8', timeout: 30_000 });
    const wrote = existsSync(out);
    spawnSync('rm', ['-f', out]);
    return { status: r.status, err: r.stderr.trim(), wrote };
  };

  it('refuses what dype run refuses, in one line, writing nothing', () => {
    const A = file('A.mtx', coord(3, ['1 1 1.0', '2 2 2.0', '3 3 3.0']));
    const x = file('x.mtx', array(['1', '2', '3']));
    expect(run(spmv, ['--in', `A=${A}`, '--in', `x=${x}`])).toMatchObject({ status: 0, wrote: true });
    const cases: [string[], RegExp][] = [
      [
        [
          '--in',
          `A=${file('long.mtx', coord(3, ['1 1 1.0', '2 2 1.0', '3 3 1.0']).replace('3 3 3\n', '3 3 2\n'))}`,
          '--in',
          `x=${x}`,
        ],
        /long\.mtx:5: expected 2 entries, as the size line says, found more$/,
      ],
      [
        ['--in', `A=${A}`, '--in', `x=${file('xl.mtx', array(['1', '2', '3']) + '4\n')}`],
        /xl\.mtx:6: expected 3 array values, found more$/,
      ],
      [['--in', `A=${A}`, '--in', `x=${file('xn.mtx', array(['1', 'nan', '3']))}`], /xn\.mtx:4: NaN is not allowed/],
      [
        ['--in', `A=${A}`, '--in', `x=${file('xb.mtx', array(['1', '1e39', '3']))}`],
        /xb\.mtx: 'x' is f32: the value 1e\+39 at \(2, 1\) is beyond f32's range$/,
      ],
      [
        ['--in', `A=${A}`, '--in', `x=${x}`, '--param', 'zz=3'],
        /PARAMS: kernel spmv has no scalar parameter or dim 'zz'/,
      ],
      [['--in', `A=${A}`, '--in', `x=${x}`, '--param', 'm=5'], /PARAMS: m=5, but the inputs make dim 'm' 3$/],
    ];
    for (const [args, want] of cases) {
      const r = run(spmv, args);
      expect(r.status, args.join(' ')).toBe(1);
      expect(r.err, args.join(' ')).toMatch(want);
      expect(r.err.split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.wrote, args.join(' ')).toBe(false);
    }
  });

  it('checks integer inputs and a repeat count against i32', () => {
    const A = file('Ai.mtx', coord(2, ['1 1 1', '2 2 2'], 'integer'));
    const x = file('xi.mtx', array(['1', '2'], 'integer'));
    expect(run(counted, ['--in', `A=${A}`, '--in', `x=${x}`, '--param', 't=2'])).toMatchObject({ status: 0 });
    const bad: [string[], RegExp][] = [
      [
        ['--in', `A=${A}`, '--in', `x=${file('xf.mtx', array(['1.5', '2']))}`, '--param', 't=2'],
        /'x' is i32: the value 1\.5 at \(1, 1\) is not a whole number$/,
      ],
      [
        ['--in', `A=${A}`, '--in', `x=${file('xw.mtx', array(['3000000000', '2']))}`, '--param', 't=2'],
        /'x' is i32: the value 3000000000 at \(1, 1\) is outside i32's range/,
      ],
      [
        ['--in', `A=${A}`, '--in', `x=${x}`, '--param', 't=3000000000'],
        /PARAMS: t=3000000000: 't' is i32: outside i32's range/,
      ],
    ];
    for (const [args, want] of bad) {
      const r = run(counted, args);
      expect(r.status, args.join(' ')).toBe(1);
      expect(r.err, args.join(' ')).toMatch(want);
    }
  });
});
