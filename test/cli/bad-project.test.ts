/**
 * The bad-input contract of docs/CLI.md for the program file and for the
 * projects `dype compile` and `dype hls` write, on the built command
 * (dist/cli/main.js) in a child process:
 *
 * - a program that cannot be read (missing, a directory) is DY3010 naming
 *   it, exit 1, in every command that reads one;
 * - a project that cannot be written where it goes (a directory where a file
 *   goes, a file where a folder goes) is DY3017 naming that path, and the
 *   -o directory holds exactly what it held before: no partial project, and
 *   no file that was there is lost (project-writer.ts's rollback, checked
 *   directly as well);
 * - `dype compile --system` is checked as `dype plan` checks it (DY3049,
 *   DY3010, DY3021) before any work, whichever targets are built.
 *
 * Each test works in a fresh temporary directory used as the working
 * directory, so paths in messages are short relative paths.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeProject } from '../../cli/project-writer.js';
import { cleanup, example, freshDir, REPO_ROOT, runCliAsync, stackFrames, type CliResult } from '../helpers/cli.js';

const SPMV = example('spmv.dy');

/** Every entry under `dir`: folders as 'path/', files as 'path = content'; sorted. */
function tree(dir: string, base = ''): string[] {
  return readdirSync(join(dir, base), { withFileTypes: true })
    .flatMap((e) => {
      const p = base === '' ? e.name : `${base}/${e.name}`;
      return e.isDirectory() ? [`${p}/`, ...tree(dir, p)] : [`${p} = ${readFileSync(join(dir, p), 'utf8')}`];
    })
    .sort();
}

class Sandbox {
  readonly dir = freshDir('dype-bad-project-');

  /** Makes the folders (relative to the sandbox). */
  mkdir(...paths: string[]): void {
    for (const p of paths) mkdirSync(join(this.dir, p), { recursive: true });
  }

  write(path: string, text: string): void {
    writeFileSync(join(this.dir, path), text);
  }

  tree(): string[] {
    return tree(this.dir);
  }

  run(args: readonly string[]): Promise<CliResult> {
    return runCliAsync(args, { cwd: this.dir });
  }

  /**
   * Runs `args` and checks: exit 1, no stack trace, exactly one stderr line
   * matching `want`, nothing on stdout, and the sandbox (the -o directory
   * with it) holding exactly what it held before, contents included.
   */
  async fails(args: readonly string[], want: RegExp | string): Promise<CliResult> {
    const before = this.tree();
    const r = await this.run(args);
    expect(r.status, `stderr: ${r.stderr}`).toBe(1);
    noStackTrace(r);
    expect(r.stdout).toBe('');
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    expect(lines, r.stderr).toHaveLength(1);
    if (typeof want === 'string') expect(lines[0]).toBe(want);
    else expect(lines[0]).toMatch(want);
    expect(this.tree()).toEqual(before);
    return r;
  }

  dispose(): void {
    cleanup(this.dir);
  }
}

type Body = (s: Sandbox) => Promise<void>;
/** A test in its own sandbox; tests run concurrently since each spawns processes and waits. */
const test = (name: string, body: Body): void =>
  void it.concurrent(name, async () => {
    const s = new Sandbox();
    try {
      await body(s);
    } finally {
      s.dispose();
    }
  });

function noStackTrace(r: CliResult): void {
  const all = r.stdout + r.stderr;
  expect(stackFrames(all), all).toEqual([]);
  expect(all).not.toMatch(/internal error/i);
  expect(all).not.toMatch(/This is a bug in dype/);
}

/** Every command that reads a program, with what else it needs to get that far. */
const READERS: readonly (readonly string[])[] = [
  ['check'],
  ['ir'],
  ['plan'],
  ['run', '--input', 'x=@ones'],
  ['compile', '-o', 'out'],
  ['hls', '-o', 'out'],
];

describe('a program that cannot be read is DY3010 naming it (exit 1)', () => {
  for (const [cmd, ...rest] of READERS) {
    test(`dype ${cmd}: a missing file and a directory`, async (s) => {
      await s.fails(
        [cmd!, 'nope.dy', ...rest],
        'nope.dy: error DY3010: cannot read the program: no such file or directory',
      );
      s.mkdir('prog.dy');
      await s.fails([cmd!, 'prog.dy', ...rest], 'prog.dy: error DY3010: cannot read the program: it is a directory');
    });
  }
});

describe('compile and hls write the project all or nothing', () => {
  test('compile: project.json is a directory', async (s) => {
    s.mkdir('proj/project.json');
    await s.fails(
      ['compile', SPMV, '-o', 'proj'],
      'proj/project.json: error DY3017: cannot write the project: expected a file here, found a directory; remove it or choose another -o',
    );
  });

  test('compile: hls/Makefile is a directory, beside files that were there', async (s) => {
    s.mkdir('proj/hls/Makefile', 'proj/wasm');
    s.write('proj/keep.txt', 'mine');
    // A file the project would replace stays as it was when the project is not written.
    s.write('proj/wasm/spmv.wasm', 'old');
    await s.fails(
      ['compile', SPMV, '-o', 'proj'],
      /^proj\/hls\/Makefile: error DY3017: cannot write the project: expected a file here, found a directory/,
    );
  });

  test('compile: a file where the project needs a folder', async (s) => {
    s.mkdir('proj');
    s.write('proj/project.json', '{"stale": true}\n');
    s.write('proj/wasm', 'a file');
    await s.fails(
      ['compile', SPMV, '-o', 'proj', '--targets', 'wasm'],
      /^proj\/wasm: error DY3017: cannot write the project: expected a directory here \(the project writes proj\/wasm\/spmv\.[a-z.]+\), found a file/,
    );
  });

  test('hls: Makefile is a directory', async (s) => {
    s.mkdir('hl/ex/Makefile');
    await s.fails(
      ['hls', SPMV, '-o', 'hl/ex'],
      'hl/ex/Makefile: error DY3017: cannot write the project: expected a file here, found a directory; remove it or choose another -o',
    );
  });

  test('a project that can be written still replaces the files it writes and keeps the others', async (s) => {
    s.mkdir('proj/wasm');
    s.write('proj/keep.txt', 'mine');
    s.write('proj/project.json', 'old');
    const r = await s.run(['compile', SPMV, '-o', 'proj', '--targets', 'wasm']);
    expect(r.status, r.stderr).toBe(0);
    const after = s.tree();
    expect(after).toContain('proj/keep.txt = mine');
    expect(after).not.toContain('proj/project.json = old');
    expect(after.some((l) => l.startsWith('proj/wasm/spmv.wasm = '))).toBe(true);
    expect(after.some((l) => l.includes('.dype-staging'))).toBe(false);
  });
});

// Regression: compiling another program (or fewer targets) into a project directory left the earlier program's
// plan.json, report and kernels, and run --project then took its system and partitions from that plan.json.
describe('a recompile into a project directory leaves one project', () => {
  const PAGERANK = example('pagerank.dy');
  /** pagerank on a 2 x 2 matrix through the project in `dir`, with more arguments. */
  const pagerankOn = (s: Sandbox, dir: string, ...more: string[]): Promise<CliResult> => {
    s.write('A.mtx', '%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 0.5\n2 2 0.5\n');
    return s.run([
      'run',
      PAGERANK,
      '--project',
      dir,
      '--input',
      'A=A.mtx',
      '--input',
      'r0=@ones',
      '--param',
      'd=0.85',
      ...more,
    ]);
  };
  test("the earlier project's files the new one does not write go; the user's files stay", async (s) => {
    const first = await s.run(['compile', SPMV, '-o', 'proj', '--targets', 'wasm,cuda']);
    expect(first.status, first.stderr).toBe(0);
    s.write('proj/notes.txt', 'mine');
    s.write('proj/cuda/mine.cu', 'mine too');
    const second = await s.run(['compile', PAGERANK, '-o', 'proj', '--targets', 'wasm']);
    expect(second.status, second.stderr).toBe(0);
    const files = s
      .tree()
      .filter((l) => !l.endsWith('/'))
      .map((l) => l.split(' = ')[0]!);
    const listed = (JSON.parse(readFileSync(join(s.dir, 'proj', 'project.json'), 'utf8')) as { files: string[] }).files;
    expect(files.filter((f) => !['proj/notes.txt', 'proj/cuda/mine.cu'].includes(f))).toEqual(
      listed.map((f) => `proj/${f}`).sort(),
    );
    expect(files).toContain('proj/notes.txt');
    expect(files).toContain('proj/cuda/mine.cu');
    expect(files.some((f) => f.includes('spmv'))).toBe(false);
    expect(listed).toContain('wasm/pagerank.wasm');
  });

  // Regression (review): a crafted or hand-edited list reached outside the project (an internal error), deleted
  // through a linked folder, or, written unnormalised, deleted the fresh project's own files.
  test('a files list is trusted only for plain paths through real folders inside the project', async (s) => {
    const first = await s.run(['compile', SPMV, '-o', 'p', '--targets', 'wasm']);
    expect(first.status, first.stderr).toBe(0);
    s.mkdir('outside');
    s.write('outside/data.mtx', 'keep');
    s.write('victim.txt', 'keep');
    symlinkSync(join(s.dir, 'outside'), join(s.dir, 'p', 'link'));
    const pj = join(s.dir, 'p', 'project.json');
    const info = JSON.parse(readFileSync(pj, 'utf8')) as { files: string[] };
    info.files.push('../victim.txt', join(s.dir, 'victim.txt'), 'link/data.mtx', './project.json', 'wasm//spmv.wasm');
    writeFileSync(pj, JSON.stringify(info));
    const again = await s.run(['compile', SPMV, '-o', 'p', '--targets', 'wasm']);
    expect(again.status, again.stderr).toBe(0);
    expect(readFileSync(join(s.dir, 'victim.txt'), 'utf8')).toBe('keep');
    expect(readFileSync(join(s.dir, 'outside', 'data.mtx'), 'utf8')).toBe('keep');
    expect(existsSync(join(s.dir, 'p', 'project.json'))).toBe(true);
    expect(existsSync(join(s.dir, 'p', 'wasm', 'spmv.wasm'))).toBe(true);
  });

  // Regression (review): project.json was read before the destinations were checked, and a named pipe there hung.
  test('a named pipe where project.json goes is refused, not read', async (s) => {
    s.mkdir('q');
    if (spawnSync('mkfifo', [join(s.dir, 'q', 'project.json')]).status !== 0) return;
    const r = await runCliAsync(['compile', SPMV, '-o', 'q', '--targets', 'wasm'], { cwd: s.dir, timeoutMs: 30_000 });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/q\/project\.json: error DY3017: /);
  });

  // Regression (review): run --project binds its inputs in the runtime, which checked no values: an i32 array of
  // 3000000000 wrapped.
  test('run --project refuses an array value its dtype cannot hold', async (s) => {
    s.write('i32.dy', 'kernel k(A: dense<i32>[n]) -> (y: dense<i32>[n]) {\n  y[i] = A[i] + A[i];\n}\n');
    s.write('big.mtx', '%%MatrixMarket matrix array integer general\n2 1\n3000000000\n5\n');
    const c = await s.run(['compile', 'i32.dy', '-o', 'pi', '--targets', 'wasm']);
    expect(c.status, c.stderr).toBe(0);
    const r = await s.run(['run', 'i32.dy', '--project', 'pi', '--input', 'A=big.mtx', '--out', 'y=y.mtx']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /^big\.mtx: error DY3008: 'A' is i32 but holds the value 3000000000 \(outside i32's range/m,
    );
    expect(existsSync(join(s.dir, 'y.mtx'))).toBe(false);
  });

  test("a plan.json of another program is DY3044, not the project's plan", async (s) => {
    const a = await s.run([
      'compile',
      SPMV,
      '-o',
      'a',
      '--targets',
      'wasm,runtime',
      '--profile',
      `A=${join(REPO_ROOT, '..', 'shared', 'data', 'matrices', 'cage8.mtx')}`,
    ]);
    expect(a.status, a.stderr).toBe(0);
    const b = await s.run(['compile', PAGERANK, '-o', 'b', '--targets', 'wasm']);
    expect(b.status, b.stderr).toBe(0);
    s.write('b/plan.json', readFileSync(join(s.dir, 'a', 'plan.json'), 'utf8'));
    const r = await pagerankOn(s, 'b');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/b\/plan\.json: error DY3044: is the plan of another program or version/);
  });

  test('a project without the target a stage needs says to recompile with it, not to build', async (s) => {
    const b = await s.run(['compile', PAGERANK, '-o', 'b', '--targets', 'wasm']);
    expect(b.status, b.stderr).toBe(0);
    const r = await pagerankOn(s, 'b', '--partition', 'gpu:op0-op2');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /b\/project\.json: error DY3043: the project was compiled without the cuda target \(targets: wasm\), so nothing in it runs gpu stages: recompile with --targets wasm,cuda/,
    );
    // Regression: a project of another program was called one of 'another version' of this file.
    const other = await s.run(['run', SPMV, '--project', 'b', '--input', 'A=A.mtx', '--input', 'x=@ones']);
    expect(other.status).toBe(1);
    expect(other.stderr).toMatch(/b\/project\.json: error DY3044: was compiled from another program, pagerank\.dy \(/);
  });
});

describe('writeProject undoes a failure met while moving files into place', () => {
  test('files moved in are removed, files replaced are put back, folders made are removed', async (s) => {
    s.mkdir('out/old');
    s.write('out/keep.txt', 'mine');
    s.write('out/old/replaced.txt', 'before');
    const before = s.tree();
    const out = join(s.dir, 'out');
    // 'a' is written as a file, then 'a/b' needs it to be a folder: the checks before writing cannot see
    // that (neither exists), so the failure comes after 'old/replaced.txt', 'new/x.txt' and 'a' were moved.
    expect(() =>
      writeProject(
        out,
        new Map([
          ['old/replaced.txt', 'after'],
          ['new/deep/x.txt', 'x'],
          ['a', 'a file'],
          ['a/b', 'b'],
        ]),
      ),
    ).toThrow(/out\/a\/b: error DY3017: cannot write the project: a component of the path is not a directory$/);
    expect(s.tree()).toEqual(before);
  });

  test("an earlier project's stale files are put back when the write fails", async (s) => {
    s.mkdir('out/gone');
    s.write('out/gone/stale.txt', 'old project');
    s.write('out/x', 'a file, not a folder');
    const before = s.tree();
    // The second stale path cannot be looked at (x is a file): the failure comes after the first was moved aside.
    expect(() => writeProject(join(s.dir, 'out'), new Map([['a', 'new']]), ['gone/stale.txt', 'x/y'])).toThrow(
      /out\/x\/y: error DY3017: cannot write the project: a component of the path is not a directory$/,
    );
    expect(s.tree()).toEqual(before);
    writeProject(join(s.dir, 'out'), new Map([['a', 'new']]), ['gone/stale.txt']);
    expect(s.tree()).toEqual(['out/', 'out/a = new', 'out/x = a file, not a folder']);
  });

  test('an output directory the failed call created is removed', async (s) => {
    const out = join(s.dir, 'new', 'proj');
    expect(() =>
      writeProject(
        out,
        new Map([
          ['a', 'a file'],
          ['a/b', 'b'],
        ]),
      ),
    ).toThrow(/error DY3017/);
    expect(s.tree()).toEqual([]);
  });
});

describe('dype compile checks --system as dype plan does, before any work', () => {
  /** plan's error for this --system, then compile's (without --profile: no target reads the system). */
  async function same(s: Sandbox, system: string, want: RegExp): Promise<void> {
    const plan = await s.run(['plan', SPMV, '--system', system]);
    expect(plan.status, plan.stderr).toBe(1);
    expect(plan.stderr.trimEnd()).toMatch(want);
    await s.fails(['compile', SPMV, '-o', 'c9', '--system', system], plan.stderr.trimEnd());
    await s.fails(['compile', SPMV, '-o', 'c9', '--targets', 'wasm', '--system', system], plan.stderr.trimEnd());
  }

  test('an unknown preset is DY3049', async (s) => {
    await same(s, 'nope', /^--system nope: error DY3049: no system file or preset named 'nope'/);
  });

  test('a directory is DY3010', async (s) => {
    s.mkdir('sys');
    await same(s, 'sys', /^sys: error DY3010: cannot read the file: it is a directory$/);
  });

  test('a missing file is DY3010', async (s) => {
    await same(s, 'sys/none.json', /none\.json: error DY3010: cannot read the file: no such file or directory$/);
  });

  test('a bad value is DY3021', async (s) => {
    const sys = JSON.parse(readFileSync(join(REPO_ROOT, 'systems/paper-1g1f.json'), 'utf8')) as {
      devices: { memBandwidthGBs: number }[];
    };
    sys.devices[0]!.memBandwidthGBs = -20;
    s.write('bad.json', `${JSON.stringify(sys, null, 2)}\n`);
    await same(
      s,
      'bad.json',
      /^bad\.json:\d+: error DY3021: `devices\[0\]\.memBandwidthGBs`: expected a positive number/,
    );
  });
});
