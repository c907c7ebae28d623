/**
 * Output paths and --repeat counts `dype run` cannot take as given, through
 * the built command (dist/cli/main.js) in a child process, by the contract of
 * docs/CLI.md: one DY3017 naming the output (exit 1) and no output file left
 * behind, or a usage error (exit 2).
 *   - the --out results and the --trace timeline are written together, or
 *     none of them (a --trace that cannot be written left the --out files);
 *   - an existing destination that is not a regular file (a named pipe here;
 *     devices and sockets alike) is refused, not replaced by a regular file;
 *   - a symbolic link is written through (its target replaced, the link
 *     kept); a dangling one is refused, as are two names of one file;
 *   - --repeat takes a plain decimal count up to its bound (with or without
 *     --project), and any count up to it reports the minimum and median.
 *
 * Each test works in a fresh temporary directory used as the working
 * directory, so names in messages are short relative paths.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_REPEAT } from '../../cli/defaults.js';
import { outputFlagGiven } from '../../cli/output-path.js';
import { timingOf } from '../../cli/run.js';
import {
  cleanup,
  example,
  freshDir,
  listDir,
  MM_COORD_REAL,
  runCliAsync,
  stackFrames,
  writeLines,
  type CliResult,
} from '../helpers/cli.js';
import { MATRIX_DIR } from '../io/data.js';

const SPMV = example('spmv.dy');
const KARATE = join(MATRIX_DIR, 'karate.mtx');
/** spmv on a 3 x 3 matrix the sandbox writes, on the wasm backend (no C compiler needed). */
const SPMV_ARGS = ['run', SPMV, '--input', 'A=A.mtx', '--input', 'x=@ones', '--backend', 'wasm'];

/** A fresh working directory holding A.mtx (3 x 3) for one test, removed after it. */
class Sandbox {
  readonly dir = freshDir('dype-bad-output-');

  constructor() {
    writeLines(this.dir, 'A.mtx', [MM_COORD_REAL, '3 3 4', '1 1 1.0', '2 2 2.0', '3 1 3.0', '3 3 4.0']);
  }

  path(name: string): string {
    return join(this.dir, name);
  }

  list(): string[] {
    return listDir(this.dir);
  }

  run(args: readonly string[]): Promise<CliResult> {
    return runCliAsync(args, { cwd: this.dir });
  }

  /** A named pipe `name`; false where mkfifo is not available. */
  fifo(name: string): boolean {
    const r = spawnSync('mkfifo', [this.path(name)]);
    return r.status === 0 && lstatSync(this.path(name)).isFIFO();
  }
}

type Body = (s: Sandbox, skip: () => void) => Promise<void>;
/** A test in its own sandbox; tests run concurrently since each spawns processes and waits. */
const test = (name: string, body: Body): void =>
  void it.concurrent(name, async (ctx) => {
    const s = new Sandbox();
    try {
      await body(s, () => ctx.skip());
    } finally {
      cleanup(s.dir);
    }
  });

/** Exit `exit`, stderr one line matching `message`, nothing on stdout, no stack trace, the directory as it was. */
function refused(r: CliResult, exit: 1 | 2, message: RegExp, s: Sandbox, before: readonly string[]): void {
  const all = r.stdout + r.stderr;
  expect(r.status, all).toBe(exit);
  expect(stackFrames(all), all).toEqual([]);
  expect(all).not.toMatch(/internal error|This is a bug in dype/i);
  expect(r.stdout).toBe('');
  expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(r.stderr).toMatch(message);
  expect(s.list()).toEqual(before);
}

describe('--out and --trace are written together, or neither', () => {
  test("a --trace into a missing directory leaves no --out behind (the audit's case, karate)", async (s, skip) => {
    if (!existsSync(KARATE)) return skip();
    const before = s.list();
    const r = await s.run([
      'run',
      SPMV,
      '--input',
      `A=${KARATE}`,
      '--input',
      'x=@ones',
      '--backend',
      'wasm',
      '--out',
      'y=y.mtx',
      '--trace',
      'nodir/t.json',
    ]);
    refused(
      r,
      1,
      /^--trace nodir\/t\.json: error DY3017: cannot write the output: no such file or directory$/m,
      s,
      before,
    );
    expect(existsSync(s.path('y.mtx'))).toBe(false);
  });

  test('a --trace that is a directory leaves no --out behind', async (s) => {
    mkdirSync(s.path('sub'));
    const before = s.list();
    const r = await s.run([...SPMV_ARGS, '--out', 'y=y.mtx', '--trace', 'sub']);
    refused(r, 1, /^--trace sub: error DY3017: cannot write the output: it is a directory$/m, s, before);
    expect(listDir(s.path('sub'))).toEqual([]);
  });

  test('--trace naming the --out file is a usage error', async (s) => {
    const before = s.list();
    const r = await s.run([...SPMV_ARGS, '--out', 'y=y.mtx', '--trace', './y.mtx']);
    refused(r, 2, /--trace and --out y name the same file '\.\/y\.mtx'/, s, before);
  });

  // Regression (was exit 0 with A.mtx replaced by the trace's JSON).
  test('--trace naming an --input file is a usage error that leaves the input as it was', async (s) => {
    const before = s.list();
    const A = readFileSync(s.path('A.mtx'), 'utf8');
    const r = await s.run([...SPMV_ARGS, '--trace', 'A.mtx']);
    refused(r, 2, /--trace and --input A name the same file 'A\.mtx': the trace would replace the input/, s, before);
    expect(readFileSync(s.path('A.mtx'), 'utf8')).toBe(A);
  });

  test('both written when both can be', async (s) => {
    const r = await s.run([...SPMV_ARGS, '--out', 'y=y.mtx', '--trace', 't.json']);
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(s.path('y.mtx'), 'utf8')).toMatch(/^%%MatrixMarket matrix array real general\n/);
    expect(() => JSON.parse(readFileSync(s.path('t.json'), 'utf8')) as unknown).not.toThrow();
    expect(s.list()).toEqual(['A.mtx', 't.json', 'y.mtx']);
  });
});

describe('an existing destination that is not a regular file is refused, not replaced', () => {
  test('--out onto a named pipe', async (s, skip) => {
    if (!s.fifo('fifo')) return skip();
    const before = s.list();
    const r = await s.run([...SPMV_ARGS, '--out', 'y=fifo']);
    refused(
      r,
      1,
      /^fifo: error DY3017: cannot write the output: it is a named pipe \(FIFO\), not a regular file$/m,
      s,
      before,
    );
    expect(lstatSync(s.path('fifo')).isFIFO()).toBe(true);
  });

  test('--trace onto a named pipe leaves no --out behind', async (s, skip) => {
    if (!s.fifo('fifo')) return skip();
    const before = s.list();
    const r = await s.run([...SPMV_ARGS, '--out', 'y=y.mtx', '--trace', 'fifo']);
    refused(r, 1, /^--trace fifo: error DY3017: cannot write the output: it is a named pipe \(FIFO\)/m, s, before);
    expect(lstatSync(s.path('fifo')).isFIFO()).toBe(true);
  });

  test('--out through a symbolic link to a named pipe', async (s, skip) => {
    if (!s.fifo('fifo')) return skip();
    symlinkSync('fifo', s.path('link.mtx'));
    const before = s.list();
    const r = await s.run([...SPMV_ARGS, '--out', 'y=link.mtx']);
    refused(
      r,
      1,
      /^link\.mtx: error DY3017: cannot write the output: it is a symbolic link to .*fifo, a named pipe \(FIFO\), not a regular file$/m,
      s,
      before,
    );
    expect(lstatSync(s.path('fifo')).isFIFO()).toBe(true);
    expect(lstatSync(s.path('link.mtx')).isSymbolicLink()).toBe(true);
  });

  test('calibrate -o onto a named pipe, before timing anything', async (s, skip) => {
    if (!s.fifo('fifo')) return skip();
    const before = s.list();
    const r = await s.run(['calibrate', '--quick', '-o', 'fifo']);
    refused(
      r,
      1,
      /^-o fifo: error DY3017: cannot write the output file: it is a named pipe \(FIFO\), not a regular file$/m,
      s,
      before,
    );
    expect(lstatSync(s.path('fifo')).isFIFO()).toBe(true);
  });

  // Regression: the message named `-o` whatever the user typed.
  test('DY3017 names the output flag as the user spelled it', async (s) => {
    mkdirSync(s.path('sub'));
    const long = await s.run(['calibrate', '--quick', '--output', 'sub']);
    expect(long.status).toBe(1);
    expect(long.stderr).toMatch(/^--output sub: error DY3017: expected a file, found a directory$/m);
    const eq = await s.run(['calibrate', '--quick', '--output=sub']);
    expect(eq.stderr).toMatch(/^--output sub: error DY3017/m);
    const short = await s.run(['calibrate', '--quick', '-o', 'sub']);
    expect(short.stderr).toMatch(/^-o sub: error DY3017/m);
  });

  it('outputFlagGiven: the last spelling given, -o where none is', () => {
    expect(outputFlagGiven(['node', 'main.js', 'compile', 'a.dy', '--output=x'])).toBe('--output');
    expect(outputFlagGiven(['node', 'main.js', 'compile', 'a.dy', '--output', 'x', '-oy'])).toBe('-o');
    expect(outputFlagGiven(['node', 'main.js', 'compile', 'a.dy', '-o', 'x', '--output', 'y'])).toBe('--output');
    expect(outputFlagGiven(['node', 'main.js', 'eval', '--objective', 'energy'])).toBe('-o');
  });
});

describe('symbolic links', () => {
  test('--out through a link to a file in another directory writes the file and keeps the link', async (s) => {
    mkdirSync(s.path('real'));
    writeLines(s.dir, 'real/y.mtx', ['old']);
    symlinkSync(join('real', 'y.mtx'), s.path('link.mtx'));
    const r = await s.run([...SPMV_ARGS, '--out', 'y=link.mtx']);
    expect(r.status, r.stderr).toBe(0);
    expect(lstatSync(s.path('link.mtx')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(s.path('link.mtx'))).toBe(join('real', 'y.mtx'));
    expect(readFileSync(s.path('real/y.mtx'), 'utf8')).toMatch(/^%%MatrixMarket matrix array real general\n/);
    // No temporary file left in either directory.
    expect(s.list()).toEqual(['A.mtx', 'link.mtx', 'real']);
    expect(listDir(s.path('real'))).toEqual(['y.mtx']);
  });

  test('--out onto a dangling link is refused and creates nothing', async (s) => {
    symlinkSync('nowhere.mtx', s.path('dangling.mtx'));
    const before = s.list();
    const r = await s.run([...SPMV_ARGS, '--out', 'y=dangling.mtx']);
    refused(
      r,
      1,
      /^dangling\.mtx: error DY3017: cannot write the output: it is a symbolic link to nowhere\.mtx, which does not exist$/m,
      s,
      before,
    );
    expect(readlinkSync(s.path('dangling.mtx'))).toBe('nowhere.mtx');
  });

  test('two --out naming one file through a link: refused, the file untouched', async (s) => {
    writeLines(s.dir, 'two.dy', [
      'kernel k(A: dense<f32>[n]) -> (B: dense<f32>[n], C: dense<f32>[n]) {',
      '  B[i] = A[i];',
      '  C[i] = A[i] * 2;',
      '}',
    ]);
    writeLines(s.dir, 'a.mtx', ['%%MatrixMarket matrix array real general', '3 1', '1', '2', '3']);
    writeLines(s.dir, 'b.mtx', ['precious']);
    symlinkSync('b.mtx', s.path('c.mtx'));
    const before = s.list();
    const r = await s.run([
      'run',
      'two.dy',
      '--input',
      'A=a.mtx',
      '--backend',
      'wasm',
      '--out',
      'B=b.mtx',
      '--out',
      'C=c.mtx',
    ]);
    refused(r, 1, /^c\.mtx: error DY3017: cannot write the output: it is the same file as b\.mtx$/m, s, before);
    expect(readFileSync(s.path('b.mtx'), 'utf8')).toBe('precious\n');
  });
});

describe('--repeat', () => {
  test('only plain decimal counts from 1 to the bound (usage error, exit 2)', async (s) => {
    const before = s.list();
    const bad = ['1e3', '0x10', '10.0', ' 5', '+5', '-1', '0'];
    const rs = await Promise.all(bad.map((n) => s.run([...SPMV_ARGS, '--out', 'y=y.mtx', '--repeat', n])));
    const esc = (t: string): string => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    rs.forEach((r, i) =>
      refused(r, 2, new RegExp(`--repeat expects an integer >= 1, got '${esc(bad[i]!)}'`), s, before),
    );
    const over = await s.run([...SPMV_ARGS, '--out', 'y=y.mtx', '--repeat', String(MAX_REPEAT + 1)]);
    refused(over, 2, new RegExp(`--repeat expects an integer <= ${MAX_REPEAT}, got '${MAX_REPEAT + 1}'`), s, before);
    expect(MAX_REPEAT).toBe(100_000);
  });

  test('--project parses --repeat the same way, before reading the project', async (s) => {
    const before = s.list();
    for (const n of ['1e3', String(MAX_REPEAT + 1)]) {
      const r = await s.run(['run', SPMV, '--project', 'no-such-project', '--repeat', n]);
      refused(r, 2, /--repeat expects an integer (>= 1|<= \d+), got '/, s, before);
    }
  });

  test('the bound itself runs and reports the minimum and median over every run', async (s) => {
    const r = await s.run([...SPMV_ARGS, '--json', '--repeat', String(MAX_REPEAT)]);
    expect(r.status, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as { timing: { runs: number; median_ms: number; min_ms: number } };
    expect(j.timing.runs).toBe(MAX_REPEAT);
    expect(j.timing.min_ms).toBeLessThanOrEqual(j.timing.median_ms);
  });

  it('timingOf takes any number of times (no argument spread) and gives min and median', () => {
    const n = 1_000_001;
    const times = Array.from({ length: n }, (_, i) => n - i);
    expect(timingOf(times)).toEqual({ runs: n, median_ms: 500_001, min_ms: 1 });
    expect(timingOf([4, 1, 3, 2])).toEqual({ runs: 4, median_ms: 2.5, min_ms: 1 });
    expect(timingOf([0.5])).toEqual({ runs: 1, median_ms: 0.5, min_ms: 0.5 });
  });
});

describe('dype run --project: the same rules', () => {
  const root = freshDir('dype-bad-output-project-');
  const project = join(root, 'p');
  let compiled: CliResult | undefined;
  beforeAll(async () => {
    compiled = await runCliAsync(['compile', SPMV, '-o', project, '--targets', 'wasm'], { timeoutMs: 110_000 });
  }, 120_000);
  afterAll(() => cleanup(root));
  const projectArgs = (): string[] => ['run', SPMV, '--project', project, '--input', 'A=A.mtx', '--input', 'x=@ones'];

  test('--out onto a named pipe is refused, not replaced', async (s, skip) => {
    expect(compiled?.status, compiled?.stderr).toBe(0);
    if (!s.fifo('fifo')) return skip();
    const before = s.list();
    const r = await s.run([...projectArgs(), '--out', 'y=fifo']);
    refused(r, 1, /^fifo: error DY3017: cannot write the output: it is a named pipe \(FIFO\)/m, s, before);
    expect(lstatSync(s.path('fifo')).isFIFO()).toBe(true);
  });

  test('a --trace into a missing directory leaves no --out behind', async (s) => {
    expect(compiled?.status, compiled?.stderr).toBe(0);
    const before = s.list();
    const r = await s.run([...projectArgs(), '--out', 'y=y.mtx', '--trace', 'nodir/t.json']);
    refused(
      r,
      1,
      /^(--trace )?nodir\/t\.json: error DY3017: cannot write the output: no such file or directory$/m,
      s,
      before,
    );
  });

  // Regression: records held the runtime's whole features record (format 'csr' among them), which the history's
  // reader refused, so calibrate --history could read no history run --project wrote.
  test('the history run --project --history writes is one calibrate --history refits from', async (s) => {
    expect(compiled?.status, compiled?.stderr).toBe(0);
    const r = await s.run([
      ...projectArgs(),
      '--partition',
      'cpu:op0',
      '--history',
      'h.jsonl',
      '--repeat',
      '3',
      '--threads',
      '2',
    ]);
    expect(r.status, r.stderr).toBe(0);
    const records = readFileSync(s.path('h.jsonl'), 'utf8').trim().split('\n');
    const first = JSON.parse(records[0]!) as { system: string; sparse?: Record<string, unknown>; cold?: boolean };
    expect(first.sparse && Object.values(first.sparse).every((v) => typeof v === 'number')).toBe(true);
    // Each run records the threads the op ran on (3 rows: one, the plan's pick), not the backend's 2.
    expect(r.stdout).toMatch(/threads per op: op0 1\b/);
    expect(records.map((l) => (JSON.parse(l) as { threads?: number }).threads)).toEqual([1, 1, 1, 1]);
    // The warm-up is the op's first run: recorded cold, and left out of the fit; the 3 timed runs are fitted.
    expect(records.map((l) => (JSON.parse(l) as { cold?: boolean }).cold === true)).toEqual([
      true,
      false,
      false,
      false,
    ]);
    const c = await s.run(['calibrate', '--history', 'h.jsonl', '--system', first.system, '--json']);
    expect(c.status, c.stderr).toBe(0);
    const j = JSON.parse(c.stdout) as { records: number; devices: { device: string; runs: number }[] };
    expect(j.records).toBe(records.length);
    expect(j.devices).toEqual([expect.objectContaining({ device: 'cpu', runs: records.length - 1 })]);
  });

  test('--repeat N reports N runs, the minimum at most the median', async (s) => {
    expect(compiled?.status, compiled?.stderr).toBe(0);
    const r = await s.run([...projectArgs(), '--json', '--repeat', '5']);
    expect(r.status, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as { timing: { runs: number; median_ms: number; min_ms: number } };
    expect(j.timing.runs).toBe(5);
    expect(j.timing.min_ms).toBeLessThanOrEqual(j.timing.median_ms);
  });
});
