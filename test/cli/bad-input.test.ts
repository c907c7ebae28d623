/**
 * The command-line rules of docs/CLI.md (exit codes, one clear error, no partial output), checked on the
 * built command (dist/cli/main.js) in a child process: every class of bad
 * input exits 1 with one clear diagnostic naming the file, the line where
 * there is one, and what was expected; no stack trace; no output file and no
 * stray temporary file left behind. Usage errors exit 2. Plus the positive
 * contracts of `--help`, `check`, `ir` and `run --json/--repeat/--out`.
 *
 * Each test works in a fresh temporary directory used as the working
 * directory, so file names in messages are short relative paths.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseMatrixMarket } from '../../runtime/io/mtx-read.js';
import {
  cleanup,
  EXAMPLES,
  example,
  freshDir,
  listDir,
  MM_ARRAY_REAL,
  MM_COORD_REAL,
  runCliAsync,
  stackFrames,
  writeLines,
  type CliResult,
} from '../helpers/cli.js';

const SPMV = example('spmv.dy');
const GCN = example('gcn.dy');
const PAGERANK = example('pagerank.dy');

/** A fresh temporary working directory for one test, with helpers that write into it and run the CLI in it. */
class Sandbox {
  readonly dir = freshDir();

  lines(name: string, lines: readonly string[]): string {
    return writeLines(this.dir, name, lines);
  }

  /** A good 3 x 3 matrix [[1,0,0],[0,2,0],[3,0,4]] in coordinate form. */
  goodA(name = 'A.mtx'): string {
    return this.lines(name, [MM_COORD_REAL, '3 3 4', '1 1 1.0', '2 2 2.0', '3 1 3.0', '3 3 4.0']);
  }

  /** A coordinate file with the given size line and entry lines. */
  coord(name: string, size: string, entries: readonly string[], header = MM_COORD_REAL): string {
    return this.lines(name, [header, size, ...entries]);
  }

  /** A dense rows x cols array holding 1, 2, 3, ... */
  dense(name: string, rows: number, cols: number): string {
    const vals = Array.from({ length: rows * cols }, (_, i) => String(i + 1));
    return this.lines(name, [MM_ARRAY_REAL, `${rows} ${cols}`, ...vals]);
  }

  list(): string[] {
    return listDir(this.dir);
  }

  run(args: readonly string[]): Promise<CliResult> {
    return runCliAsync(args, { cwd: this.dir });
  }

  /**
   * Runs `args` with an extra `--out NAME=out.mtx` and checks: the exit code,
   * the first stderr line, no stack trace, no output file, and no new file
   * (temporary or otherwise) in the directory.
   */
  async fails(args: readonly string[], outName: string, exit: 1 | 2, first: RegExp): Promise<CliResult> {
    const before = this.list();
    const r = await this.run([...args, '--out', `${outName}=out.mtx`]);
    expect(r.status, `stderr: ${r.stderr}`).toBe(exit);
    noStackTrace(r);
    expect(r.stderr.split('\n')[0]).toMatch(first);
    expect(existsSync(join(this.dir, 'out.mtx'))).toBe(false);
    expect(this.list()).toEqual(before);
    return r;
  }

  dispose(): void {
    cleanup(this.dir);
  }
}

type Body = (s: Sandbox) => Promise<void>;
const wrap = (body: Body) => async (): Promise<void> => {
  const s = new Sandbox();
  try {
    await body(s);
  } finally {
    s.dispose();
  }
};
/** A test in its own sandbox; tests run concurrently since each spawns processes and waits. */
const test = (name: string, body: Body): void => void it.concurrent(name, wrap(body));

function noStackTrace(r: CliResult): void {
  const all = r.stdout + r.stderr;
  expect(stackFrames(all), all).toEqual([]);
  expect(all).not.toMatch(/internal error/i);
  expect(all).not.toMatch(/This is a bug in dype/);
}

describe('bad programs (exit 1, file:line:col diagnostics with a caret line)', () => {
  test('malformed program (syntax error)', async (s) => {
    s.lines('prog.dy', [
      'kernel spmv(A: csr<f32>[m, n], x: dense<f32>[n]) -> (y: dense<f32>[m]) {',
      '  y[i] = A[i, j] * x[j]',
      '}',
    ]);
    s.goodA();
    const r = await s.fails(
      ['run', 'prog.dy', '--input', 'A=A.mtx', '--input', 'x=@ones'],
      'y',
      1,
      /^prog\.dy:2:\d+: error DY1002: expected ';'/,
    );
    const lines = r.stderr.split('\n');
    expect(lines[1]).toBe('    y[i] = A[i, j] * x[j]');
    expect(lines[2]).toMatch(/^ +\^/);
    // `check` reports the same diagnostic, prints nothing on stdout, exits 1.
    const c = await s.run(['check', 'prog.dy']);
    expect(c.status).toBe(1);
    expect(c.stdout).toBe('');
    expect(c.stderr.split('\n')[0]).toBe(lines[0]);
    noStackTrace(c);
  });

  test('type error program: undefined name', async (s) => {
    s.goodA();
    s.lines('undef.dy', [
      'kernel spmv(A: csr<f32>[m, n], x: dense<f32>[n]) -> (y: dense<f32>[m]) {',
      '  y[i] = A[i, j] * z[j];',
      '}',
    ]);
    const r = await s.fails(
      ['run', 'undef.dy', '--input', 'A=A.mtx', '--input', 'x=@ones'],
      'y',
      1,
      /^undef\.dy:2:20: error DY2001: 'z' is not defined$/,
    );
    expect(r.stderr.split('\n')[1]).toBe('    y[i] = A[i, j] * z[j];');
    expect(r.stderr.split('\n')[2]).toMatch(/^ {21}\^/);
  });

  test('type error program: dimension and dtype mismatches', async (s) => {
    s.goodA();
    s.lines('dims.dy', [
      'kernel spmv(A: csr<f32>[m, n], x: dense<f32>[m]) -> (y: dense<f32>[m]) {',
      '  y[i] = A[i, j] * x[j];',
      '}',
    ]);
    await s.fails(
      ['run', 'dims.dy', '--input', 'A=A.mtx', '--input', 'x=@ones'],
      'y',
      1,
      /^dims\.dy:2:\d+: error DY2006: index 'j' ranges over n .* but over m/,
    );
    s.lines('dtype.dy', [
      'kernel spmv(A: csr<f32>[m, n], x: dense<i32>[n]) -> (y: dense<f32>[m]) {',
      '  y[i] = A[i, j] * x[j];',
      '}',
    ]);
    await s.fails(
      ['run', 'dtype.dy', '--input', 'A=A.mtx', '--input', 'x=@ones'],
      'y',
      1,
      /^dtype\.dy:2:\d+: error DY2007: .*f32 and i32/,
    );
  });

  test('missing program file', async (s) => {
    s.goodA();
    await s.fails(
      ['run', 'nosuch.dy', '--input', 'A=A.mtx', '--input', 'x=@ones'],
      'y',
      1,
      /^nosuch\.dy: error DY3010: cannot read the program: no such file or directory$/,
    );
  });
});

describe('bad Matrix Market data (exit 1, file:line: error DY3xxx)', () => {
  const spmvWith = (a: string): string[] => ['run', SPMV, '--input', `A=${a}`, '--input', 'x=@ones'];

  test('bad header', async (s) => {
    s.coord('bad.mtx', '3 3 1', ['1 1 1'], '%%MatrixMarket matrix coordinat real general');
    await s.fails(
      spmvWith('bad.mtx'),
      'y',
      1,
      /^bad\.mtx:1: error DY3001: unknown format "coordinat" in the header; expected coordinate or array$/,
    );
    s.lines('nohdr.mtx', ['3 3 1', '1 1 1']);
    await s.fails(
      spmvWith('nohdr.mtx'),
      'y',
      1,
      /^nohdr\.mtx:1: error DY3001: expected the header "%%MatrixMarket matrix <coordinate\|array>/,
    );
  });

  test('bad size line', async (s) => {
    s.lines('bad.mtx', [MM_COORD_REAL, '% a comment', '3 3', '1 1 1']);
    await s.fails(
      spmvWith('bad.mtx'),
      'y',
      1,
      /^bad\.mtx:3: error DY3002: expected the size line "rows cols entries" \(three non-negative integers\), found "3 3"$/,
    );
  });

  test('out-of-range index', async (s) => {
    s.coord('bad.mtx', '3 3 2', ['1 1 1', '4 1 1']);
    await s.fails(spmvWith('bad.mtx'), 'y', 1, /^bad\.mtx:4: error DY3003: row index 4 is out of range 1\.\.3/);
    s.coord('zero.mtx', '3 3 2', ['1 1 1', '1 0 1']);
    await s.fails(spmvWith('zero.mtx'), 'y', 1, /^zero\.mtx:4: error DY300[34]: .*column/);
  });

  test('non-integer index', async (s) => {
    s.coord('bad.mtx', '3 3 2', ['1 1 1', '2.5 1 1']);
    await s.fails(
      spmvWith('bad.mtx'),
      'y',
      1,
      /^bad\.mtx:4: error DY3004: expected a positive integer row index, found "2\.5"$/,
    );
  });

  test('wrong entry count: too few', async (s) => {
    s.coord('bad.mtx', '3 3 3', ['1 1 1', '2 1 1']);
    await s.fails(
      spmvWith('bad.mtx'),
      'y',
      1,
      /^bad\.mtx:\d+: error DY3005: the size line \(line 2\) declares 3 entries, but the file ends after 2$/,
    );
  });

  test('wrong entry count: too many', async (s) => {
    s.coord('bad.mtx', '3 3 1', ['1 1 1', '2 1 1']);
    await s.fails(
      spmvWith('bad.mtx'),
      'y',
      1,
      /^bad\.mtx:4: error DY3005: the size line \(line 2\) declares 1 entries, but this line holds entry 2$/,
    );
  });

  test('NaN value', async (s) => {
    s.coord('bad.mtx', '3 3 2', ['1 1 1', '2 1 nan']);
    await s.fails(
      spmvWith('bad.mtx'),
      'y',
      1,
      /^bad\.mtx:4: error DY3006: the value is NaN \("nan"\); expected a number/,
    );
  });

  test('duplicate entries', async (s) => {
    s.coord('bad.mtx', '3 3 2', ['1 1 1', '1 1 2']);
    await s.fails(
      spmvWith('bad.mtx'),
      'y',
      1,
      /^bad\.mtx:4: error DY3009: duplicate entry \(1,1\): given by line 3 and again by line 4/,
    );
  });

  test('malformed edge list line', async (s) => {
    s.lines('g.txt', ['1 2', '2 x', '3 4']);
    await s.fails(
      spmvWith('g.txt'),
      'y',
      1,
      /^g\.txt:2: error DY3012: expected a non-negative integer vertex id in the second column, found "x"$/,
    );
  });
});

describe('data that does not fit the program (exit 1)', () => {
  test('dimension mismatch: spmv with x of the wrong length', async (s) => {
    s.goodA();
    s.dense('x4.mtx', 4, 1);
    await s.fails(
      ['run', SPMV, '--input', 'A=A.mtx', '--input', 'x=x4.mtx'],
      'y',
      1,
      /^x4\.mtx:2: error DY3007: dim 'n' is 3 from dimension 2 of 'A' but 4 from dimension 1 of 'x'$/,
    );
  });

  // Regression (plan and ir planned such inputs, exit 0): they refuse what run refuses.
  test('dimension mismatch: plan and ir --input refuse it as run does', async (s) => {
    s.goodA();
    s.dense('x4.mtx', 4, 1);
    for (const cmd of ['plan', 'ir']) {
      const r = await s.run([cmd, SPMV, '--input', 'A=A.mtx', '--input', 'x=x4.mtx']);
      expect(r.status, `${cmd}: ${r.stderr}`).toBe(1);
      noStackTrace(r);
      expect(r.stdout).toBe('');
      expect(r.stderr.split('\n')[0]).toMatch(
        /^x4\.mtx:2: error DY3007: dim 'n' is 3 from dimension 2 of 'A' but 4 from dimension 1 of 'x'$/,
      );
    }
  });

  // Regression (plan and ir planned a negative or fractional dim, and a vector given as a 3 x 2 array, exit 0).
  test('plan and ir check dims given by --param and input ranks as run does', async (s) => {
    s.goodA();
    s.dense('x32.mtx', 3, 2);
    for (const [cmd, args, re] of [
      ['plan', ['--param', 'n=-3'], /^--param n: error DY3015: dim 'n' must be a non-negative integer, got -3$/],
      ['ir', ['--param', 'n=2.5'], /^--param n: error DY3015: dim 'n' must be a non-negative integer, got 2\.5$/],
      ['plan', ['--input', 'x=x32.mtx'], /^x32\.mtx:2: error DY3007: 'x' has 1 dimension\(s\) but the input is 3 x 2$/],
    ] as const) {
      const r = await s.run([cmd, SPMV, '--input', 'A=A.mtx', ...args]);
      expect(r.status, `${cmd} ${args.join(' ')}: ${r.stderr}`).toBe(1);
      noStackTrace(r);
      expect(r.stdout).toBe('');
      expect(r.stderr.split('\n')[0]).toMatch(re);
    }
  });

  test('dimension mismatch: gcn with X rows != A rows', async (s) => {
    s.goodA();
    s.dense('X.mtx', 4, 2);
    await s.fails(
      [
        'run',
        GCN,
        '--input',
        'A=A.mtx',
        '--input',
        'X=X.mtx',
        '--input',
        'W1=@ones',
        '--input',
        'W2=@ones',
        '--param',
        'h=2',
        '--param',
        'c=2',
      ],
      'Y',
      1,
      /^X\.mtx:2: error DY3007: dim 'n' is 3 from dimension \d of 'A' but 4 from dimension 1 of 'X'$/,
    );
  });

  test('missing input file', async (s) => {
    await s.fails(
      ['run', SPMV, '--input', 'A=nosuch.mtx', '--input', 'x=@ones'],
      'y',
      1,
      /^nosuch\.mtx: error DY3010: cannot read the file: no such file or directory$/,
    );
  });

  test('input path is a directory', async (s) => {
    mkdirSync(join(s.dir, 'sub'));
    await s.fails(
      ['run', SPMV, '--input', 'A=sub', '--input', 'x=@ones'],
      'y',
      1,
      /^sub: error DY3010: cannot read the file: it is a directory$/,
    );
  });

  // Regression: /dev/zero as a program or an input was read for ever, into all the memory there was.
  test('a device as the program or an input is refused before it is read', async (s) => {
    expect(existsSync('/dev/zero')).toBe(true);
    await s.fails(
      ['run', SPMV, '--input', 'A=/dev/zero', '--input', 'x=@ones'],
      'y',
      1,
      /^\/dev\/zero: error DY3010: cannot read the file: it is a character device, not a regular file$/,
    );
    const check = await s.run(['check', '/dev/zero']);
    expect(check.status).toBe(1);
    expect(check.stderr).toMatch(/^\/dev\/zero: error DY3010: cannot read the program: it is a character device/m);
  });

  test('missing required input', async (s) => {
    s.goodA();
    await s.fails(
      ['run', SPMV, '--input', 'A=A.mtx'],
      'y',
      1,
      /^--input x: error DY3013: missing input 'x' \(dense<f32>\): pass --input x=FILE$/,
    );
  });

  test('missing scalar parameter', async (s) => {
    s.goodA();
    await s.fails(
      ['run', PAGERANK, '--input', 'A=A.mtx', '--input', 'r0=@ones'],
      'r',
      1,
      /^--param d: error DY3013: missing scalar 'd' \(f32\): pass --param d=VALUE$/,
    );
  });

  test('unknown input name (generator and file)', async (s) => {
    s.goodA();
    await s.fails(
      ['run', SPMV, '--input', 'A=A.mtx', '--input', 'x=@ones', '--input', 'zz=@ones'],
      'y',
      1,
      /^--input zz: error DY3014: kernel 'spmv' has no parameter 'zz'/,
    );
    await s.fails(
      ['run', SPMV, '--input', 'A=A.mtx', '--input', 'x=@ones', '--input', 'zz=A.mtx'],
      'y',
      1,
      /^--input zz: error DY3014: kernel 'spmv' has no parameter 'zz'; it takes A, x$/,
    );
  });

  test('a misspelled input name is reported as such, before any dim it leaves unbound', async (s) => {
    s.goodA();
    // 'a' for 'A': the generators cannot be sized without A, but the name is the mistake.
    const args = [
      'run',
      GCN,
      '--input',
      'a=A.mtx',
      '--input',
      'X=@random',
      '--input',
      'W1=@random',
      '--input',
      'W2=@random',
      '--param',
      'f=4',
      '--param',
      'h=4',
      '--param',
      'c=2',
    ];
    const r = await s.fails(
      args,
      'Y',
      1,
      /^--input a: error DY3014: kernel 'gcn' has no parameter 'a'; it takes A, X, W1, W2 \(did you mean 'A'\?\)$/,
    );
    expect(r.stderr).not.toMatch(/cannot size/);
    // Likewise a misspelled --param, before the generators need its dim.
    await s.fails(
      [
        'run',
        GCN,
        '--input',
        'A=A.mtx',
        '--input',
        'X=@random',
        '--input',
        'W1=@random',
        '--input',
        'W2=@random',
        '--param',
        'F=4',
        '--param',
        'h=4',
        '--param',
        'c=2',
      ],
      'Y',
      1,
      /^--param F: error DY3014: kernel 'gcn' has no scalar parameter or dim 'F'; its scalars and dims are n, f, h, c \(did you mean 'f'\?\)$/,
    );
    // A scalar parameter given as an input is named as such.
    await s.fails(
      ['run', PAGERANK, '--input', 'A=A.mtx', '--input', 'r0=@ones', '--input', 'd=@ones'],
      'r',
      1,
      /^--input d: error DY3014: 'd' is a scalar parameter of kernel 'pagerank': pass --param d=VALUE$/,
    );
  });

  test('unknown --out name', async (s) => {
    s.goodA();
    const before = s.list();
    const r = await s.run(['run', SPMV, '--input', 'A=A.mtx', '--input', 'x=@ones', '--out', 'q=q.mtx']);
    expect(r.status).toBe(1);
    noStackTrace(r);
    expect(r.stderr).toMatch(
      /^--out q: error DY3014: kernel 'spmv' has no result or tensor input 'q'; its results are y, its tensor inputs A, x$/m,
    );
    expect(s.list()).toEqual(before);
  });

  // A generated input written by --out feeds another run (or the HLS C simulation, docs/HLS.md) the same values.
  test('--out of a tensor input writes it as the run generated it: fed back, the same result bit for bit', async (s) => {
    s.goodA();
    const first = await s.run([
      'run',
      SPMV,
      '--input',
      'A=A.mtx',
      '--input',
      'x=@random:5',
      '--out',
      'x=x.mtx',
      '--out',
      'y=y1.mtx',
    ]);
    expect(first.status, first.stderr).toBe(0);
    expect(readFileSync(join(s.dir, 'x.mtx'), 'utf8')).toMatch(
      /^%%MatrixMarket matrix array real general\n% x, input of kernel spmv \(@random:5\)\n/,
    );
    const again = await s.run(['run', SPMV, '--input', 'A=A.mtx', '--input', 'x=x.mtx', '--out', 'y=y2.mtx']);
    expect(again.status, again.stderr).toBe(0);
    const body = (f: string): string => readFileSync(join(s.dir, f), 'utf8').split('\n').slice(2).join('\n');
    expect(body('y2.mtx')).toBe(body('y1.mtx'));
  });

  test('bad --param value', async (s) => {
    s.goodA();
    await s.fails(
      ['run', PAGERANK, '--input', 'A=A.mtx', '--input', 'r0=@ones', '--param', 'd=abc'],
      'r',
      1,
      /^--param d: error DY3015: expected a decimal number, true\/false or inf, got 'abc'$/,
    );
    // A dim given by --param must be a non-negative integer.
    s.lines('id.dy', ['kernel k(A: dense<f32>[n]) -> (B: dense<f32>[n]) {', '  B[i] = A[i];', '}']);
    s.dense('a3.mtx', 3, 1);
    await s.fails(
      ['run', 'id.dy', '--input', 'A=@ones', '--param', 'n=4.5'],
      'B',
      1,
      /^--param n: error DY3015: dim 'n' must be a non-negative integer, got 4\.5$/,
    );
    // An unknown --param name.
    await s.fails(
      ['run', 'id.dy', '--input', 'A=a3.mtx', '--param', 'zz=1'],
      'B',
      1,
      /^--param zz: error DY3014: kernel 'k' has no scalar parameter or dim 'zz'; its scalars and dims are n$/,
    );
  });

  test('bad generator argument', async (s) => {
    s.goodA();
    await s.fails(
      ['run', SPMV, '--input', 'A=A.mtx', '--input', 'x=@random:abc'],
      'y',
      1,
      /^--input x: error DY3015: @random:SEED needs an integer seed, got 'abc'$/,
    );
    await s.fails(
      ['run', SPMV, '--input', 'A=A.mtx', '--input', 'x=@nosuch'],
      'y',
      1,
      /^--input x: error DY3015: unknown generator '@nosuch'/,
    );
    await s.fails(
      ['run', example('sssp.dy'), '--input', 'A=A.mtx', '--input', 'd0=@source:99'],
      'd',
      1,
      /^--input d0: error DY3015: @source:K needs a vertex index 0 <= K < 3, got '99'$/,
    );
  });

  test('dense array given for a csr parameter', async (s) => {
    s.dense('A.mtx', 3, 3);
    await s.fails(
      ['run', SPMV, '--input', 'A=A.mtx', '--input', 'x=@ones'],
      'y',
      1,
      /^A\.mtx: error DY3016: 'A' is csr: expected a coordinate \(sparse\) Matrix Market file, found a dense array$/,
    );
    await s.fails(
      ['run', SPMV, '--input', 'A=@ones', '--input', 'x=@ones'],
      'y',
      1,
      /^--input A: error DY3016: 'A' is csr: generators make dense inputs only/,
    );
  });

  // Regression: an i32 input of 3000000000 wrapped on native and wasm (the float64 reference kept it), silently.
  test('an integer beyond i32 in a file or a generator for an i32 parameter', async (s) => {
    s.lines('int.dy', ['kernel k(A: dense<i32>[n]) -> (B: dense<i32>[n]) {', '  B[i] = A[i];', '}']);
    s.lines('big.mtx', ['%%MatrixMarket matrix array integer general', '2 1', '1', '3000000000']);
    await s.fails(
      ['run', 'int.dy', '--input', 'A=big.mtx'],
      'B',
      1,
      /^big\.mtx: error DY3008: 'A' is i32 but holds the value 3000000000 \(outside i32's range -2147483648\.\.2147483647\)$/,
    );
    // A coordinate file's value is named with its line.
    s.lines('sp.dy', ['kernel k(A: csr<i32>[m, n]) -> (s: i32) {', '  s = sum(i, j: A[i, j]);', '}']);
    s.lines('big-sp.mtx', ['%%MatrixMarket matrix coordinate integer general', '2 2 2', '1 1 1', '2 2 -3000000000']);
    await s.fails(
      ['run', 'sp.dy', '--input', 'A=big-sp.mtx'],
      's',
      1,
      /^big-sp\.mtx:4: error DY3008: 'A' is i32 but holds the value -3000000000 \(outside i32's range/,
    );
    await s.fails(
      ['run', 'int.dy', '--input', 'A=@const:2147483648', '--param', 'n=2'],
      'B',
      1,
      /^--input A: error DY3015: 'A' is i32: 2147483648 is outside i32's range/,
    );
  });

  test('non-integer value for an integer parameter', async (s) => {
    s.lines('int.dy', ['kernel k(A: dense<i32>[n]) -> (B: dense<i32>[n]) {', '  B[i] = A[i];', '}']);
    s.lines('x.mtx', [MM_ARRAY_REAL, '3 1', '1.5', '2', '3']);
    await s.fails(
      ['run', 'int.dy', '--input', 'A=x.mtx'],
      'B',
      1,
      /^x\.mtx: error DY3008: 'A' is i32 but holds the value 1\.5 \(not a whole number\)$/,
    );
  });

  test('unknown --kernel', async (s) => {
    s.goodA();
    await s.fails(
      ['run', SPMV, '--kernel', 'nosuch', '--input', 'A=A.mtx', '--input', 'x=@ones'],
      'y',
      1,
      /spmv\.dy:1:1: error DY2030: no kernel 'nosuch' in this file; it defines spmv$/,
    );
  });
});

describe('outputs that cannot be written (exit 1, nothing left behind)', () => {
  test('unwritable output path (directory missing)', async (s) => {
    s.goodA();
    const before = s.list();
    const r = await s.run(['run', SPMV, '--input', 'A=A.mtx', '--input', 'x=@ones', '--out', 'y=nodir/y.mtx']);
    expect(r.status).toBe(1);
    noStackTrace(r);
    expect(r.stderr).toMatch(/^nodir\/y\.mtx: error DY3017: cannot write the output: no such file or directory$/m);
    expect(s.list()).toEqual(before);
  });

  test('output path is a directory', async (s) => {
    s.goodA();
    mkdirSync(join(s.dir, 'sub'));
    const before = s.list();
    const r = await s.run(['run', SPMV, '--input', 'A=A.mtx', '--input', 'x=@ones', '--out', 'y=sub']);
    expect(r.status).toBe(1);
    noStackTrace(r);
    expect(r.stderr).toMatch(/^sub: error DY3017: cannot write the output: it is a directory$/m);
    expect(s.list()).toEqual(before);
    expect(readdirSync(join(s.dir, 'sub'))).toEqual([]);
  });

  test('a rank-3 result: DY3017 before any work, nothing written (it was an internal error, exit 70)', async (s) => {
    s.lines('d3.dy', [
      'kernel d3(X: dense<f32>[n, f], W: dense<f32>[f, h]) -> (Z: dense<f32>[n, f, h], y: dense<f32>[n, h]) {',
      '  Z[i, k, c] = X[i, k] * W[k, c];',
      '  y[i, c] = sum(k: X[i, k] * W[k, c]);',
      '}',
    ]);
    const before = s.list();
    const args = ['--input', 'X=@ones', '--input', 'W=@ones', '--param', 'n=3', '--param', 'f=2', '--param', 'h=2'];
    const r = await s.run(['run', 'd3.dy', ...args, '--out', 'y=y.mtx', '--out', 'Z=z.mtx']);
    expect(r.status).toBe(1);
    noStackTrace(r);
    expect(r.stderr.trim()).toBe(
      "--out Z: error DY3017: cannot write 'Z': it is a rank-3 tensor (dense<f32>[n, f, h]); a Matrix Market file holds rank 0, 1 or 2",
    );
    expect(s.list()).toEqual(before);
  });

  test('several outputs: one unwritable means none is written', async (s) => {
    s.lines('two.dy', [
      'kernel k(A: dense<f32>[n]) -> (B: dense<f32>[n], C: dense<f32>[n]) {',
      '  B[i] = A[i];',
      '  C[i] = A[i] * 2;',
      '}',
    ]);
    s.dense('a.mtx', 3, 1);
    const before = s.list();
    const r = await s.run(['run', 'two.dy', '--input', 'A=a.mtx', '--out', 'B=b.mtx', '--out', 'C=nodir/c.mtx']);
    expect(r.status).toBe(1);
    noStackTrace(r);
    expect(r.stderr).toMatch(/^nodir\/c\.mtx: error DY3017: cannot write the output/m);
    expect(s.list()).toEqual(before);
  });

  test('a failing run leaves an existing output file untouched', async (s) => {
    const y = s.lines('y.mtx', ['precious']);
    s.coord('bad.mtx', '3 3 1', ['9 9 1']);
    const r = await s.run(['run', SPMV, '--input', 'A=bad.mtx', '--input', 'x=@ones', '--out', 'y=y.mtx']);
    expect(r.status).toBe(1);
    noStackTrace(r);
    expect(readFileSync(y, 'utf8')).toBe('precious\n');
    expect(s.list()).toEqual(['bad.mtx', 'y.mtx']);
  });
});

describe('bad usage (exit 2)', () => {
  const usageFails = async (s: Sandbox, args: readonly string[], message: RegExp): Promise<void> => {
    if (!existsSync(join(s.dir, 'A.mtx'))) s.goodA();
    const before = s.list();
    const r = await s.run(args);
    expect(r.status, r.stderr).toBe(2);
    noStackTrace(r);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
    expect(s.list()).toEqual(before);
  };
  const spmv = ['run', SPMV, '--input', 'A=A.mtx', '--input', 'x=@ones', '--out', 'y=y.mtx'];

  test('unknown command', (s) => usageFails(s, ['frobnicate', SPMV], /unknown command 'frobnicate'/));
  // Regression: commander's help printed the general help and exited 0 for a name that is no command.
  test('help of an unknown command', (s) => usageFails(s, ['help', 'frobnicate'], /unknown command 'frobnicate'/));
  // Regression: the last of two values was kept and the first dropped unread.
  test('an option of one value given twice', (s) =>
    usageFails(
      s,
      ['run', SPMV, '--input', 'A=A.mtx', '--input', 'x=@ones', '--backend=wasm', '--backend', 'reference'],
      /--backend is given twice \(--backend=wasm, --backend\): give it once/,
    ));
  // Regression: a UTF-8 byte-order mark was DY1001 (an unexpected character) on line 1.
  test('a program that begins with a byte-order mark checks; columns count from what follows it', async (s) => {
    s.lines('bom.dy', ['\uFEFFkernel f(x: dense<f32>[n]) -> (y: dense<f32>[n]) {', '  y[i] = x[i] * 2;', '}']);
    const ok = await s.run(['check', 'bom.dy']);
    expect(ok.status, ok.stderr).toBe(0);
    s.lines('bom-bad.dy', ['\uFEFFkernel f(x: dense<f32>[n]) -> (y: dense<f32>[n]) { $', '}']);
    const bad = await s.run(['check', 'bom-bad.dy']);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/^bom-bad\.dy:1:52: error DY1001/m);
  });
  // Regression: without --input, ir ignored a bad --system or --objective unread.
  test('ir: options of the partition pass without --input', (s) =>
    usageFails(
      s,
      ['ir', SPMV, '--system', 'nope', '--objective', 'speed'],
      /--system, --objective are for the partition pass, which runs with --input/,
    ));
  // Regression: the list after 'it takes' was empty.
  test('an --input for a kernel of no parameters', async (s) => {
    s.lines('none.dy', ['kernel f() -> (y: f32) {', '  y = 1.0;', '}']);
    await s.fails(
      ['run', 'none.dy', '--input', 'x=@ones'],
      'y',
      1,
      /^--input x: error DY3014: kernel 'f' has no parameter 'x'; it takes none$/,
    );
  });
  test('unknown option', (s) => usageFails(s, [...spmv, '--bogus'], /unknown option '--bogus'/));
  test('missing file argument', (s) => usageFails(s, ['check'], /missing required argument 'file'/));
  test('bad --repeat', async (s) => {
    await usageFails(s, [...spmv, '--repeat', '0'], /--repeat expects an integer >= 1, got '0'/);
    await usageFails(s, [...spmv, '--repeat', 'abc'], /--repeat expects an integer >= 1, got 'abc'/);
    await usageFails(s, [...spmv, '--repeat', '1.5'], /--repeat expects an integer >= 1, got '1\.5'/);
  });
  test('bad --threads', (s) =>
    usageFails(s, [...spmv, '--threads', 'abc'], /--threads expects an integer >= 1, got 'abc'/));
  test('unknown backend', (s) =>
    usageFails(
      s,
      [...spmv, '--backend', 'nosuch'],
      /backend 'nosuch' is not available in this build; available: auto, native, wasm, reference/,
    ));
  test('malformed NAME=VALUE', async (s) => {
    await usageFails(
      s,
      ['run', SPMV, '--input', 'A', '--input', 'x=@ones', '--out', 'y=y.mtx'],
      /--input expects NAME=VALUE, got 'A'/,
    );
    await usageFails(
      s,
      ['run', SPMV, '--input', '=A.mtx', '--input', 'x=@ones', '--out', 'y=y.mtx'],
      /--input expects NAME=VALUE, got '=A\.mtx'/,
    );
    await usageFails(
      s,
      ['run', PAGERANK, '--input', 'A=A.mtx', '--input', 'r0=@ones', '--param', 'd=', '--out', 'r=y.mtx'],
      /--param expects NAME=VALUE, got 'd='/,
    );
    await usageFails(
      s,
      ['run', SPMV, '--input', 'A=A.mtx', '--input', 'x=@ones', '--out', '1y=y.mtx'],
      /--out: '1y' is not a valid name/,
    );
    await usageFails(
      s,
      ['run', SPMV, '--input', 'A=A.mtx', '--input', 'A=A.mtx', '--input', 'x=@ones', '--out', 'y=y.mtx'],
      /--input A is given twice/,
    );
  });
  test('--print-ir-after together with --print-ir-after-all', (s) =>
    usageFails(
      s,
      ['ir', SPMV, '--print-ir-after=classify', '--print-ir-after-all'],
      /give either --print-ir-after or --print-ir-after-all, not both/,
    ));
  // Regression (was exit 0 with the default output): an empty pass name.
  test('--print-ir-after with an empty pass name', async (s) => {
    await usageFails(s, ['ir', SPMV, '--print-ir-after='], /--print-ir-after expects pass names, got ''/);
    await usageFails(s, ['ir', SPMV, '--print-ir-after=classify,,fuse-elementwise'], /expects pass names/);
  });

  // Regression (was exit 0/70 or a wrong message): `dype` with no command prints the help on stderr and exits 0
  // (main.ts maps commander's 'commander.help' code to 0); it is bad usage,
  // so by the contract it should exit 2.
  test('no command at all', (s) => usageFails(s, [], /Usage: dype/));

  // Regression (was exit 0/70 or a wrong message): two --out flags naming the same file: both outputs are renamed onto
  // it, the second silently replaces the first, and the run exits 0.
  test('two outputs to the same file', async (s) => {
    s.lines('two.dy', [
      'kernel k(A: dense<f32>[n]) -> (B: dense<f32>[n], C: dense<f32>[n]) {',
      '  B[i] = A[i];',
      '  C[i] = A[i] * 2;',
      '}',
    ]);
    s.dense('a.mtx', 3, 1);
    await usageFails(
      s,
      ['run', 'two.dy', '--input', 'A=a.mtx', '--out', 'B=same.mtx', '--out', 'C=same.mtx'],
      /same\.mtx/,
    );
  });
});

describe('hostile sizes (known bugs: internal errors)', () => {
  const idProgram = (s: Sandbox): void =>
    void s.lines('id.dy', ['kernel k(A: dense<f32>[n]) -> (B: dense<f32>[n]) {', '  B[i] = A[i];', '}']);

  // Regression (was exit 0/70 or a wrong message): a generator sized by a huge --param dim allocates without a check:
  // `RangeError: Invalid typed array length: 1000000000000`, exit 70 with a stack trace.
  test('generator with --param n=1e12', async (s) => {
    idProgram(s);
    await s.fails(
      ['run', 'id.dy', '--input', 'A=@ones', '--param', 'n=1e12'],
      'B',
      1,
      /^--(param n|input A): error DY30\d\d/,
    );
  });

  // Regression (was exit 0/70 or a wrong message): a negative --param dim reaches the generator before bindInputs checks
  // it: `RangeError: Invalid typed array length: -1`, exit 70.
  test('generator with --param n=-1', async (s) => {
    idProgram(s);
    await s.fails(
      ['run', 'id.dy', '--input', 'A=@ones', '--param', 'n=-1'],
      'B',
      1,
      /^--param n: error DY3015: dim 'n' must be a non-negative integer/,
    );
  });

  // Regression (was exit 0/70 or a wrong message): a program with a huge literal dim passes `check`, and a generator for
  // it throws RangeError (exit 70).
  test('generator for a huge literal dim', async (s) => {
    s.lines('big.dy', [
      'kernel k(A: dense<f32>[99999999999]) -> (B: dense<f32>[99999999999]) {',
      '  B[i] = A[i];',
      '}',
    ]);
    await s.fails(['run', 'big.dy', '--input', 'A=@ones'], 'B', 1, /^--input A: error DY30\d\d/);
  });

  // Regression (was exit 0/70 or a wrong message): a 3-line coordinate file declaring 100000 x 100000 given for a
  // dense parameter: sparseToDense throws "RangeError: Invalid typed array
  // length: 10000000000" (exit 70) instead of a data error saying the matrix
  // is too large to hold densely. (Sizes near 2147483647 are worse: the
  // conversion first allocates gigabytes and takes tens of seconds.)
  test('huge sparse matrix for a dense parameter', async (s) => {
    s.lines('id2.dy', ['kernel k(A: dense<f32>[n, m]) -> (B: dense<f32>[n, m]) {', '  B[i, j] = A[i, j];', '}']);
    s.coord('huge.mtx', '100000 100000 1', ['1 1 1']);
    await s.fails(['run', 'id2.dy', '--input', 'A=huge.mtx'], 'B', 1, /^huge\.mtx(:\d+)?: error DY30\d\d/);
  });

  // Regression (was exit 0/70 or a wrong message): `--input x=@const:nan` is reported against `--param x` (inputs.ts
  // passes the input's name to parseScalar, whose message says `--param NAME`).
  test('bad @const value names --param instead of --input', async (s) => {
    s.goodA();
    await s.fails(['run', SPMV, '--input', 'A=A.mtx', '--input', 'x=@const:nan'], 'y', 1, /^--input x: error DY3015/);
  });
});

describe('zero-trip repeat (known bug: internal error)', () => {
  // Regression (was exit 0/70 or a wrong message): a temporary assigned only inside `repeat c { ... }` and read after
  // the loop: with --param c=0 the interpreter crashes with "TypeError:
  // Cannot read properties of undefined (reading 'data')" (exit 70, stack
  // trace) instead of a DY3015 error like the one it gives for a result that
  // is never computed. (The checker also accepts a literal `repeat 0` there.)
  test('repeat count 0 leaves a temporary unassigned ', async (s) => {
    s.lines('z.dy', [
      'kernel k(x: dense<f32>[n], c: i32) -> (y: dense<f32>[n]) {',
      '  repeat c { t[i] = x[i] * 2; }',
      '  y[i] = t[i];',
      '}',
    ]);
    await s.fails(
      ['run', 'z.dy', '--input', 'x=@ones', '--param', 'n=3', '--param', 'c=0'],
      'y',
      1,
      /^(--param c|kernel k|z\.dy:\d+:\d+): error DY\d{4}/,
    );
  });
});

describe('help, check, ir', () => {
  test('--help on every command exits 0 and prints usage on stdout', async (s) => {
    for (const args of [
      ['--help'],
      ['check', '--help'],
      ['ir', '--help'],
      ['run', '--help'],
      ['help', 'run'],
      ['help', 'help'],
      ['help'],
    ]) {
      const r = await s.run(args);
      expect(r.status, args.join(' ')).toBe(0);
      expect(r.stdout).toMatch(/^Usage: dype/);
      noStackTrace(r);
      if (args[0] === 'run')
        for (const flag of ['--kernel', '--input', '--out', '--param', '--backend', '--threads', '--repeat', '--json'])
          expect(r.stdout).toContain(flag);
      if (args[0] === 'ir')
        for (const flag of ['--print-ir-after', '--print-ir-after-all', '--kernel']) expect(r.stdout).toContain(flag);
    }
  });

  test('dype check prints nothing and exits 0 on every example', async (s) => {
    const files = readdirSync(EXAMPLES).filter((f) => f.endsWith('.dy'));
    for (const f of ['attention.dy', 'gcn.dy', 'pagerank.dy', 'sssp.dy']) expect(files).toContain(f);
    const results = await Promise.all(files.map((f) => s.run(['check', join(EXAMPLES, f)])));
    files.forEach((f, i) => {
      const r = results[i]!;
      expect({ file: f, status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({
        file: f,
        status: 0,
        stdout: '',
        stderr: '',
      });
    });
  });

  test('a warning (DY2040, x[k] typed for x[j]) is printed with its span by check and run; both exit 0', async (s) => {
    s.goodA();
    s.lines('typo.dy', [
      'kernel spmv(A: csr<f32>[m, n], x: dense<f32>[n]) -> (y: dense<f32>[m]) {',
      '  y[i] = A[i, j] * x[k];',
      '}',
    ]);
    const warning = [
      'typo.dy:2:10: warning DY2040: indices j and k are each summed over but occur in only one operand (j in A[i, j], k in x[k]), so each operand is summed on its own before the product; did you mean one index that the operands share? (write the sums explicitly if this is meant)',
      '    y[i] = A[i, j] * x[k];',
      '           ^~~~~~~~~~~~~~',
      '',
    ].join('\n');
    const c = await s.run(['check', 'typo.dy']);
    expect({ status: c.status, stdout: c.stdout, stderr: c.stderr }).toEqual({
      status: 0,
      stdout: '',
      stderr: warning,
    });
    const r = await s.run([
      'run',
      'typo.dy',
      '--input',
      'A=A.mtx',
      '--input',
      'x=@ones',
      '--threads',
      '1',
      '--out',
      'y=y.mtx',
    ]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe(warning);
    // What the program says: (row sums of A) times (the sum of x) = [1, 2, 7] * 3.
    expect(readFileSync(join(s.dir, 'y.mtx'), 'utf8').split('\n').slice(-4)).toEqual(['3', '6', '21', '']);
  });

  test('dype ir --print-ir-after-all shows one section per stage; no flag prints the last', async (s) => {
    const [all, plain, one] = await Promise.all([
      s.run(['ir', example('attention.dy'), '--print-ir-after-all']),
      s.run(['ir', example('attention.dy')]),
      s.run(['ir', example('attention.dy'), '--print-ir-after=classify']),
    ]);
    expect(all.status, all.stderr).toBe(0);
    const sections = [...all.stdout.matchAll(/^\/\/ ----- IR after (\S+) -----$/gm)].map((m) => m[1]!);
    // The stages of the contract, in order (later passes may follow).
    expect(sections.slice(0, 4)).toEqual(['lower', 'infer-types', 'classify', 'fuse-elementwise']);
    expect(new Set(sections).size).toBe(sections.length);
    const bodies = all.stdout.split(/^\/\/ ----- IR after \S+ -----\n/m).slice(1);
    expect(bodies).toHaveLength(sections.length);
    for (const b of bodies) expect(b).toMatch(/^kernel @attention\(/);
    // Without a flag: the IR after the whole pipeline, i.e. the last section.
    expect(plain.status).toBe(0);
    expect(plain.stdout).toBe(bodies[bodies.length - 1]);
    // One named stage: that section only, the same text as in the full dump.
    expect(one.status, one.stderr).toBe(0);
    expect([...one.stdout.matchAll(/IR after (\S+) -----/g)].map((m) => m[1])).toEqual(['classify']);
    expect(one.stdout.split(/-----\n/)[1]!.trim()).toBe(bodies[sections.indexOf('classify')]!.trim());
  });

  // Regression (was DY5001 from parsing the loop IR as graph IR): --kernel picks from the module, in every dump.
  test('dype ir --kernel with the loop IR prints that kernel only', async (s) => {
    const two = join(s.dir, 'two.dy');
    const spmv = readFileSync(SPMV, 'utf8');
    writeFileSync(two, `${spmv}\n${spmv.replace('kernel spmv', 'kernel other')}`);
    const r = await s.run(['ir', two, '--kernel', 'other', '--print-ir-after=lower-kernels,classify']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^loops @other \{/m);
    expect(r.stdout).toMatch(/^kernel @other\(/m);
    expect(r.stdout).not.toMatch(/@spmv/);
  });

  test('--print-ir-after=nosuch exits 1 with DY5003', async (s) => {
    const r = await s.run(['ir', example('attention.dy'), '--print-ir-after=nosuch']);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    noStackTrace(r);
    expect(r.stderr).toMatch(
      /error DY5003: unknown pass 'nosuch': expected one of lower, infer-types, classify, fuse-elementwise/,
    );
  });

  // Regression: a registered pass this command does not run (build-guards; partition without --input) was refused
  // as unknown by a message that listed it among the expected names.
  test('--print-ir-after=build-guards names it as outside the pipeline and lists only what ir dumps', async (s) => {
    const r = await s.run(['ir', example('attention.dy'), '--print-ir-after=build-guards']);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      /DY5003: pass 'build-guards' does not run in this pipeline: expected one of lower, infer-types, classify, fuse-elementwise, annotate-cost, lower-kernels\n/,
    );
    const p = await s.run(['ir', example('attention.dy'), '--print-ir-after=partition']);
    expect(p.status).toBe(1);
    expect(p.stderr).toMatch(
      /DY5003: pass 'partition' does not run in this pipeline \(it runs when --input gives the data\)/,
    );
  });

  // Regression (was exit 0/70 or a wrong message): the DY5003 diagnostic (span file '<command line>') is printed with a
  // caret line quoting line 1 of the *program* (the attention.dy comment):
  // cli/program.ts optimise() attaches the program source to every pipeline
  // diagnostic, whatever file its span names.
  test('DY5003 does not quote program text under <command line>', async (s) => {
    const r = await s.run(['ir', example('attention.dy'), '--print-ir-after=nosuch']);
    expect(r.stderr).toMatch(/DY5003/);
    expect(r.stderr).not.toContain('Graph attention');
  });

  test('dype ir --kernel with an unknown kernel exits 1 with DY2030', async (s) => {
    const r = await s.run(['ir', example('attention.dy'), '--kernel', 'nosuch']);
    expect(r.status).toBe(1);
    noStackTrace(r);
    expect(r.stderr).toMatch(/attention\.dy:1:1: error DY2030: no kernel 'nosuch'/);
  });

  // Regression: a file of several kernels run without --kernel was a plain message with no code.
  for (const cmd of ['run', 'plan'])
    test(`dype ${cmd} of a file of several kernels without --kernel is DY2030`, async (s) => {
      const r = await s.run([cmd, join(import.meta.dirname, '..', 'diagnostics', 'ok.dy'), '--input', 'A=@random']);
      expect(r.status).toBe(1);
      noStackTrace(r);
      expect(r.stderr).toMatch(
        /ok\.dy:1:1: error DY2030: this file defines several kernels \(scale, loop, masks\): choose one with --kernel NAME/,
      );
    });
});

describe('dype run: --json, --repeat, --out', () => {
  test('--json prints one JSON object with the contract keys', async (s) => {
    s.goodA();
    const r = await s.run(['run', SPMV, '--input', 'A=A.mtx', '--input', 'x=@ones', '--json', '--out', 'y=y.mtx']);
    expect(r.status, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as Record<string, unknown>;
    for (const k of ['kernel', 'backend', 'threads', 'outputs', 'timing', 'features', 'partition', 'predicted'])
      expect(j).toHaveProperty(k);
    expect(j.kernel).toBe('spmv');
    // The default backend, auto: native where a C compiler exists, else wasm with a note saying so.
    expect(j.backend === 'native' || (j.backend === 'wasm' && typeof j.backend_note === 'string')).toBe(true);
    expect(typeof j.threads).toBe('number');
    expect(j.outputs).toEqual({ y: 'y.mtx' });
    const t = j.timing as Record<string, unknown>;
    expect(Object.keys(t)).toEqual(expect.arrayContaining(['runs', 'median_ms', 'min_ms']));
    expect(t.runs).toBe(1);
    expect(typeof t.median_ms).toBe('number');
    expect(typeof t.min_ms).toBe('number');
    expect(t.min_ms as number).toBeLessThanOrEqual(t.median_ms as number);
    for (const k of ['features', 'partition', 'predicted']) expect(typeof j[k], k).toBe('object');
    expect(j.features).toHaveProperty('A');
    expect(existsSync(join(s.dir, 'y.mtx'))).toBe(true);
  });

  test('--repeat 3 reports runs 3', async (s) => {
    s.goodA();
    const r = await s.run(['run', SPMV, '--input', 'A=A.mtx', '--input', 'x=@ones', '--json', '--repeat', '3']);
    expect(r.status, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as { timing: { runs: number; median_ms: number; min_ms: number } };
    expect(j.timing.runs).toBe(3);
    expect(j.timing.min_ms).toBeLessThanOrEqual(j.timing.median_ms);
  });

  test('an output written with --out parses back as Matrix Market with the right shape', async (s) => {
    s.goodA();
    const [r, g] = await Promise.all([
      s.run(['run', SPMV, '--input', 'A=A.mtx', '--input', 'x=@ones', '--out', 'y=y.mtx']),
      s.run([
        'run',
        GCN,
        '--input',
        'A=A.mtx',
        '--input',
        'X=@random:1',
        '--input',
        'W1=@random:2',
        '--input',
        'W2=@random:3',
        '--param',
        'f=4',
        '--param',
        'h=5',
        '--param',
        'c=2',
        '--out',
        'Y=Y.mtx',
      ]),
    ]);
    expect(r.status, r.stderr).toBe(0);
    expect(g.status, g.stderr).toBe(0);
    expect(s.list()).toEqual(['A.mtx', 'Y.mtx', 'y.mtx']);
    const y = parseMatrixMarket(readFileSync(join(s.dir, 'y.mtx')), 'y.mtx');
    expect([y.kind, y.rows, y.cols]).toEqual(['array', 3, 1]);
    // A = [[1,0,0],[0,2,0],[3,0,4]] times ones.
    if (y.kind === 'array') expect([...y.data]).toEqual([1, 2, 7]);
    const Y = parseMatrixMarket(readFileSync(join(s.dir, 'Y.mtx')), 'Y.mtx');
    expect([Y.kind, Y.rows, Y.cols]).toEqual(['array', 3, 2]);
  });
});
